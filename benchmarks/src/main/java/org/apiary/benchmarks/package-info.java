/**
 * Benchmark workloads and the load generator (paper section 7). Not implemented yet: see issue 5.
 */
package org.apiary.benchmarks;

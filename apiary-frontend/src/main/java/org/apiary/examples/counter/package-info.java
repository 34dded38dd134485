/**
 * The counter application (one function that increments a counter) that benchmarks and the quick start use. Not an
 * API: a sample to read, changed without notice.
 */
package org.apiary.examples.counter;

/**
 * An example application (accounts, deposits, transfers, a payroll fan-out) that the demo and the documentation use.
 * Not an API: a sample to read, changed without notice.
 */
package org.apiary.examples.bank;

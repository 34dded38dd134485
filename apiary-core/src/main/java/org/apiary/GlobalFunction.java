package org.apiary;

/**
 * A function that may read and write any data, on any partition, and write replicated tables. It runs as a
 * multi-partition transaction, which coordinates every partition: prefer {@link LocalFunction} where the data
 * allows.
 */
public abstract class GlobalFunction extends ApiaryFunction {
  /** For subclasses. */
  protected GlobalFunction() {}
}

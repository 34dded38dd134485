package org.apiary;

/**
 * A function that runs on one partition: every partitioned table it touches is reached through that table's
 * partition column, equal to this execution's {@link #partitionKey()}. Local functions need no coordination
 * between partitions and are much faster than global ones; they may read (not write) replicated tables.
 *
 * <p>The type argument is the partition key's Java type and must match the partition column:
 * {@code Long} for BIGINT, {@code Integer} for INTEGER, {@code Short} for SMALLINT, {@code Byte} for TINYINT,
 * {@code String} for VARCHAR and {@code byte[]} for VARBINARY. Apiary checks it at registration.
 *
 * @param <K> the partition key type
 */
public abstract class LocalFunction<K> extends ApiaryFunction {
  /** For subclasses. */
  protected LocalFunction() {}

  /** The partition key this execution runs with. */
  @SuppressWarnings("unchecked")
  protected final K partitionKey() {
    return (K) currentPartitionKey();
  }
}

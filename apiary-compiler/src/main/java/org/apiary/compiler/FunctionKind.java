package org.apiary.compiler;

/** Whether a function runs on one partition or may touch any data. */
public enum FunctionKind {
  /** One partition, chosen by a partition key: a single-partition VoltDB procedure. */
  LOCAL,
  /** Any data: a multi-partition VoltDB procedure. */
  GLOBAL
}

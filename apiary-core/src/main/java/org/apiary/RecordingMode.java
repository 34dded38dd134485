package org.apiary;

/**
 * Which functions of a graph record their outputs in the database, in the same transaction as the function, so a
 * re-executed graph (after a frontend or client failure) replays them instead of running them again.
 */
public enum RecordingMode {
  /**
   * The paper's Algorithm 1 (the default): every function that writes, and every read-only function with disjoint
   * paths to two recorded functions, or to a recorded function and the sink. Exactly-once at the lowest cost.
   */
  SELECTIVE,
  /** Record nothing. A graph retried after a failure may apply a write twice. For measurement only. */
  NONE,
  /** Record every function. Exactly-once, at the cost the selective analysis avoids. For measurement only. */
  NAIVE
}

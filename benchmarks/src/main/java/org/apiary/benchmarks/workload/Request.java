package org.apiary.benchmarks.workload;

/**
 * One operation a load generator sends: the graph (for Apiary) or frontend method (for the RPC baseline) to run,
 * the partition key and the arguments.
 *
 * @param operation index of the operation in {@link Workload#operations()}, for per-operation latency
 */
public record Request(int operation, String graph, Object key, Object... args) {}

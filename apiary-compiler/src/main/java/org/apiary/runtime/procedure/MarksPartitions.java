package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * A multi-partition procedure that, in a journaled cluster, marks its place in every partition's journal: its last
 * batch also runs {@link org.apiary.runtime.SystemSchema#PARTITION_MARK_SQL}, whose function appends a mark to the
 * journal of every node holding a partition, while that partition's site is blocked in the transaction (see
 * {@link JournaledProcedure}). Without the marks a recovery could not tell where, among a partition's own
 * transactions, a multi-partition one ran. VoltDB plans a procedure's statements from the fields of its class and its
 * superclasses, so the statement is a field of each implementing class, created by a migration after the table
 * and function it uses exist.
 */
public interface MarksPartitions {
  /** The procedure's {@code PARTITION_MARK_SQL} statement. */
  SQLStmt partitionMark();
}

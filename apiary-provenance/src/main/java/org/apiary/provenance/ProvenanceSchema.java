package org.apiary.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The provenance tables (paper section 6.1) and how they are named.
 *
 * <ul>
 *   <li>{@value #FUNCTION_INVOCATIONS}{@code (event_time, exec_id, tx_id, exec_seq, partition_id, function_name,
 *       graph_id, execution_id, partition_key, caller, latency_us, purpose, caller_roles, mode)}: one row per committed
 *       function execution (workflow provenance), keyed by {@code exec_id}; {@code purpose} is the data-use purpose
 *       the graph's caller stated and {@code caller_roles} the caller's roles when it called (sorted,
 *       comma-separated), both last, so a sink created before them gains them by {@code ALTER TABLE ... ADD
 *       COLUMN};</li>
 *   <li>{@code mode}, the last column of {@value #FUNCTION_INVOCATIONS}: {@value #MODE_RAN} for an execution that
 *       ran the function, {@value #MODE_RECORDED} for one answered from the outputs an earlier execution recorded
 *       (it ran nothing: no reads, no writes); NULL in rows loaded before the column existed;</li>
 *   <li>{@value #INVOCATIONS}{@code (invocation_id, graph, graph_version, status, error, started_at, finished_at,
 *       frontend, caller, attempts, traceparent)}: one row per ending of a logged graph invocation, captured by the
 *       transaction that stored its outcome, keyed by {@code (invocation_id, finished_at)} (a resumed invocation
 *       ends again, and an ID may be used again once retention has forgotten it); see {@link #invocations()};</li>
 *   <li>{@value #DENIED_CALLS}{@code (denied_at, denial_id, invocation_id, caller, graph, purpose, reason,
 *       caller_roles)}: one row per call a frontend refused by the graph's access policy (nothing of it ran), keyed
 *       by {@code denial_id};</li>
 *   <li>{@value #FUNCTION_EXEC_TIMES}{@code (event_time, exec_id, tx_id, latency_us)}: monitoring, a view over
 *       FunctionInvocations ({@link #FUNCTION_EXEC_TIMES_VIEW}) so each execution is loaded once;</li>
 *   <li>{@code <table>Events(event_time, exec_id, tx_id, exec_seq, partition_id, event_type, event_seq, <the table's
 *       columns>)} per application table, {@code event_type} one of insert, update, delete, read (data provenance),
 *       keyed by {@code (exec_id, partition_id, event_type, event_seq)};</li>
 *   <li>{@value #MULTI_PARTITION_POSITIONS}{@code (exec_id, partition_id, tx_id)}: a writing multi-partition
 *       execution's position on each partition it reached, keyed by {@code (partition_id, tx_id)}; see
 *       {@link #multiPartitionPositions()}.</li>
 * </ul>
 *
 * <p><b>Identity.</b> {@code exec_id} identifies one function execution (one VoltDB transaction) and joins events
 * with executions. A transaction that VoltDB gives a transaction ID of its own (every writing or multi-partition
 * one) has that ID, in decimal, as {@code exec_id}; replicas of a single-partition writer run it with the same ID,
 * so they capture the same rows. A read-only single-partition transaction is given the partition's last transaction
 * ID by VoltDB, shared with the writer before it and with every other read since; it runs once (on one replica), and
 * its {@code exec_id} is {@code <tx_id>r<exec_seq>@<server>}: the k-th read-only execution since that transaction
 * on that partition in one server process, whose random 64-bit identity is {@code <server>}. A multi-partition
 * execution's writes are exported under its position on each partition, not its ID: their {@code exec_id} is that
 * position, and {@value #MULTI_PARTITION_POSITIONS} names their execution ({@link #writerExecId}).
 *
 * <p><b>Order.</b> {@code tx_id} is VoltDB's position of the transaction in its partition's serial order (its
 * single-partition transaction ID, or for a multi-partition write the ID the partition gave its part of it, which is
 * what VoltDB's export carries); {@code exec_seq} is 0 except for read-only executions, numbered from 1 after the
 * transaction {@code tx_id} names. A multi-partition execution's own row carries the multi-partition transaction ID
 * and {@code partition_id} {@value #MULTI_PARTITION}; its reads carry the partition of the record read and its
 * position there ({@code exec_seq} 1 for a read-only execution, which has no position of its own and follows the
 * partition's last writer), except reads of replicated tables, which keep {@value #MULTI_PARTITION} and are not
 * ordered against partitions' events. See {@link #EVENT_ORDER}.
 *
 * <p>The paper's {@code timestamp} column is {@code event_time} here, because {@code timestamp} is a keyword in some
 * analytical databases. All functions of one graph invocation share {@code execution_id}, the invocation ID.
 */
public final class ProvenanceSchema {
  public static final String FUNCTION_INVOCATIONS = "FunctionInvocations";
  public static final String FUNCTION_EXEC_TIMES = "FunctionExecTimes";
  public static final String DENIED_CALLS = "DeniedCalls";
  /** Ended graph invocations, one row each (issue 43). */
  public static final String INVOCATIONS = "Invocations";
  /** The positions of multi-partition executions in the partitions they wrote: see {@link #multiPartitionPositions()}. */
  public static final String MULTI_PARTITION_POSITIONS = "MultiPartitionPositions";
  /** {@code FunctionInvocations.mode} of an execution that ran the function. */
  public static final String MODE_RAN = "ran";
  /** {@code FunctionInvocations.mode} of an execution answered from its recorded outputs, which ran nothing. */
  public static final String MODE_RECORDED = "recorded";
  public static final String EVENT_TIME = "event_time";
  public static final String EXEC_ID = "exec_id";
  public static final String TX_ID = "tx_id";
  public static final String EXEC_SEQ = "exec_seq";
  public static final String PARTITION_ID = "partition_id";
  public static final String EVENT_TYPE = "event_type";
  public static final String EVENT_SEQ = "event_seq";
  /** Event types. */
  public static final String INSERT = "insert";
  public static final String UPDATE = "update";
  public static final String DELETE = "delete";
  public static final String READ = "read";

  /** The {@code partition_id} of a multi-partition execution's own row and reads (VoltDB's MP initiator). */
  public static final int MULTI_PARTITION = 16383;

  /**
   * The order of one record's events, as an {@code ORDER BY} list over an events table: its partition's serial
   * order of transactions ({@code tx_id}), read-only executions after the transaction they follow
   * ({@code exec_seq}), within one transaction its reads before its writes (capture does not record how they
   * interleave), then {@code event_seq} (writes in the order the transaction made them). Correct for single- and
   * multi-partition writers alike, because every write event carries its partition's position; reads by
   * multi-partition executions are not ordered against a partition's events.
   */
  public static final String EVENT_ORDER = eventOrder("");

  /** {@link #EVENT_ORDER} with every column qualified by {@code alias} (empty for none), for queries that join. */
  public static String eventOrder(String alias) {
    String q = alias.isEmpty() ? "" : alias + ".";
    return q + TX_ID + ", " + q + EXEC_SEQ + ", CASE WHEN " + q + EVENT_TYPE + " = '" + READ + "' THEN 0 ELSE 1 END, "
        + q + EVENT_SEQ;
  }

  /** The columns every events table starts with, in order. */
  public static final List<String> EVENT_COLUMNS = List.of(EVENT_TIME, EXEC_ID, TX_ID, EXEC_SEQ, PARTITION_ID,
      EVENT_TYPE, EVENT_SEQ);

  private static final Set<String> META = Set.copyOf(EVENT_COLUMNS);

  private ProvenanceSchema() {}

  public static ProvenanceTable functionInvocations() {
    return new ProvenanceTable(FUNCTION_INVOCATIONS, List.of(
        new ProvenanceColumn(EVENT_TIME, ColumnType.TIMESTAMP),
        new ProvenanceColumn(EXEC_ID, ColumnType.VARCHAR),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
        new ProvenanceColumn(EXEC_SEQ, ColumnType.BIGINT),
        new ProvenanceColumn(PARTITION_ID, ColumnType.INTEGER),
        new ProvenanceColumn("function_name", ColumnType.VARCHAR),
        new ProvenanceColumn("graph_id", ColumnType.VARCHAR),
        new ProvenanceColumn("execution_id", ColumnType.VARCHAR),
        new ProvenanceColumn("partition_key", ColumnType.VARCHAR),
        new ProvenanceColumn("caller", ColumnType.VARCHAR),
        new ProvenanceColumn("latency_us", ColumnType.BIGINT),
        new ProvenanceColumn("purpose", ColumnType.VARCHAR),
        new ProvenanceColumn("caller_roles", ColumnType.VARCHAR),
        new ProvenanceColumn("mode", ColumnType.VARCHAR)), List.of(EXEC_ID), List.of());
  }

  /**
   * Ended graph invocations: one row per stored outcome of a logged invocation, written by the transaction that
   * stored it (the invocation log's compare-and-set from RUNNING, or a cancel), so each ending is captured once;
   * keyed by {@code (invocation_id, finished_at)}. An invocation resumed after it failed or was cancelled
   * ({@code apiary executions resume}) ends again and has a row per ending: its latest {@code finished_at} is its
   * outcome.
   *
   * <ul>
   *   <li>{@code invocation_id}: the invocation's ID as the log keeps it ({@code caller/ID} where a frontend requires
   *       API keys), equal to {@code FunctionInvocations.execution_id} of its functions;</li>
   *   <li>{@code graph}, {@code graph_version}: the graph version it ran under;</li>
   *   <li>{@code status}: {@code DONE}, {@code FAILED} or {@code CANCELED}, as the log stores it and
   *       {@code apiary executions list --status} filters;</li>
   *   <li>{@code error}: for a failure or a cancel, the error as {@code apiary executions show} prints it (kind,
   *       function, exception type, message; at most {@value #MAX_ERROR_CHARS} characters); NULL on success;</li>
   *   <li>{@code started_at}, {@code finished_at}: the database's transaction times of its log entry and of its
   *       outcome;</li>
   *   <li>{@code frontend}: the frontend that held it when it ended (after a takeover, the one that took it over);</li>
   *   <li>{@code caller}: the caller of the request that started it (the API key's identity, or the client's claim on
   *       a frontend without keys), NULL for none;</li>
   *   <li>{@code attempts}: attempts counted by the log (a first attempt and each claim by recovery or a retry);</li>
   *   <li>{@code traceparent}: the W3C trace context the starting request carried (the client's attempt span, when
   *       the client traces; issue 43), NULL if it carried none or a malformed one.</li>
   * </ul>
   */
  public static ProvenanceTable invocations() {
    return new ProvenanceTable(INVOCATIONS, List.of(
        new ProvenanceColumn("invocation_id", ColumnType.VARCHAR),
        new ProvenanceColumn("graph", ColumnType.VARCHAR),
        new ProvenanceColumn("graph_version", ColumnType.INTEGER),
        new ProvenanceColumn("status", ColumnType.VARCHAR),
        new ProvenanceColumn("error", ColumnType.VARCHAR),
        new ProvenanceColumn("started_at", ColumnType.TIMESTAMP),
        new ProvenanceColumn("finished_at", ColumnType.TIMESTAMP),
        new ProvenanceColumn("frontend", ColumnType.VARCHAR),
        new ProvenanceColumn("caller", ColumnType.VARCHAR),
        new ProvenanceColumn("attempts", ColumnType.INTEGER),
        new ProvenanceColumn("traceparent", ColumnType.VARCHAR)), List.of("invocation_id", "finished_at"), List.of());
  }

  /**
   * Where a multi-partition execution that may write took place in each partition it reached: one row per partition,
   * {@code (exec_id, partition_id, tx_id)}, the execution's {@code exec_id} and its position in that partition's
   * serial order, keyed by {@code (partition_id, tx_id)} (a position is one transaction's, and the key serves the
   * join). VoltDB exports a multi-partition transaction's writes on a partition with that position, not the
   * transaction's ID, so a write event's execution is the one this table names for the event's
   * {@code (partition_id, tx_id)}, if any, and otherwise its own {@code exec_id}: see {@link #writerExecId}. Captured
   * with the execution's {@value #FUNCTION_INVOCATIONS} row, so it is there whenever that row is.
   */
  public static ProvenanceTable multiPartitionPositions() {
    return new ProvenanceTable(MULTI_PARTITION_POSITIONS, List.of(
        new ProvenanceColumn(EXEC_ID, ColumnType.VARCHAR),
        new ProvenanceColumn(PARTITION_ID, ColumnType.INTEGER),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT)), List.of(PARTITION_ID, TX_ID), List.of());
  }

  /**
   * The {@code exec_id} of the execution that made an event of an events table aliased {@code alias}, as an SQL
   * expression: the event's own {@code exec_id}, except for a multi-partition execution's write, whose execution
   * {@value #MULTI_PARTITION_POSITIONS} names by the event's partition and position. Join events with their
   * executions by {@code FunctionInvocations.exec_id = <this>}.
   */
  public static String writerExecId(String alias) {
    String q = alias + ".";
    return "COALESCE((SELECT mp." + EXEC_ID + " FROM " + MULTI_PARTITION_POSITIONS + " mp WHERE mp." + PARTITION_ID
        + " = " + q + PARTITION_ID + " AND mp." + TX_ID + " = " + q + TX_ID + " AND " + q + EVENT_TYPE + " <> '" + READ
        + "'), " + q + EXEC_ID + ")";
  }

  /** The most characters of {@code Invocations.error} (Vertica's VARCHAR holds 65,000 bytes). */
  public static final int MAX_ERROR_CHARS = 4096;

  /**
   * Calls refused by a graph's access policy: when (the database's transaction time of the recording), the
   * frontend's ID for the refusal, the invocation ID the client sent, the caller (the API key's identity; on a
   * frontend without credentials, what the client said), the graph, the purpose the call stated (or NULL), the
   * reason given to the client and the caller's roles (sorted, comma-separated; NULL for none).
   */
  public static ProvenanceTable deniedCalls() {
    return new ProvenanceTable(DENIED_CALLS, List.of(
        new ProvenanceColumn("denied_at", ColumnType.TIMESTAMP),
        new ProvenanceColumn("denial_id", ColumnType.VARCHAR),
        new ProvenanceColumn("invocation_id", ColumnType.VARCHAR),
        new ProvenanceColumn("caller", ColumnType.VARCHAR),
        new ProvenanceColumn("graph", ColumnType.VARCHAR),
        new ProvenanceColumn("purpose", ColumnType.VARCHAR),
        new ProvenanceColumn("reason", ColumnType.VARCHAR),
        new ProvenanceColumn("caller_roles", ColumnType.VARCHAR)), List.of("denial_id"), List.of());
  }

  /** The monitoring view of execution times, over {@value #FUNCTION_INVOCATIONS}. */
  public static final String FUNCTION_EXEC_TIMES_VIEW = "CREATE OR REPLACE VIEW " + FUNCTION_EXEC_TIMES
      + " AS SELECT event_time, exec_id, tx_id, latency_us FROM " + FUNCTION_INVOCATIONS;

  /** The layout of {@value #FUNCTION_EXEC_TIMES} as a table of its own (Apiary creates it as a view). */
  public static ProvenanceTable functionExecTimes() {
    return new ProvenanceTable(FUNCTION_EXEC_TIMES, List.of(
        new ProvenanceColumn(EVENT_TIME, ColumnType.TIMESTAMP),
        new ProvenanceColumn(EXEC_ID, ColumnType.VARCHAR),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
        new ProvenanceColumn("latency_us", ColumnType.BIGINT)), List.of(EXEC_ID), List.of());
  }

  /** The events table's name for an application table: its name in lower case followed by {@code Events}. */
  public static String eventsTableName(String applicationTable) {
    return applicationTable.toLowerCase(Locale.ROOT) + "Events";
  }

  /**
   * The events table of an application table.
   *
   * @param columns the application table's columns, in its order
   * @param primaryKey its primary key columns (empty if it has none: events then cannot be tied to one record)
   * @throws IllegalArgumentException if a column name collides with an event column
   */
  public static ProvenanceTable eventsTable(String applicationTable, List<ProvenanceColumn> columns,
                                            List<String> primaryKey) {
    List<ProvenanceColumn> all = new ArrayList<>(List.of(
        new ProvenanceColumn(EVENT_TIME, ColumnType.TIMESTAMP),
        new ProvenanceColumn(EXEC_ID, ColumnType.VARCHAR),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
        new ProvenanceColumn(EXEC_SEQ, ColumnType.BIGINT),
        new ProvenanceColumn(PARTITION_ID, ColumnType.INTEGER),
        new ProvenanceColumn(EVENT_TYPE, ColumnType.VARCHAR),
        new ProvenanceColumn(EVENT_SEQ, ColumnType.BIGINT)));
    for (ProvenanceColumn c : columns) {
      String name = c.name().toLowerCase(Locale.ROOT);
      if (META.contains(name)) {
        throw new IllegalArgumentException("table " + applicationTable + " has a column named " + name
            + ", which its provenance events table uses itself; rename the column");
      }
      all.add(new ProvenanceColumn(name, c.type()));
    }
    return new ProvenanceTable(eventsTableName(applicationTable), all, List.of(EXEC_ID, PARTITION_ID, EVENT_TYPE, EVENT_SEQ),
        primaryKey.stream().map(k -> k.toLowerCase(Locale.ROOT)).toList());
  }
}

package org.apiary.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The provenance tables (paper section 6.1) and how they are named.
 *
 * <ul>
 *   <li>{@value #FUNCTION_INVOCATIONS}{@code (event_time, tx_id, function_name, graph_id, execution_id,
 *       partition_key, caller, latency_us)}: one row per committed function execution (workflow provenance);</li>
 *   <li>{@value #FUNCTION_EXEC_TIMES}{@code (event_time, tx_id, latency_us)}: monitoring, a view over
 *       FunctionInvocations ({@link #FUNCTION_EXEC_TIMES_VIEW}) so each execution is loaded once;</li>
 *   <li>{@code <table>Events(event_time, tx_id, event_type, event_seq, <the table's columns>)} per application
 *       table, {@code event_type} one of insert, update, delete, read (data provenance).</li>
 * </ul>
 * The paper's {@code timestamp} column is {@code event_time} here, because {@code timestamp} is a keyword in some
 * analytical databases. {@code tx_id} is the VoltDB transaction's unique ID; all functions of one graph invocation
 * share {@code execution_id}, the invocation ID.
 */
public final class ProvenanceSchema {
  public static final String FUNCTION_INVOCATIONS = "FunctionInvocations";
  public static final String FUNCTION_EXEC_TIMES = "FunctionExecTimes";
  public static final String EVENT_TIME = "event_time";
  public static final String TX_ID = "tx_id";
  public static final String EVENT_TYPE = "event_type";
  public static final String EVENT_SEQ = "event_seq";
  /** Event types. */
  public static final String INSERT = "insert";
  public static final String UPDATE = "update";
  public static final String DELETE = "delete";
  public static final String READ = "read";

  private static final Set<String> META = Set.of(EVENT_TIME, TX_ID, EVENT_TYPE, EVENT_SEQ);

  private ProvenanceSchema() {}

  public static ProvenanceTable functionInvocations() {
    return new ProvenanceTable(FUNCTION_INVOCATIONS, List.of(
        new ProvenanceColumn(EVENT_TIME, ColumnType.TIMESTAMP),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
        new ProvenanceColumn("function_name", ColumnType.VARCHAR),
        new ProvenanceColumn("graph_id", ColumnType.VARCHAR),
        new ProvenanceColumn("execution_id", ColumnType.VARCHAR),
        new ProvenanceColumn("partition_key", ColumnType.VARCHAR),
        new ProvenanceColumn("caller", ColumnType.VARCHAR),
        new ProvenanceColumn("latency_us", ColumnType.BIGINT)), List.of(TX_ID), List.of());
  }

  /** The monitoring view of execution times, over {@value #FUNCTION_INVOCATIONS}. */
  public static final String FUNCTION_EXEC_TIMES_VIEW = "CREATE OR REPLACE VIEW " + FUNCTION_EXEC_TIMES
      + " AS SELECT event_time, tx_id, latency_us FROM " + FUNCTION_INVOCATIONS;

  /** The layout of {@value #FUNCTION_EXEC_TIMES} as a table of its own (Apiary creates it as a view). */
  public static ProvenanceTable functionExecTimes() {
    return new ProvenanceTable(FUNCTION_EXEC_TIMES, List.of(
        new ProvenanceColumn(EVENT_TIME, ColumnType.TIMESTAMP),
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
        new ProvenanceColumn("latency_us", ColumnType.BIGINT)), List.of(TX_ID), List.of());
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
        new ProvenanceColumn(TX_ID, ColumnType.BIGINT),
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
    return new ProvenanceTable(eventsTableName(applicationTable), all, List.of(TX_ID, EVENT_TYPE, EVENT_SEQ),
        primaryKey.stream().map(k -> k.toLowerCase(Locale.ROOT)).toList());
  }
}

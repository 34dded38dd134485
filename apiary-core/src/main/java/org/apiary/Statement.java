package org.apiary;

import java.util.Objects;

/**
 * A parameterized SQL statement, declared once as a {@code static final} field of a function class:
 *
 * <pre>{@code
 * static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");
 * }</pre>
 *
 * <p>Apiary finds every statement field of a function class at registration, checks it against the schema with
 * VoltDB's planner and compiles it into the function's stored procedure. A statement created anywhere else (for
 * example inside {@code run()}) is not part of the procedure, and queueing it fails.
 */
public final class Statement {
  private final String sql;

  private Statement(String sql) {
    this.sql = sql;
  }

  /**
   * Declares a statement.
   *
   * @param sql one SQL statement in VoltDB's dialect, with {@code ?} for each parameter; not blank
   * @throws IllegalArgumentException if {@code sql} is blank
   */
  public static Statement of(String sql) {
    Objects.requireNonNull(sql, "sql");
    String trimmed = sql.strip();
    if (trimmed.endsWith(";")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1).strip();
    }
    if (trimmed.isEmpty()) {
      throw new IllegalArgumentException("a statement needs SQL text, got a blank string");
    }
    return new Statement(trimmed);
  }

  /** The SQL text, without a trailing semicolon. */
  public String sql() {
    return sql;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Statement other && other.sql.equals(sql);
  }

  @Override
  public int hashCode() {
    return sql.hashCode();
  }

  @Override
  public String toString() {
    return sql;
  }
}

package org.apiary;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * One row of a {@link QueryResult}. Columns are found by name (case-insensitive, as SQL names are) or by
 * zero-based position. The typed getters throw {@link IllegalStateException} on a SQL NULL, naming the column;
 * check {@link #isNull} first where a column may be NULL, or use {@link #get}, which returns {@code null}.
 */
public interface Row {
  /** The value of a column as its natural Java type ({@code Long}, {@code String}, ...), or {@code null}. */
  Object get(String column);

  /** The value of a column by position, or {@code null}. */
  Object get(int column);

  /** Whether a column is SQL NULL. */
  boolean isNull(String column);

  /** An integer column (TINYINT to BIGINT) as a {@code long}. */
  long getLong(String column);

  /** An integer column by position. */
  long getLong(int column);

  /** A FLOAT or DECIMAL column as a {@code double}. */
  double getDouble(String column);

  /** A VARCHAR column. */
  String getString(String column);

  /** A VARCHAR column by position. */
  String getString(int column);

  /** A DECIMAL column. */
  BigDecimal getDecimal(String column);

  /** A TIMESTAMP column. */
  Instant getTimestamp(String column);

  /** A VARBINARY column. */
  byte[] getBytes(String column);
}

package org.apiary.internal;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apiary.QueryResult;
import org.apiary.Row;

/** A {@link QueryResult} held as column names and rows of Java values. */
public final class TabularResult implements QueryResult {
  private final List<String> columns;
  private final List<Row> rows;
  private final boolean isWriteCount;

  /**
   * @param columns column names
   * @param rows row values, each array as long as {@code columns}
   * @param isWriteCount whether this is the modified-row count of a write
   */
  public TabularResult(List<String> columns, List<Object[]> rows, boolean isWriteCount) {
    this.columns = List.copyOf(columns);
    Row[] wrapped = new Row[rows.size()];
    for (int i = 0; i < wrapped.length; i++) {
      wrapped[i] = new ArrayRow(rows.get(i));
    }
    this.rows = List.of(wrapped);
    this.isWriteCount = isWriteCount;
  }

  @Override
  public List<String> columns() {
    return columns;
  }

  @Override
  public List<Row> rows() {
    return rows;
  }

  @Override
  public Iterator<Row> iterator() {
    return Collections.unmodifiableList(rows).iterator();
  }

  @Override
  public long modifiedRowCount() {
    if (!isWriteCount) {
      throw new IllegalStateException("this is the result of a query; modifiedRowCount() is for INSERT, UPSERT, UPDATE and DELETE");
    }
    return rows.get(0).getLong(0);
  }

  @Override
  public String toString() {
    return "QueryResult" + columns + " " + rows.size() + " rows";
  }

  private final class ArrayRow implements Row {
    private final Object[] values;

    ArrayRow(Object[] values) {
      this.values = values;
    }

    private int position(String column) {
      // A scan: results have a few columns, and this runs on the database's site threads (no map to build).
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).equalsIgnoreCase(column)) {
          return i;
        }
      }
      throw new IllegalArgumentException("no column '" + column + "' in result with columns " + columns);
    }

    private Object required(int i) {
      if (i < 0 || i >= values.length) {
        throw new IndexOutOfBoundsException("column " + i + " of a result with " + values.length + " columns");
      }
      Object v = values[i];
      if (v == null) {
        throw new IllegalStateException("column " + columns.get(i) + " is NULL; check isNull() or use get()");
      }
      return v;
    }

    private <T> T typed(int i, Class<T> type) {
      Object v = required(i);
      if (!type.isInstance(v)) {
        throw new IllegalStateException("column " + columns.get(i) + " holds " + v.getClass().getSimpleName()
            + ", not " + type.getSimpleName());
      }
      return type.cast(v);
    }

    @Override
    public Object get(String column) {
      return values[position(column)];
    }

    @Override
    public Object get(int column) {
      return values[column];
    }

    @Override
    public boolean isNull(String column) {
      return values[position(column)] == null;
    }

    @Override
    public long getLong(String column) {
      return getLong(position(column));
    }

    @Override
    public long getLong(int column) {
      return typed(column, Number.class).longValue();
    }

    @Override
    public double getDouble(String column) {
      return typed(position(column), Number.class).doubleValue();
    }

    @Override
    public String getString(String column) {
      return getString(position(column));
    }

    @Override
    public String getString(int column) {
      return typed(column, String.class);
    }

    @Override
    public BigDecimal getDecimal(String column) {
      return typed(position(column), BigDecimal.class);
    }

    @Override
    public Instant getTimestamp(String column) {
      return typed(position(column), Instant.class);
    }

    @Override
    public byte[] getBytes(String column) {
      return typed(position(column), byte[].class);
    }

    @Override
    public String toString() {
      return Arrays.deepToString(values);
    }
  }
}

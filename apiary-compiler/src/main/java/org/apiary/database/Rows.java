package org.apiary.database;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * The rows one SQL statement or system procedure returned, read through {@link ApiaryDatabase#query},
 * {@link ApiaryDatabase#queryEach} or {@link ApiaryDatabase#callAdminForRows}: column names and types, and each row's
 * values as plain Java (no database type), so code above the database layer reads data without VoltDB's classes.
 *
 * <p>A value is a {@link Long} (every integer type), {@link Double} ({@code FLOAT}), {@link BigDecimal}
 * ({@code DECIMAL}), {@link String} ({@code VARCHAR}; the geography types as well-known text), {@code byte[]}
 * ({@code VARBINARY}) or {@link Instant} ({@code TIMESTAMP}, microsecond precision), and {@code null} for SQL
 * {@code NULL}. Immutable, apart from the {@code byte[]} values it hands out.
 */
public final class Rows implements Iterable<Rows.Row> {
  /** A column's SQL type, with the Java type its values have. */
  public enum SqlType {
    TINYINT(Long.class), SMALLINT(Long.class), INTEGER(Long.class), BIGINT(Long.class), FLOAT(Double.class),
    DECIMAL(BigDecimal.class), VARCHAR(String.class), VARBINARY(byte[].class), TIMESTAMP(Instant.class),
    GEOGRAPHY_POINT(String.class), GEOGRAPHY(String.class);

    private final Class<?> javaType;

    SqlType(Class<?> javaType) {
      this.javaType = javaType;
    }

    /** The class of this type's non-null values. */
    public Class<?> javaType() {
      return javaType;
    }

    /** Whether {@link #formatted()} aligns the values left, as text, rather than right, as numbers. */
    boolean alignsLeft() {
      return this == VARCHAR || this == VARBINARY || this == TIMESTAMP || this == GEOGRAPHY_POINT
          || this == GEOGRAPHY;
    }
  }

  /** A column: its name as the database reports it (upper case unless quoted or aliased so) and its type. */
  public record Column(String name, SqlType type) {}

  private final List<Column> columns;
  private final List<Row> rows;

  /** Takes {@code values} (one array per row, one value per column, already of the column's Java type) as they are. */
  Rows(List<Column> columns, List<Object[]> values) {
    this.columns = List.copyOf(columns);
    List<Row> built = new ArrayList<>(values.size());
    for (Object[] v : values) {
      if (v.length != columns.size()) {
        throw new IllegalArgumentException("a row of " + v.length + " values for " + columns.size() + " columns");
      }
      built.add(new Row(v));
    }
    this.rows = Collections.unmodifiableList(built);
  }

  /** The columns, in order. */
  public List<Column> columns() {
    return columns;
  }

  /** The rows, in the order the database returned them. */
  public List<Row> rows() {
    return rows;
  }

  /** The number of rows. */
  public int size() {
    return rows.size();
  }

  public boolean isEmpty() {
    return rows.isEmpty();
  }

  /** The first row, or empty if there is none. */
  public Optional<Row> first() {
    return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
  }

  @Override
  public Iterator<Row> iterator() {
    return rows.iterator();
  }

  /**
   * The one integer of a result of one row and one column, as a {@code COUNT(*)} or a procedure's count returns.
   *
   * @throws IllegalStateException if the result has another shape, or the value is NULL or not an integer
   */
  public long scalarLong() {
    if (rows.size() != 1 || columns.size() != 1) {
      throw new IllegalStateException("expected one row of one column, got " + rows.size() + " row(s) of "
          + columns.size() + " column(s)");
    }
    return rows.get(0).getLong(0);
  }

  /** The position of the column named {@code name} (compared ignoring case, as SQL does). */
  public int columnIndex(String name) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equalsIgnoreCase(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException("no column " + name + " among " + columns.stream().map(Column::name)
        .toList());
  }

  /**
   * The rows as a text table, as {@code apiary sql} prints them (the layout of VoltDB's own sqlcmd): a header of the
   * column names, a line of dashes, then one line per row; numbers aligned right, text left; a column as wide as its
   * widest value up to 30 characters (74 for a geography); {@code NULL} for a null; a {@code DECIMAL} with 12
   * decimals; {@code VARBINARY} in hexadecimal, cut to 30 characters; a timestamp in this machine's time zone.
   * Every line ends with a newline.
   */
  public String formatted() {
    int n = columns.size();
    int[] widths = new int[n];
    for (int i = 0; i < n; i++) {
      widths[i] = columns.get(i).name().length();
    }
    for (Row row : rows) {
      for (int i = 0; i < n; i++) {
        SqlType type = columns.get(i).type();
        Object value = row.values[i];
        int width;
        if (value == null) {
          width = NULL_TEXT.length();
        } else if (type == SqlType.DECIMAL) {
          width = decimalText((BigDecimal) value).length();
        } else {
          width = type == SqlType.VARBINARY ? ((byte[]) value).length * 2 : text(type, value).length();
          width = Math.min(width, type == SqlType.GEOGRAPHY ? GEOGRAPHY_WIDTH : MAX_WIDTH);
        }
        widths[i] = Math.max(widths[i], width);
      }
    }
    StringBuilder out = new StringBuilder();
    String[] formats = new String[n];
    for (int i = 0; i < n; i++) {
      widths[i]++;
      formats[i] = "%1$" + (columns.get(i).type().alignsLeft() ? "-" : "") + widths[i] + "s";
      out.append(i == 0 ? "" : " ").append(String.format("%1$-" + widths[i] + "s", columns.get(i).name()));
    }
    out.append('\n');
    for (int i = 0; i < n; i++) {
      out.append(i == 0 ? "" : " ").append("-".repeat(widths[i]));
    }
    out.append('\n');
    for (Row row : rows) {
      for (int i = 0; i < n; i++) {
        out.append(i == 0 ? "" : " ").append(String.format(formats[i], cell(columns.get(i).type(), row.values[i])));
      }
      out.append('\n');
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return "Rows" + columns + " (" + rows.size() + " row(s))";
  }

  private static final String NULL_TEXT = "NULL";
  private static final int MAX_WIDTH = 30;
  private static final int GEOGRAPHY_WIDTH = 74;
  private static final String CUT = "...";
  private static final DateTimeFormatter TIMESTAMP_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");

  private static String cell(SqlType type, Object value) {
    if (value == null) {
      return NULL_TEXT;
    }
    if (type == SqlType.DECIMAL) {
      return decimalText((BigDecimal) value);
    }
    String text = text(type, value);
    return type == SqlType.VARBINARY && text.length() > MAX_WIDTH
        ? text.substring(0, MAX_WIDTH - CUT.length()) + CUT : text;
  }

  private static String decimalText(BigDecimal value) {
    return String.format("%01.12f", value.doubleValue());
  }

  private static String text(SqlType type, Object value) {
    return switch (type) {
      case VARBINARY -> HexFormat.of().withUpperCase().formatHex((byte[]) value);
      case TIMESTAMP -> TIMESTAMP_TEXT.format(((Instant) value).atZone(ZoneId.systemDefault()));
      default -> value.toString();
    };
  }

  /** One row: its values by column position (from 0) or by column name (ignoring case). */
  public final class Row {
    private final Object[] values;

    private Row(Object[] values) {
      this.values = values;
    }

    /** The value as its column's {@link SqlType#javaType()}, or {@code null} for SQL NULL. */
    public Object get(int column) {
      return values[checked(column)];
    }

    public Object get(String column) {
      return get(columnIndex(column));
    }

    public boolean isNull(int column) {
      return get(column) == null;
    }

    /**
     * An integer column's value.
     *
     * @throws IllegalStateException if it is NULL (read it with {@link #getLongOrNull}) or not an integer column
     */
    public long getLong(int column) {
      Long value = getLongOrNull(column);
      if (value == null) {
        throw new IllegalStateException("column " + columns.get(column).name() + " is NULL");
      }
      return value;
    }

    public long getLong(String column) {
      return getLong(columnIndex(column));
    }

    /** An integer column's value, {@code null} for SQL NULL. */
    public Long getLongOrNull(int column) {
      return typed(column, Long.class);
    }

    /** A text column's value (a {@code VARCHAR}, or a geography as well-known text), {@code null} for SQL NULL. */
    public String getString(int column) {
      return typed(column, String.class);
    }

    public String getString(String column) {
      return getString(columnIndex(column));
    }

    /** A {@code FLOAT} column's value, {@code null} for SQL NULL. */
    public Double getDouble(int column) {
      return typed(column, Double.class);
    }

    /** A {@code DECIMAL} column's value, {@code null} for SQL NULL. */
    public BigDecimal getDecimal(int column) {
      return typed(column, BigDecimal.class);
    }

    /** A {@code TIMESTAMP} column's value, {@code null} for SQL NULL. */
    public Instant getInstant(int column) {
      return typed(column, Instant.class);
    }

    /** A {@code VARBINARY} column's value (a copy), {@code null} for SQL NULL. */
    public byte[] getBytes(int column) {
      byte[] value = typed(column, byte[].class);
      return value == null ? null : value.clone();
    }

    private <T> T typed(int column, Class<T> type) {
      Object value = get(column);
      if (value != null && !type.isInstance(value)) {
        throw new IllegalStateException("column " + columns.get(column).name() + " is " + columns.get(column).type()
            + ", not " + type.getSimpleName());
      }
      return type.cast(value);
    }

    private int checked(int column) {
      if (column < 0 || column >= values.length) {
        throw new IndexOutOfBoundsException("column " + column + " of " + values.length);
      }
      return column;
    }
  }
}

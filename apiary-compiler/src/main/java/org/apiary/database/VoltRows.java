package org.apiary.database;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.types.TimestampType;

/** The one conversion of VoltDB's result tables into {@link Rows}. */
final class VoltRows {
  private VoltRows() {}

  static Rows from(VoltTable table) {
    int n = table.getColumnCount();
    List<Rows.Column> columns = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      columns.add(new Rows.Column(table.getColumnName(i), sqlType(table.getColumnName(i), table.getColumnType(i))));
    }
    List<Object[]> values = new ArrayList<>(table.getRowCount());
    table.resetRowPosition();
    while (table.advanceRow()) {
      Object[] row = new Object[n];
      for (int i = 0; i < n; i++) {
        row[i] = value(table, i, columns.get(i).type());
      }
      values.add(row);
    }
    table.resetRowPosition();
    return new Rows(columns, values);
  }

  static List<Rows> from(VoltTable[] tables) {
    List<Rows> all = new ArrayList<>(tables.length);
    for (VoltTable t : tables) {
      all.add(from(t));
    }
    return all;
  }

  private static Rows.SqlType sqlType(String column, VoltType type) {
    return switch (type) {
      case TINYINT -> Rows.SqlType.TINYINT;
      case SMALLINT -> Rows.SqlType.SMALLINT;
      case INTEGER -> Rows.SqlType.INTEGER;
      case BIGINT -> Rows.SqlType.BIGINT;
      case FLOAT -> Rows.SqlType.FLOAT;
      case DECIMAL -> Rows.SqlType.DECIMAL;
      case STRING -> Rows.SqlType.VARCHAR;
      case VARBINARY -> Rows.SqlType.VARBINARY;
      case TIMESTAMP -> Rows.SqlType.TIMESTAMP;
      case GEOGRAPHY_POINT -> Rows.SqlType.GEOGRAPHY_POINT;
      case GEOGRAPHY -> Rows.SqlType.GEOGRAPHY;
      default -> throw new IllegalStateException("column " + column + " has VoltDB type " + type
          + ", which Rows does not carry");
    };
  }

  private static Object value(VoltTable t, int i, Rows.SqlType type) {
    Object value = switch (type) {
      case TINYINT, SMALLINT, INTEGER, BIGINT -> t.getLong(i);
      case FLOAT -> t.getDouble(i);
      case DECIMAL -> t.getDecimalAsBigDecimal(i);
      case VARCHAR -> t.getString(i);
      case VARBINARY -> t.getVarbinary(i);
      case TIMESTAMP -> instant(t.getTimestampAsTimestamp(i));
      case GEOGRAPHY_POINT -> String.valueOf(t.getGeographyPointValue(i));
      case GEOGRAPHY -> String.valueOf(t.getGeographyValue(i));
    };
    return t.wasNull() ? null : value;
  }

  private static Instant instant(TimestampType timestamp) {
    if (timestamp == null) {
      return null;
    }
    long micros = timestamp.getTime();
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }
}

package org.apiary.provenance;

import java.util.Locale;

/**
 * The column types provenance tables use, a subset every supported analytical database has. Java values:
 * {@code Long}, {@code Integer}, {@code Short}, {@code Byte}, {@code Double}, {@code java.math.BigDecimal},
 * {@code String}, {@code byte[]}, {@code java.time.Instant}.
 */
public enum ColumnType {
  BIGINT, INTEGER, SMALLINT, TINYINT, DOUBLE, DECIMAL, VARCHAR, VARBINARY, TIMESTAMP;

  /** The type for a VoltDB column type name (as VoltDB's catalog spells it, e.g. {@code BIGINT}, {@code FLOAT}). */
  public static ColumnType fromVoltType(String voltType) {
    return switch (voltType.toUpperCase(Locale.ROOT)) {
      case "BIGINT" -> BIGINT;
      case "INTEGER" -> INTEGER;
      case "SMALLINT" -> SMALLINT;
      case "TINYINT" -> TINYINT;
      case "FLOAT" -> DOUBLE;
      case "DECIMAL" -> DECIMAL;
      case "STRING", "VARCHAR" -> VARCHAR;
      case "VARBINARY" -> VARBINARY;
      case "TIMESTAMP" -> TIMESTAMP;
      default -> throw new IllegalArgumentException("VoltDB column type " + voltType + " has no provenance column type "
          + "(geography types are not captured)");
    };
  }
}

package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 44: {@link Rows}, the rows code above the database layer reads instead of VoltDB's tables, holds every value
 * of every column type as VoltDB returned it (NULLs as null), and {@code apiary sql}'s text table is VoltDB's own,
 * compared with {@link VoltTable#toFormattedString()} of the same query on a real embedded VoltDB.
 */
class RowsTest {
  private static ApiaryDatabase db;

  private static final String ALL_TYPES = "SELECT id, ti, si, i, bi, f, d, vc, vb, ts, pt, geo FROM all_types "
      + "ORDER BY id";
  private static final long MICROS = Instant.parse("2026-11-29T12:34:56.789123Z").getEpochSecond() * 1_000_000L
      + 789_123L;
  private static final byte[] SHORT_BYTES = {0x00, 0x7f, (byte) 0x80, (byte) 0xff, 0x0a};
  private static final byte[] LONG_BYTES = new byte[40];
  private static final String LONG_TEXT = "a value longer than the thirty characters of a column";

  @BeforeAll
  static void open() {
    Arrays.fill(LONG_BYTES, (byte) 0xab);
    db = ApiaryDatabase.open(DatabaseConfig.embedded(2));
    db.loadSchema("""
        CREATE TABLE all_types (id BIGINT NOT NULL, ti TINYINT, si SMALLINT, i INTEGER, bi BIGINT, f FLOAT,
          d DECIMAL, vc VARCHAR(200), vb VARBINARY(64), ts TIMESTAMP, pt GEOGRAPHY_POINT, geo GEOGRAPHY,
          PRIMARY KEY (id));
        PARTITION TABLE all_types ON COLUMN id;
        """);
    db.callAdmin("a row of every type", "@AdHoc", "INSERT INTO all_types VALUES (1, -7, 300, 70000, 9000000000, "
        + "2.5, 12.345, 'short', ?, TO_TIMESTAMP(MICROSECOND, ?), POINTFROMTEXT('POINT (1.5 -2.25)'), "
        + "POLYGONFROMTEXT('POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))'))", SHORT_BYTES, MICROS);
    db.callAdmin("a row of NULLs", "@AdHoc", "INSERT INTO all_types (id) VALUES (2)");
    db.callAdmin("a row of long values", "@AdHoc", "INSERT INTO all_types (id, vc, vb) VALUES (3, ?, ?)",
        LONG_TEXT, LONG_BYTES);
  }

  @AfterAll
  static void close() {
    if (db != null) {
      db.close();
    }
  }

  @Test
  void everyTypeArrivesAsPlainJava() {
    Rows rows = db.query("reading every type", ALL_TYPES);
    assertEquals(List.of("ID", "TI", "SI", "I", "BI", "F", "D", "VC", "VB", "TS", "PT", "GEO"),
        rows.columns().stream().map(Rows.Column::name).toList());
    assertEquals(List.of(Rows.SqlType.BIGINT, Rows.SqlType.TINYINT, Rows.SqlType.SMALLINT, Rows.SqlType.INTEGER,
        Rows.SqlType.BIGINT, Rows.SqlType.FLOAT, Rows.SqlType.DECIMAL, Rows.SqlType.VARCHAR, Rows.SqlType.VARBINARY,
        Rows.SqlType.TIMESTAMP, Rows.SqlType.GEOGRAPHY_POINT, Rows.SqlType.GEOGRAPHY),
        rows.columns().stream().map(Rows.Column::type).toList());
    assertEquals(3, rows.size());

    Rows.Row full = rows.rows().get(0);
    assertEquals(1L, full.getLong(0));
    assertEquals(-7L, full.getLong(1));
    assertEquals(300L, full.getLong("si"));
    assertEquals(70000L, full.get("I"));
    assertEquals(9_000_000_000L, full.getLong(4));
    assertEquals(2.5, full.getDouble(5));
    assertEquals(0, new BigDecimal("12.345").compareTo(full.getDecimal(6)), "DECIMAL " + full.getDecimal(6));
    assertEquals("short", full.getString(7));
    assertArrayEquals(SHORT_BYTES, full.getBytes(8));
    assertEquals(Instant.parse("2026-11-29T12:34:56.789123Z"), full.getInstant(9));
    assertTrue(full.getString(10).startsWith("POINT (1.5"), full.getString(10));
    assertTrue(full.getString(11).startsWith("POLYGON (("), full.getString(11));
    for (int i = 0; i < rows.columns().size(); i++) {
      Object value = full.get(i);
      assertTrue(rows.columns().get(i).type().javaType().isInstance(value),
          rows.columns().get(i) + " holds a " + value.getClass());
    }

    Rows.Row nulls = rows.rows().get(1);
    for (int i = 1; i < rows.columns().size(); i++) {
      assertTrue(nulls.isNull(i), rows.columns().get(i) + " of the row of NULLs");
    }
    assertNull(nulls.getLongOrNull(4));
    assertNull(nulls.getString("vc"));
    assertNull(nulls.getInstant(9));
    assertNull(nulls.getBytes(8));
    assertThrows(IllegalStateException.class, () -> nulls.getLong(4), "a NULL is no long");
    assertThrows(IllegalStateException.class, () -> full.getLong(7), "a VARCHAR is no long");
    assertThrows(IllegalArgumentException.class, () -> full.get("nothing"));

    assertEquals(LONG_TEXT, rows.rows().get(2).getString(7));
    assertArrayEquals(LONG_BYTES, rows.rows().get(2).getBytes(8));
  }

  @Test
  void formattedAsVoltDbFormatsIt() {
    for (String sql : List.of(ALL_TYPES, "SELECT COUNT(*) AS n FROM all_types", "SELECT vc FROM all_types WHERE id < 0",
        "SELECT d, f FROM all_types WHERE id = 1")) {
      VoltTable volt = db.callAdmin("VoltDB's table", "@AdHoc", sql).getResults()[0];
      assertEquals(volt.toFormattedString(), db.query("ours", sql).formatted(), sql);
    }
    VoltTable write = db.callAdmin("VoltDB's table of a write", "@AdHoc", "UPDATE all_types SET vc = vc WHERE id = 1")
        .getResults()[0];
    assertEquals(write.toFormattedString(), db.query("ours", "UPDATE all_types SET vc = vc WHERE id = 1")
        .formatted());
    VoltTable ddl = db.callAdmin("VoltDB's table of DDL", "@AdHoc", "CREATE TABLE ddl_a (a INTEGER)").getResults()[0];
    assertEquals(ddl.toFormattedString(), db.queryEach("ours", "CREATE TABLE ddl_b (a INTEGER)").get(0).formatted());
  }

  @Test
  void severalStatementsGiveOneResultEach() {
    List<Rows> results = db.queryEach("two statements", "UPDATE all_types SET i = i WHERE id = 1; "
        + "SELECT id FROM all_types ORDER BY id");
    assertEquals(2, results.size());
    assertEquals(1L, results.get(0).scalarLong(), "the update changed one row");
    assertEquals(List.of(1L, 2L, 3L), results.get(1).rows().stream().map(r -> r.getLong(0)).toList());
    assertThrows(IllegalArgumentException.class, () -> db.query("two statements", "SELECT id FROM all_types; "
        + "SELECT i FROM all_types"));
  }

  @Test
  void scalarsAndSystemProcedures() {
    assertEquals(3L, db.query("counting", "SELECT COUNT(*) FROM all_types WHERE id >= ?", 1).scalarLong());
    assertThrows(IllegalStateException.class, () -> db.query("not a scalar", "SELECT id FROM all_types")
        .scalarLong());
    assertTrue(db.query("no row", "SELECT id FROM all_types WHERE id < 0").first().isEmpty());
    Rows keys = db.callAdminForRows("keys", "@SystemCatalog", "PRIMARYKEYS");
    assertTrue(keys.rows().stream().anyMatch(r -> "ALL_TYPES".equals(r.getString("TABLE_NAME"))
        && "ID".equals(r.getString("COLUMN_NAME")) && r.getLong("KEY_SEQ") == 1), keys.size() + " key columns");
  }
}

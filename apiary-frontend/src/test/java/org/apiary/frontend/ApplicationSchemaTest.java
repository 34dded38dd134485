package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which migration statements a deploy checks against a table's rows (the refusal itself, on a database, is in
 * {@link SchemaMigrationTest}).
 */
class ApplicationSchemaTest {
  @Test
  void statementsThatDropDataOrNeedAnEmptyTableAreNamedWithTheirTable() {
    assertEquals(new ApplicationSchema.Risk("T", "drops the rows", false), ApplicationSchema.risk("drop table t"));
    assertEquals(new ApplicationSchema.Risk("T", "drops the data of column C", false),
        ApplicationSchema.risk("ALTER TABLE t\n  DROP COLUMN c"));
    assertEquals("T", ApplicationSchema.risk("ALTER TABLE t ADD COLUMN c INTEGER NOT NULL").table());
    assertEquals(true, ApplicationSchema.risk("CREATE UNIQUE INDEX i ON t (c)").needsEmptyTable());
    assertEquals(true, ApplicationSchema.risk("CREATE ASSUMEUNIQUE INDEX i ON t (c)").needsEmptyTable());
    assertEquals(true, ApplicationSchema.risk("ALTER TABLE t ADD CONSTRAINT u UNIQUE (c)").needsEmptyTable());
    assertEquals(true, ApplicationSchema.risk("ALTER TABLE t ADD PRIMARY KEY (c)").needsEmptyTable());
    assertEquals(true, ApplicationSchema.risk("PARTITION TABLE t ON COLUMN c").needsEmptyTable());
  }

  @Test
  void changesVoltDbMakesInPlaceAreNotChecked() {
    assertNull(ApplicationSchema.risk("ALTER TABLE t ADD COLUMN c INTEGER"));
    assertNull(ApplicationSchema.risk("ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 0 NOT NULL"));
    assertNull(ApplicationSchema.risk("CREATE INDEX i ON t (c)"));
    assertNull(ApplicationSchema.risk("CREATE TABLE u (c INTEGER NOT NULL)"));
    assertNull(ApplicationSchema.risk("ALTER TABLE t ALTER COLUMN c VARCHAR(64)"));
  }

  @Test
  void theTablesAScriptCreatesAreFoundAcrossLines() {
    assertEquals(Set.of("A", "B"), ApplicationSchema.createdTables("CREATE TABLE a (x INTEGER);\nCREATE\n VIEW b (n) AS "
        + "SELECT COUNT(*) FROM a;"));
  }
}

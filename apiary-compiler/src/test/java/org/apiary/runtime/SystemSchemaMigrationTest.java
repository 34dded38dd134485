package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * A database holding version 3 of Apiary's system tables, with a recorded output in them, is migrated to the
 * current version in place: nothing recorded is lost, and what the new version added works. Runs its own VoltDB
 * server process, since the shared test database already has the current version.
 */
class SystemSchemaMigrationTest {
  /** Version 3's recorded-output tables and failure procedures, as that release created them. */
  private static String version3() {
    StringBuilder ddl = new StringBuilder("CREATE TABLE APIARY_SCHEMA_VERSION (version INTEGER NOT NULL, "
        + "PRIMARY KEY (version));\n");
    String[][] tables = {{"INTEGER", "BIGINT"}, {"VARCHAR", "VARCHAR(1024)"}, {"VARBINARY", "VARBINARY(1024)"}};
    for (String[] t : tables) {
      String name = "APIARY_RECORDED_" + t[0];
      ddl.append("CREATE TABLE ").append(name).append(" (pkey ").append(t[1]).append(" NOT NULL, invocation_id "
              + "VARCHAR(64) NOT NULL, function_name VARCHAR(64) NOT NULL, outputs VARBINARY(1048576) NOT NULL, "
              + "recorded_at TIMESTAMP NOT NULL, PRIMARY KEY (pkey, invocation_id, function_name));\n")
          .append("PARTITION TABLE ").append(name).append(" ON COLUMN pkey;\n")
          .append("CREATE INDEX ").append(name).append("_BY_TIME ON ").append(name).append(" (recorded_at);\n")
          .append("CREATE PROCEDURE ApiaryRecordFailure_").append(t[0]).append(" PARTITION ON TABLE ").append(name)
          .append(" COLUMN pkey PARAMETER 0 AS INSERT INTO ").append(name)
          .append(" (pkey, invocation_id, function_name, outputs, recorded_at) VALUES (?, ?, ?, ?, NOW);\n");
    }
    return ddl.toString();
  }

  @Test
  void version3IsMigratedInPlaceKeepingItsRecords() {
    try (LocalCluster cluster = LocalCluster.start(1, 2, 0, Duration.ofSeconds(120));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      db.loadSchema(version3());
      db.callAdmin("setting version 3", "@AdHoc", "INSERT INTO APIARY_SCHEMA_VERSION VALUES (3)");
      db.callAdmin("recording an output", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (4, 'old', 'f', x'5B5D', NOW)");

      SystemSchema.ensure(db);

      assertEquals(SystemSchema.VERSION, scalar(db, "SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
      assertEquals(1, scalar(db, "SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = 'old' "
          + "AND request_hash IS NULL"), "the version 3 record is kept");
      db.callAdmin("recording a failure with a request hash", SystemSchema.recordFailureProcedure(
          SystemSchema.RECORDED_INTEGER), 5L, "new", "f", new byte[] {'!'}, 42L);
      VoltTable found = db.callAdmin("finding an outcome by ID", SystemSchema.findOneTransactionOutcomeProcedure(
          SystemSchema.RECORDED_INTEGER), "new").getResults()[0];
      assertTrue(found.advanceRow(), "the new procedure finds a record by invocation ID");
      assertEquals("f", found.getString(0));
      SystemSchema.ensure(db); // again: nothing left to do
      assertEquals(SystemSchema.VERSION, scalar(db, "SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
    }
  }

  private static long scalar(ApiaryDatabase db, String sql) {
    VoltTable t = db.callAdmin("reading", "@AdHoc", sql).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }
}

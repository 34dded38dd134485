package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.RecordingMode;
import org.apiary.RegistrationException;
import org.apiary.SchemaMigration;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.migration.ReadV0;
import org.apiary.frontend.migration.ReadV3;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Schema changes (issue 44): a deploy applies the application's migrations the database lacks, on tables with rows,
 * together with the function that uses them, records each version, and refuses a migration that drops data or that
 * VoltDB cannot make on a table with rows unless data loss is allowed.
 */
@DatabaseTest
class SchemaMigrationTest {
  static final String SCHEMA = """
      CREATE TABLE sm_accounts (id BIGINT NOT NULL, balance BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE sm_accounts ON COLUMN id;
      """;
  static final SchemaMigration ADD_COLUMN = new SchemaMigration(1, "a nickname per account",
      "ALTER TABLE sm_accounts ADD COLUMN nickname VARCHAR(32) DEFAULT 'none';");
  static final SchemaMigration ADD_TABLE = new SchemaMigration(2, "notes on accounts", """
      CREATE TABLE sm_notes (account BIGINT NOT NULL, id BIGINT NOT NULL, note VARCHAR(64),
        PRIMARY KEY (account, id));
      PARTITION TABLE sm_notes ON COLUMN account;
      """);
  static final SchemaMigration ADD_INDEX = new SchemaMigration(3, "accounts by nickname",
      "CREATE INDEX sm_accounts_by_nickname ON sm_accounts (nickname);");
  static final SchemaMigration LOSSY = new SchemaMigration(4, "notes without text, a tier per account", """
      ALTER TABLE sm_notes DROP COLUMN note;
      ALTER TABLE sm_accounts ADD COLUMN tier INTEGER NOT NULL;
      """);

  static Graph reader(Class<? extends LocalFunction<Long>> function) {
    return Graph.named("smRead")
        .addLocalFunction("sm_read", function)
        .addEdge(Graph.SOURCE, "sm_read", ApiaryFunction.SOURCE, Long.class)
        .addEdge("sm_read", Graph.SINK, ApiaryFunction.SINK);
  }

  @Test
  void aDeployMigratesTablesWithRowsAndRefusesDataLossUnlessAllowed(TestDatabase database) {
    ApiaryDatabase db = database.database();
    Registrar.register(db, Application.of(SCHEMA, reader(ReadV0.class)));
    adHoc(db, "INSERT INTO sm_accounts VALUES (1, 100);");
    adHoc(db, "INSERT INTO sm_accounts VALUES (2, 200);");
    assertEquals("balance=100", read(db, 1L));

    // Add a column, a table and an index, and change the function to use them, in one deploy.
    Application v3 = Application.of(SCHEMA, reader(ReadV3.class)).withMigrations(ADD_COLUMN, ADD_TABLE, ADD_INDEX);
    Registrar.register(db, v3);
    assertEquals(List.of(1L, 2L, 3L), longs(db, "SELECT version FROM APIARY_APPLICATION_SCHEMA ORDER BY version"));
    assertEquals("balance=100 nickname=none notes=0 same=1", read(db, 1L));
    adHoc(db, "INSERT INTO sm_notes VALUES (2, 1, 'vip');");
    assertEquals("balance=200 nickname=none notes=1 same=1", read(db, 2L));
    assertTrue(indexes(db).contains("SM_ACCOUNTS_BY_NICKNAME"), indexes(db).toString());

    Registrar.register(db, v3); // again: nothing to apply
    assertEquals(List.of(3L), longs(db, "SELECT MAX(version) FROM APIARY_APPLICATION_SCHEMA"));

    // A deployed schema edited in place instead of migrated: named, not VoltDB's "object not found".
    Application edited = Application.of(SCHEMA.replace("balance BIGINT NOT NULL,", "balance BIGINT NOT NULL, "
        + "email VARCHAR(64),"), reader(ReadV3.class)).withMigrations(ADD_COLUMN, ADD_TABLE, ADD_INDEX);
    String editedProblems = String.join("\n",
        assertThrows(RegistrationException.class, () -> Registrar.register(db, edited)).problems());
    assertTrue(editedProblems.contains("declares column(s) [EMAIL] of table SM_ACCOUNTS")
        && editedProblems.contains("append a SchemaMigration"), editedProblems);

    // A migration that drops a column's data and one VoltDB cannot make on rows: both named, nothing changed.
    Application v4 = v3.withMigrations(LOSSY);
    RegistrationException refused = assertThrows(RegistrationException.class, () -> Registrar.register(db, v4));
    String all = String.join("\n", refused.problems());
    assertTrue(all.contains("migration 4") && all.contains("ALTER TABLE sm_notes DROP COLUMN note")
        && all.contains("SM_NOTES, which has 1 row(s)"), all);
    assertTrue(all.contains("ALTER TABLE sm_accounts ADD COLUMN tier INTEGER NOT NULL")
        && all.contains("SM_ACCOUNTS, which has 2 row(s)") && all.contains("--allow-data-loss"), all);
    assertEquals(List.of(3L), longs(db, "SELECT MAX(version) FROM APIARY_APPLICATION_SCHEMA"));
    assertEquals(List.of(1L), longs(db, "SELECT COUNT(note) FROM sm_notes"));
    assertEquals(List.of(2L), longs(db, "SELECT COUNT(*) FROM sm_accounts"));

    Registrar.register(db, v4, RecordingMode.SELECTIVE, true);
    assertEquals(List.of(4L), longs(db, "SELECT MAX(version) FROM APIARY_APPLICATION_SCHEMA"));
    assertEquals(List.of(0L), longs(db, "SELECT COUNT(*) FROM sm_accounts"), "the accounts were not emptied");
    assertEquals(List.of(1L), longs(db, "SELECT COUNT(*) FROM sm_notes"), "a dropped column took the rows");
    assertThrows(RuntimeException.class, () -> adHoc(db, "SELECT note FROM sm_notes;"));
  }

  private static String read(ApiaryDatabase db, long account) {
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
      return client.invoke("smRead", account, 0L).values(String.class).get(0);
    }
  }

  private static void adHoc(ApiaryDatabase db, String sql) {
    db.callAdmin("test statement", "@AdHoc", sql);
  }

  private static List<Long> longs(ApiaryDatabase db, String sql) {
    VoltTable t = db.callAdmin("test query", "@AdHoc", sql).getResults()[0];
    List<Long> values = new ArrayList<>();
    while (t.advanceRow()) {
      values.add(t.getLong(0));
    }
    return values;
  }

  private static List<String> indexes(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("listing indexes", "@SystemCatalog", "INDEXINFO").getResults()[0];
    List<String> names = new ArrayList<>();
    while (t.advanceRow()) {
      names.add(String.valueOf(t.getString("INDEX_NAME")).toUpperCase(java.util.Locale.ROOT));
    }
    return names;
  }
}

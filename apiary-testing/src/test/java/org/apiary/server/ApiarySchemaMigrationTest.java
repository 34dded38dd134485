package org.apiary.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.RegistrationException;
import org.apiary.SchemaMigration;
import org.apiary.database.DatabaseConfig;
import org.apiary.examples.bank.BankApp;
import org.apiary.examples.bank.Deposit;
import org.junit.jupiter.api.Test;

/**
 * Schema migrations through the front door on a new database (issue 44): the schema and every migration arrive in
 * one deploy and their versions are recorded; a later deploy applies only the migration added since; a migration
 * number out of order is refused when the application is declared.
 */
class ApiarySchemaMigrationTest {
  static final SchemaMigration NICKNAME = new SchemaMigration(1, "a nickname per account",
      "ALTER TABLE accounts ADD COLUMN nickname VARCHAR(32) DEFAULT 'none';");
  static final SchemaMigration NOTES = new SchemaMigration(2, "notes on accounts", """
      CREATE TABLE notes (account BIGINT NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (account, id));
      PARTITION TABLE notes ON COLUMN account;
      CREATE INDEX accounts_by_nickname ON accounts (nickname);
      """);
  static final SchemaMigration LIMIT = new SchemaMigration(3, "a credit limit per account",
      "ALTER TABLE accounts ADD COLUMN credit_limit BIGINT DEFAULT 0;");

  @Test
  void aNewDatabaseGetsTheSchemaAndEveryMigrationAndALaterDeployOnlyTheNewOne() {
    try (Apiary apiary = Apiary.start(DatabaseConfig.embedded(2))) {
      Application v2 = Application.of(BankApp.SCHEMA, Graph.ofFunction("deposit", Deposit.class))
          .withMigrations(NICKNAME, NOTES);
      apiary.deploy(v2);
      apiary.query("INSERT INTO accounts (id, owner, balance) VALUES (?, ?, ?)", 7L, "eve", 10L);
      assertEquals("none", apiary.query("SELECT nickname FROM accounts WHERE id = ?", 7L).rows().get(0)
          .getString("nickname"));
      assertEquals(List.of(1L, 2L), versions(apiary));

      apiary.deploy(v2.withMigrations(LIMIT));
      assertEquals(List.of(1L, 2L, 3L), versions(apiary));
      assertEquals(0L, apiary.query("SELECT credit_limit FROM accounts WHERE id = ?", 7L).rows().get(0)
          .getLong("credit_limit"), "the row got the new column's default");
      assertEquals(15L, apiary.invoke("deposit", 7L, 5L).value(Long.class));
    }
    RegistrationException outOfOrder = assertThrows(RegistrationException.class,
        () -> Application.of(BankApp.SCHEMA, Graph.ofFunction("deposit", Deposit.class)).withMigrations(NOTES));
    assertTrue(outOfOrder.problems().get(0).contains("schema migration 2 is number 1"), outOfOrder.problems().toString());
  }

  private static List<Long> versions(Apiary apiary) {
    return apiary.query("SELECT version FROM APIARY_APPLICATION_SCHEMA ORDER BY version").rows().stream()
        .map(r -> r.getLong("version")).toList();
  }
}

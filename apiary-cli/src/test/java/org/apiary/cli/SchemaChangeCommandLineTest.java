package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema changes through the command line (issue 44): {@code start}, {@code deploy} of an application, calls that
 * write rows, a {@code deploy} of the next release whose migrations add a column, a table and an index and whose
 * function uses them (the rows kept), a {@code deploy} of a migration that drops data (refused, naming it, nothing
 * changed), the same with {@code --allow-data-loss} (made), and {@code sql} reading the recorded versions.
 */
class SchemaChangeCommandLineTest {
  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration COMMAND = Duration.ofSeconds(60);
  private static final String PACKAGE = "com.example.ledger";

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  void deployAppliesMigrationsOnRowsAndRefusesDataLossUnlessAllowed() throws Exception {
    Path data = work.resolve("data");
    Path v0 = ledgerJar("v0", "", "\"balance=\" + row.getLong(\"balance\")", "SELECT balance FROM accounts WHERE id = ?");
    Path v3 = ledgerJar("v3", MIGRATIONS_1_TO_3,
        "\"balance=\" + row.getLong(\"balance\") + \" nickname=\" + row.getString(\"nickname\")",
        "SELECT balance, nickname FROM accounts WHERE id = ?");
    Path v4 = ledgerJar("v4", MIGRATIONS_1_TO_3 + ", " + MIGRATION_4,
        "\"balance=\" + row.getLong(\"balance\") + \" nickname=\" + row.getString(\"nickname\")",
        "SELECT balance, nickname FROM accounts WHERE id = ?");

    Path log = Files.createTempFile(work, "service-", ".log");
    Process service = cli.start(log, "-Xmx768m", "start", "--data", data.toString());
    awaitReady(service, log, data);

    assertEquals(0, run("deploy", v0.toString(), "--data", data.toString()).exit());
    assertTrue(invoke(data, "ledger_open", "--key", "1", "100").contains("100"));

    Result migrated = run("deploy", v3.toString(), "--data", data.toString());
    assertEquals(0, migrated.exit(), migrated.toString());
    assertTrue(invoke(data, "ledger_read", "--key", "1", "0").contains("balance=100 nickname=none"),
        "the column was added to the row, and the changed function reads it");
    assertEquals("1", invoke(data, "ledger_note", "--key", "1", "7"), "the new table takes rows");

    Result refused = run("deploy", v4.toString(), "--data", data.toString());
    assertEquals(1, refused.exit(), refused.toString());
    assertTrue(refused.err().contains("was not deployed; nothing changed")
        && refused.err().contains("migration 4") && refused.err().contains("ALTER TABLE notes DROP COLUMN body")
        && refused.err().contains("NOTES, which has 1 row(s)") && refused.err().contains("--allow-data-loss"),
        refused.toString());

    Result allowed = run("deploy", v4.toString(), "--data", data.toString(), "--allow-data-loss");
    assertEquals(0, allowed.exit(), allowed.toString());
    assertEquals("2", invoke(data, "ledger_note", "--key", "1", "8"), "the notes kept their rows, not the column");

    Result sql = run("sql", "SELECT version FROM APIARY_APPLICATION_SCHEMA ORDER BY version", "--data",
        data.toString());
    assertEquals(0, sql.exit(), sql.toString());
    assertTrue(sql.out().contains("VERSION") && sql.out().matches("(?s).*1\\s+2\\s+3\\s+4\\s*"), sql.toString());

    // Not `apiary stop`: its snapshot (tested in ServiceCommandLineTest) took 36-46 s here.
    service.destroyForcibly();
    assertTrue(service.waitFor(20, TimeUnit.SECONDS), "the service exited");
  }

  private static final String MIGRATIONS_1_TO_3 = """
      new SchemaMigration(1, "a nickname per account",
          "ALTER TABLE accounts ADD COLUMN nickname VARCHAR(32) DEFAULT 'none';"),
      new SchemaMigration(2, "notes on accounts",
          "CREATE TABLE notes (account BIGINT NOT NULL, id BIGINT NOT NULL, body VARCHAR(64), PRIMARY KEY (account, id));"
          + "PARTITION TABLE notes ON COLUMN account;"),
      new SchemaMigration(3, "accounts by nickname", "CREATE INDEX accounts_by_nickname ON accounts (nickname);")""";
  private static final String MIGRATION_4 = """
      new SchemaMigration(4, "notes without a body", "ALTER TABLE notes DROP COLUMN body;")""";

  private void awaitReady(Process p, Path log, Path data) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.readString(log).contains("apiary: ready: frontend ") && Files.exists(data.resolve(ServiceDirectory.STATE))) {
        return;
      }
      if (!p.isAlive()) {
        throw new AssertionError("apiary start exited with " + p.exitValue() + ":\n" + Files.readString(log));
      }
      Thread.sleep(100);
    }
    throw new AssertionError("apiary start was not ready within " + START + ":\n" + Files.readString(log));
  }

  private Result run(String... args) throws IOException, InterruptedException {
    return cli.run(COMMAND, args);
  }

  private String invoke(Path data, String... args) throws Exception {
    List<String> all = new ArrayList<>(List.of("invoke"));
    all.addAll(List.of(args));
    all.addAll(List.of("--data", data.toString()));
    Result r = run(all.toArray(String[]::new));
    assertEquals(0, r.exit(), r.toString());
    return r.out().strip();
  }

  /**
   * A ledger application: {@code ledger_open} sets an account's balance, {@code ledger_read} returns {@code readExpression} of the
   * account's row as {@code readSql} selects it, and (with migrations) {@code ledger_note} adds a note and counts them.
   */
  private Path ledgerJar(String name, String migrations, String readExpression, String readSql)
      throws IOException, URISyntaxException {
    boolean notes = !migrations.isEmpty();
    Map<String, String> sources = new java.util.HashMap<>(Map.of(
        "LedgerApp", """
            package com.example.ledger;

            import org.apiary.ApiaryFunction;
            import org.apiary.Application;
            import org.apiary.Graph;
            import org.apiary.SchemaMigration;

            public final class LedgerApp {
              static final String SCHEMA = "CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT NOT NULL, "
                  + "PRIMARY KEY (id)); PARTITION TABLE accounts ON COLUMN id;";

              public static Application application() {
                Application app = Application.of(SCHEMA,
                    Graph.ofFunction("ledger_open", Open.class),
                    Graph.ofFunction("ledger_read", Read.class)%s);
                return app.withMigrations(%s);
              }

              private LedgerApp() {}
            }
            """.formatted(notes ? ", Graph.ofFunction(\"ledger_note\", Note.class)" : "", migrations),
        "Open", """
            package com.example.ledger;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Open extends LocalFunction<Long> {
              static final Statement PUT = Statement.of("UPSERT INTO accounts (id, balance) VALUES (?, ?)");

              @Override
              protected void run() {
                long balance = retrieveInput(SOURCE, Long.class);
                queueSQL(PUT, partitionKey(), balance);
                executeSQL();
                returnOutput(balance);
              }
            }
            """,
        "Read", """
            package com.example.ledger;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Read extends LocalFunction<Long> {
              static final Statement GET = Statement.of("%s");

              @Override
              protected void run() {
                retrieveInput(SOURCE, Long.class);
                queueSQL(GET, partitionKey());
                var row = executeSQL().get(0).firstRow().orElseThrow();
                returnOutput(%s);
              }
            }
            """.formatted(readSql, readExpression)));
    if (notes) {
      sources.put("Note", """
          package com.example.ledger;

          import org.apiary.LocalFunction;
          import org.apiary.Statement;

          public class Note extends LocalFunction<Long> {
            static final Statement PUT = Statement.of("INSERT INTO notes (account, id) VALUES (?, ?)");
            static final Statement COUNT = Statement.of("SELECT COUNT(*) AS n FROM notes WHERE account = ?");

            @Override
            protected void run() {
              long id = retrieveInput(SOURCE, Long.class);
              queueSQL(PUT, partitionKey(), id);
              queueSQL(COUNT, partitionKey());
              returnOutput(executeSQL().get(1).firstRow().orElseThrow().getLong("n"));
            }
          }
          """);
    }
    return CliProcesses.applicationJar(work, "ledger-" + name, PACKAGE, "LedgerApp", sources);
  }
}

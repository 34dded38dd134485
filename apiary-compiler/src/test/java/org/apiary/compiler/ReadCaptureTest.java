package org.apiary.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apiary.compiler.ReadCapture.Augmented;
import org.apiary.compiler.ReadCapture.KeyColumn;
import org.apiary.compiler.ReadCapture.NotCapturable;
import org.apiary.compiler.ReadCapture.Result;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.voltdb.catalog.Catalog;
import org.voltdb.catalog.Database;
import org.voltdb.compiler.PlannerTool;
import org.voltdb.compiler.VoltCompiler;
import org.voltdb.planner.CompiledPlan;
import org.voltdb.planner.StatementPartitioning;
import org.voltdb.plannodes.SchemaColumn;

class ReadCaptureTest {
  /**
   * A partitioned table with a one-column key, a partitioned table with a composite key declared in an order that is
   * not alphabetical, a replicated table, a table without a key, and a view.
   */
  static final String SCHEMA = """
      CREATE TABLE counters (k INTEGER NOT NULL, v BIGINT, PRIMARY KEY (k));
      PARTITION TABLE counters ON COLUMN k;
      CREATE TABLE accounts (branch INTEGER NOT NULL, acct INTEGER NOT NULL, owner VARCHAR(64), balance BIGINT,
          currency VARCHAR(3), PRIMARY KEY (branch, acct));
      PARTITION TABLE accounts ON COLUMN branch;
      CREATE TABLE currencies (code VARCHAR(3) NOT NULL PRIMARY KEY, rate FLOAT);
      CREATE TABLE events (msg VARCHAR(100), happened_at TIMESTAMP);
      CREATE VIEW balances (branch, n, total) AS SELECT branch, COUNT(*), SUM(balance) FROM accounts GROUP BY branch;
      """;

  private static SchemaPlanner schemaPlanner;
  private static PlannerTool plannerTool;
  private static Map<String, List<String>> keys;

  @BeforeAll
  static void compileSchema() throws IOException {
    schemaPlanner = SchemaPlanner.forSchema(SCHEMA);
    // SchemaPlanner keeps its catalog to itself, so compile it once more here, for the keys and the result columns.
    Path file = Files.createTempFile("read-capture-", ".sql");
    try {
      Files.writeString(file, SCHEMA);
      VoltCompiler compiler = new VoltCompiler(false);
      Catalog catalog = compiler.compileCatalogFromDDL(file.toString());
      Database database = VoltCompiler.getCatalogDatabase(catalog);
      plannerTool = new PlannerTool(database, new byte[20]);
      keys = ReadCapture.primaryKeys(database);
    } catch (VoltCompiler.VoltCompilerException e) {
      throw new AssertionError(e);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** The result column names VoltDB's planner gives a statement, upper-case. */
  private static List<String> resultColumns(String sql) {
    CompiledPlan plan = plannerTool.planSqlCore(sql, StatementPartitioning.inferPartitioning());
    List<String> names = new ArrayList<>();
    for (SchemaColumn column : plan.rootPlanGraph.getTrueOutputSchema(false)) {
      names.add(column.getColumnAlias().toUpperCase(Locale.ROOT));
    }
    return names;
  }

  /**
   * Augments, checks the text, checks that VoltDB plans the augmented statement as a read and that its result is
   * the original result columns followed by one column per key column.
   */
  private static Augmented capturable(String sql, String expected, KeyColumn... expectedKeys) {
    Result result = ReadCapture.augment(sql, keys, schemaPlanner::plan);
    if (result instanceof NotCapturable n) {
      fail("not capturable: " + n.reason());
    }
    Augmented augmented = (Augmented) result;
    assertEquals(sql, augmented.sql());
    assertEquals(expected, augmented.augmentedSql());
    assertEquals(List.of(expectedKeys), augmented.keyColumns());
    assertTrue(schemaPlanner.plan(augmented.augmentedSql()).readOnly());

    List<String> original = resultColumns(sql);
    List<String> expectedColumns = new ArrayList<>(original);
    augmented.keyColumns().forEach(k -> expectedColumns.add(k.alias()));
    assertEquals(expectedColumns, resultColumns(augmented.augmentedSql()));
    return augmented;
  }

  private static String notCapturable(String sql) {
    Result result = ReadCapture.augment(sql, keys);
    NotCapturable n = assertInstanceOf(NotCapturable.class, result, () -> "captured: " + result);
    assertEquals(sql, n.sql());
    return n.reason();
  }

  private static void assertContains(String expected, String actual) {
    assertTrue(actual.contains(expected), () -> "expected '" + expected + "' in: " + actual);
  }

  private static KeyColumn key(String table, String qualifier, String column, int n) {
    return new KeyColumn(table, qualifier, column, "APIARY_PK_" + n);
  }

  // ---- the catalog

  @Test
  void primaryKeysComeFromTheCatalogInKeyOrderWithoutViews() {
    assertEquals(Map.of("COUNTERS", List.of("K"), "ACCOUNTS", List.of("BRANCH", "ACCT"),
        "CURRENCIES", List.of("CODE"), "EVENTS", List.of()), keys);
  }

  // ---- capturable

  @Test
  void singleColumnKeyIsAddedAfterTheSelectList() {
    capturable("SELECT v FROM counters WHERE k = ?",
        "SELECT v, counters.K AS APIARY_PK_0 FROM counters WHERE k = ?",
        key("COUNTERS", "counters", "K", 0));
  }

  @Test
  void starIsKeptAndTheKeyAppended() {
    capturable("SELECT * FROM counters WHERE k = ?",
        "SELECT *, counters.K AS APIARY_PK_0 FROM counters WHERE k = ?",
        key("COUNTERS", "counters", "K", 0));
    capturable("SELECT c.* FROM counters c WHERE c.k = ?",
        "SELECT c.*, c.K AS APIARY_PK_0 FROM counters c WHERE c.k = ?",
        key("COUNTERS", "c", "K", 0));
  }

  @Test
  void aliasQualifiesTheCompositeKeyInKeyOrder() {
    capturable("SELECT a.balance FROM accounts a WHERE a.branch = ?",
        "SELECT a.balance, a.BRANCH AS APIARY_PK_0, a.ACCT AS APIARY_PK_1 FROM accounts a WHERE a.branch = ?",
        key("ACCOUNTS", "a", "BRANCH", 0), key("ACCOUNTS", "a", "ACCT", 1));
    capturable("SELECT a.balance AS bal FROM accounts AS a WHERE a.branch = ?",
        "SELECT a.balance AS bal, a.BRANCH AS APIARY_PK_0, a.ACCT AS APIARY_PK_1 FROM accounts AS a WHERE a.branch = ?",
        key("ACCOUNTS", "a", "BRANCH", 0), key("ACCOUNTS", "a", "ACCT", 1));
  }

  @Test
  void replicatedTable() {
    capturable("SELECT rate FROM currencies WHERE code = ?",
        "SELECT rate, currencies.CODE AS APIARY_PK_0 FROM currencies WHERE code = ?",
        key("CURRENCIES", "currencies", "CODE", 0));
  }

  @Test
  void joinsAddTheKeysOfEveryTableInFromOrder() {
    capturable("SELECT a.balance, x.rate FROM accounts a JOIN currencies x ON a.currency = x.code WHERE a.branch = ?",
        "SELECT a.balance, x.rate, a.BRANCH AS APIARY_PK_0, a.ACCT AS APIARY_PK_1, x.CODE AS APIARY_PK_2"
            + " FROM accounts a JOIN currencies x ON a.currency = x.code WHERE a.branch = ?",
        key("ACCOUNTS", "a", "BRANCH", 0), key("ACCOUNTS", "a", "ACCT", 1), key("CURRENCIES", "x", "CODE", 2));
    // Comma join, no aliases on one side.
    capturable("SELECT v, balance FROM counters, accounts a WHERE counters.k = a.branch AND counters.k = ?",
        "SELECT v, balance, counters.K AS APIARY_PK_0, a.BRANCH AS APIARY_PK_1, a.ACCT AS APIARY_PK_2"
            + " FROM counters, accounts a WHERE counters.k = a.branch AND counters.k = ?",
        key("COUNTERS", "counters", "K", 0), key("ACCOUNTS", "a", "BRANCH", 1), key("ACCOUNTS", "a", "ACCT", 2));
    // Outer join: the right-hand key is NULL where nothing matched.
    capturable("SELECT a.acct, x.rate FROM accounts a LEFT OUTER JOIN currencies x ON a.currency = x.code",
        "SELECT a.acct, x.rate, a.BRANCH AS APIARY_PK_0, a.ACCT AS APIARY_PK_1, x.CODE AS APIARY_PK_2"
            + " FROM accounts a LEFT OUTER JOIN currencies x ON a.currency = x.code",
        key("ACCOUNTS", "a", "BRANCH", 0), key("ACCOUNTS", "a", "ACCT", 1), key("CURRENCIES", "x", "CODE", 2));
  }

  @Test
  void selfJoinKeepsTheTwoOccurrencesApart() {
    capturable("SELECT x.rate, y.rate FROM currencies x JOIN currencies y ON x.rate = y.rate",
        "SELECT x.rate, y.rate, x.CODE AS APIARY_PK_0, y.CODE AS APIARY_PK_1"
            + " FROM currencies x JOIN currencies y ON x.rate = y.rate",
        key("CURRENCIES", "x", "CODE", 0), key("CURRENCIES", "y", "CODE", 1));
    capturable("SELECT a.balance FROM accounts a JOIN accounts b USING (branch, acct) WHERE a.branch = ?",
        "SELECT a.balance, a.BRANCH AS APIARY_PK_0, a.ACCT AS APIARY_PK_1, b.BRANCH AS APIARY_PK_2,"
            + " b.ACCT AS APIARY_PK_3 FROM accounts a JOIN accounts b USING (branch, acct) WHERE a.branch = ?",
        key("ACCOUNTS", "a", "BRANCH", 0), key("ACCOUNTS", "a", "ACCT", 1),
        key("ACCOUNTS", "b", "BRANCH", 2), key("ACCOUNTS", "b", "ACCT", 3));
  }

  @Test
  void orderByLimitAndOffsetStayAfterTheAddedColumns() {
    capturable("SELECT acct, balance FROM accounts WHERE branch = ? ORDER BY balance DESC, 1 LIMIT ? OFFSET ?",
        "SELECT acct, balance, accounts.BRANCH AS APIARY_PK_0, accounts.ACCT AS APIARY_PK_1"
            + " FROM accounts WHERE branch = ? ORDER BY balance DESC, 1 LIMIT ? OFFSET ?",
        key("ACCOUNTS", "accounts", "BRANCH", 0), key("ACCOUNTS", "accounts", "ACCT", 1));
    capturable("SELECT code FROM currencies ORDER BY rate LIMIT 10",
        "SELECT code, currencies.CODE AS APIARY_PK_0 FROM currencies ORDER BY rate LIMIT 10",
        key("CURRENCIES", "currencies", "CODE", 0));
  }

  @Test
  void keywordAndIdentifierCaseIsKept() {
    capturable("select v from counters where k = ?",
        "select v, counters.K AS APIARY_PK_0 from counters where k = ?",
        key("COUNTERS", "counters", "K", 0));
    capturable("SeLeCt V FrOm COUNTERS C wHeRe C.K = ?",
        "SeLeCt V, C.K AS APIARY_PK_0 FrOm COUNTERS C wHeRe C.K = ?",
        key("COUNTERS", "C", "K", 0));
    capturable("SELECT \"V\" FROM \"COUNTERS\" WHERE \"K\" = ?",
        "SELECT \"V\", \"COUNTERS\".K AS APIARY_PK_0 FROM \"COUNTERS\" WHERE \"K\" = ?",
        key("COUNTERS", "\"COUNTERS\"", "K", 0));
  }

  @Test
  void multiLineTextWithCommentsAndParenthesesIsOtherwiseUntouched() {
    capturable("""
        SELECT k,
               (v + 1) -- the next value
          FROM counters
         WHERE k = ?""", """
        SELECT k,
               (v + 1), counters.K AS APIARY_PK_0 -- the next value
          FROM counters
         WHERE k = ?""",
        key("COUNTERS", "counters", "K", 0));
    // Windows line ends, a tab, a non-ASCII literal and a block comment before FROM; positions count each right.
    capturable("SELECT\tv,\r\n 'é€😀' AS s /* why */\r\nFROM counters\r\nWHERE k = ?",
        "SELECT\tv,\r\n 'é€😀' AS s, counters.K AS APIARY_PK_0 /* why */\r\nFROM counters\r\nWHERE k = ?",
        key("COUNTERS", "counters", "K", 0));
    // Old Mac line ends: a lone CR ends a line for Calcite too.
    capturable("SELECT k,\r(v)\rFROM counters",
        "SELECT k,\r(v), counters.K AS APIARY_PK_0\rFROM counters",
        key("COUNTERS", "counters", "K", 0));
    capturable("SELECT CASE WHEN v > 0 THEN 'up' ELSE 'down' END\nFROM counters WHERE k = ?;\n",
        "SELECT CASE WHEN v > 0 THEN 'up' ELSE 'down' END, counters.K AS APIARY_PK_0\nFROM counters WHERE k = ?;\n",
        key("COUNTERS", "counters", "K", 0));
  }

  @Test
  void rowsReadOnlyIncidentallyAreNotCaptured() {
    // The subquery's rows and the window's other rows decide what is returned but are not returned.
    capturable("SELECT x.code FROM currencies x WHERE EXISTS (SELECT 1 FROM currencies y WHERE y.rate > x.rate)",
        "SELECT x.code, x.CODE AS APIARY_PK_0"
            + " FROM currencies x WHERE EXISTS (SELECT 1 FROM currencies y WHERE y.rate > x.rate)",
        key("CURRENCIES", "x", "CODE", 0));
    capturable("SELECT k, RANK() OVER (PARTITION BY k ORDER BY v) FROM counters",
        "SELECT k, RANK() OVER (PARTITION BY k ORDER BY v), counters.K AS APIARY_PK_0 FROM counters",
        key("COUNTERS", "counters", "K", 0));
  }

  @Test
  void plannerCallbackRejectionMakesItNotCapturable() {
    Result result = ReadCapture.augment("SELECT v FROM counters WHERE k = ?", keys, sql -> {
      throw new IllegalArgumentException("no such thing");
    });
    String reason = assertInstanceOf(NotCapturable.class, result).reason();
    assertContains("VoltDB cannot plan", reason);
    assertContains("no such thing", reason);
  }

  // ---- not capturable

  @Test
  void aggregatesAreNotCapturable() {
    assertContains("aggregate function COUNT", notCapturable("SELECT COUNT(*) FROM counters"));
    assertContains("aggregate function SUM", notCapturable("SELECT sum(v) FROM counters WHERE k = ?"));
    assertContains("aggregate function MAX", notCapturable("SELECT k, v + MAX(v) FROM counters"));
    assertContains("aggregate function AVG", notCapturable("SELECT k FROM counters ORDER BY AVG(v)"));
    assertContains("aggregate function APPROX_COUNT_DISTINCT",
        notCapturable("SELECT APPROX_COUNT_DISTINCT(v) FROM counters"));
  }

  @Test
  void groupByHavingAndDistinctAreNotCapturable() {
    assertContains("GROUP BY", notCapturable("SELECT branch, COUNT(*) FROM accounts GROUP BY branch"));
    assertContains("GROUP BY", notCapturable("SELECT branch FROM accounts GROUP BY branch"));
    assertContains("HAVING", notCapturable("SELECT 1 FROM accounts HAVING 1 = 1"));
    assertContains("DISTINCT", notCapturable("SELECT DISTINCT currency FROM accounts"));
  }

  @Test
  void setOperationsAreNotCapturable() {
    assertContains("UNION", notCapturable("SELECT k FROM counters UNION SELECT branch FROM accounts"));
    assertContains("UNION", notCapturable("SELECT k FROM counters UNION ALL SELECT branch FROM accounts ORDER BY 1"));
    assertContains("INTERSECT", notCapturable("SELECT k FROM counters INTERSECT SELECT branch FROM accounts"));
    assertContains("EXCEPT", notCapturable("SELECT k FROM counters EXCEPT SELECT branch FROM accounts"));
  }

  @Test
  void subqueriesInFromOrInTheSelectListAreNotCapturable() {
    assertContains("subquery in FROM", notCapturable("SELECT s.v FROM (SELECT v FROM counters) s"));
    assertContains("subquery in FROM",
        notCapturable("SELECT a.balance FROM accounts a JOIN (SELECT code FROM currencies) c ON a.currency = c.code"));
    assertContains("subquery in the select list",
        notCapturable("SELECT k, (SELECT rate FROM currencies WHERE code = 'EUR') FROM counters"));
  }

  @Test
  void tablesWithoutAKeyViewsAndUnknownTablesAreNotCapturable() {
    assertContains("table EVENTS has no primary key", notCapturable("SELECT msg FROM events"));
    assertContains("table EVENTS has no primary key",
        notCapturable("SELECT c.v FROM counters c JOIN events e ON c.v = e.happened_at"));
    assertContains("BALANCES is not a table of the schema", notCapturable("SELECT total FROM balances"));
    assertContains("NOPE is not a table of the schema", notCapturable("SELECT x FROM nope"));
  }

  @Test
  void statementsThatAreNotSelectsAreNotCapturable() {
    assertContains("not a SELECT", notCapturable("INSERT INTO counters VALUES (?, ?)"));
    assertContains("not a SELECT", notCapturable("UPDATE counters SET v = v + 1 WHERE k = ?"));
    assertContains("not a SELECT", notCapturable("DELETE FROM counters WHERE k = ?"));
    assertContains("cannot parse", notCapturable("TRUNCATE TABLE counters"));
    assertContains("cannot parse", notCapturable("SELECT FROM"));
  }

  @Test
  void aSelectListThatAlreadyUsesTheAliasPrefixIsNotCapturable() {
    assertContains("APIARY_PK_", notCapturable("SELECT v AS apiary_pk_0 FROM counters"));
  }
}

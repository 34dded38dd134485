package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/** The provenance scenario against the embedded database, captured into its DuckDB sink. */
@DatabaseTest
class ProvenanceScenarioTest {
  private static void register(ApiaryDatabase db) {
    ItemsApp.registerOnce(db);
  }

  @Test
  void aGraphOfTwoFunctionsLeavesExactlyItsOrderedEvents(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    register(db);
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withCaller("alice"))) {
      GraphResult r = client.invoke("itemLifecycle", 41L, "widget");
      assertEquals(List.of("widget", 5), r.values(List.class).get(0));
      assertThrows(FunctionFailedException.class, () -> client.invoke("stockThenFail", 42L, "gadget"));

      List<String> expected = List.of(
          "stock insert 41 widget 1",
          "stock update 41 widget 5",
          "audit read 41 null null",
          "audit delete 41 widget 5");
      String url = db.config().provenance().sinkUrl();
      assertEquals(expected, awaitEvents(url, 41L, expected.size()));
      assertEquals(List.of(), awaitEvents(url, 42L, 0), "an aborted function leaves no events");
      try (Connection c = DriverManager.getConnection(url);
           PreparedStatement s = c.prepareStatement("SELECT function_name, graph_id, caller FROM FunctionInvocations "
               + "WHERE execution_id = ? ORDER BY event_time, tx_id")) {
        s.setString(1, r.invocationId());
        List<String> functions = new ArrayList<>();
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            functions.add(rs.getString(1) + "@" + rs.getString(2) + " by " + rs.getString(3));
          }
        }
        assertEquals(List.of("stock@itemLifecycle by alice", "audit@itemLifecycle by alice"), functions);
      }
    }
  }

  @Test
  void aReplayedFunctionLeavesNoDuplicates(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    register(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    Invocation stock = new Invocation(Map.of("source", List.of(Json.tree("replayed"))), "inv-replay-51", true,
        "itemLifecycle", null, false, false, null);
    assertEquals(false, invoker.callAsync("stock", 51L, stock).get(30, TimeUnit.SECONDS).replayed());
    assertEquals(true, invoker.callAsync("stock", 51L, stock).get(30, TimeUnit.SECONDS).replayed());
    String url = db.config().provenance().sinkUrl();
    assertEquals(List.of("stock insert 51 replayed 1", "stock update 51 replayed 5"), awaitEvents(url, 51L, 2));
    try (Connection c = DriverManager.getConnection(url);
         PreparedStatement s = c.prepareStatement("SELECT mode, COUNT(*) FROM FunctionInvocations WHERE execution_id = ? "
             + "GROUP BY mode ORDER BY mode")) {
      s.setString(1, "inv-replay-51");
      List<String> modes = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          modes.add(rs.getString(1) + "=" + rs.getLong(2));
        }
      }
      // The replay is not a second execution that ran: its row says it was answered from the record.
      assertEquals(List.of("ran=1", "recorded=1"), modes);
    }
  }

  /** Events about item {@code id}, as "function type id name qty", in the documented order of a record's events. */
  private static List<String> awaitEvents(String url, long id, int expected) throws Exception {
    // Writes arrive through VoltDB's export within its flush interval; wait for them, or (expecting none) long
    // enough that any would have arrived.
    long deadline = System.nanoTime() + (expected > 0 ? Duration.ofSeconds(30) : Duration.ofSeconds(3)).toNanos();
    List<String> events;
    do {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      events = events(url, id);
      if (expected > 0 && events.size() >= expected) {
        return events;
      }
      Thread.sleep(200);
    } while (System.nanoTime() < deadline);
    return events;
  }

  private static List<String> events(String url, long id) throws Exception {
    try (Connection c = DriverManager.getConnection(url);
         PreparedStatement s = c.prepareStatement("SELECT f.function_name, e.event_type, e.id, e.name, e.qty "
             + "FROM itemsEvents e LEFT JOIN FunctionInvocations f ON f.exec_id = e.exec_id WHERE e.id = ? "
             + "ORDER BY " + ProvenanceSchema.eventOrder("e"))) {
      s.setLong(1, id);
      List<String> rows = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          rows.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getLong(3) + " " + rs.getString(4) + " "
              + rs.getObject(5));
        }
      }
      return rows;
    }
  }
}

package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * Issue 43 item 1 against the embedded database and its DuckDB sink: an ended invocation has its row in
 * {@code Invocations} (status as {@code executions list --status} names it, and the error of a failure), and a function
 * answered from its recorded outputs has a {@code FunctionInvocations} row with {@code mode = 'recorded'} and no
 * events. The sink is read with plain SQL.
 */
@DatabaseTest
class InvocationsProvenanceTest {
  /** One Invocations row, as read back. */
  private record Row(String graph, long version, String status, String error, Timestamp started, Timestamp finished,
                     String frontend, String caller, long attempts, String traceparent) {}

  @Test
  void endedInvocationsHaveTheirRowWithStatusAndError(TestDatabase database) throws Exception {
    ApiaryDatabase db = registered(database);
    String url = db.config().provenance().sinkUrl();
    String run = UUID.randomUUID().toString().substring(0, 8);
    long before = System.currentTimeMillis() - 2_000;
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withCaller("alice"))) {
      String ok = "inv43-ok-" + run;
      client.invoke(InvocationRequest.of("itemLifecycle", 4301L, "widget").withId(ok));
      client.invoke(InvocationRequest.of("itemLifecycle", 4301L, "widget").withId(ok)); // a resend: answered, not run

      String failed = "inv43-fail-" + run;
      FunctionFailedException f = assertThrows(FunctionFailedException.class,
          () -> client.invoke(InvocationRequest.of("stockThenFail", 4302L, "gadget").withId(failed)));
      assertEquals("stockThenFail", f.functionName());

      String single = "inv43-one-" + run;
      client.invoke(InvocationRequest.of("setQty", 4303L, 9L).withId(single)); // one function

      // The trace context a request came with is kept with it (issue 43, traces); a malformed one is not.
      String traced = "inv43-traced-" + run;
      String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      sendRaw(frontend, org.apiary.internal.wire.WireRequest.withTraceContext(org.apiary.internal.Json.bytes(
          org.apiary.internal.wire.WireRequest.invoke(traced, "setQty", org.apiary.internal.Json.tree(4306L),
              List.of(org.apiary.internal.Json.tree(3L)), "alice")), traceparent, "vendor=x"));
      String garbled = "inv43-garbled-" + run;
      sendRaw(frontend, org.apiary.internal.wire.WireRequest.withTraceContext(org.apiary.internal.Json.bytes(
          org.apiary.internal.wire.WireRequest.invoke(garbled, "setQty", org.apiary.internal.Json.tree(4307L),
              List.of(org.apiary.internal.Json.tree(3L)), "alice")), "00-not-a-trace-01", null));

      new FunctionInvoker(db, FunctionCatalog.load(db)).callGlobal("stockRange", 4304L, 4305L); // an item to read
      String readOnly = "inv43-read-" + run;
      assertEquals(1L, client.invoke(InvocationRequest.of("readItem", 4304L, "x").withId(readOnly))
          .values(Long.class).get(0));

      Row okRow = awaitRow(url, ok);
      assertEquals("itemLifecycle", okRow.graph());
      assertEquals("DONE", okRow.status());
      assertNull(okRow.error());
      assertEquals(frontend.id(), okRow.frontend());
      assertEquals("alice", okRow.caller());
      assertEquals(1, okRow.attempts());
      assertNull(okRow.traceparent(), "this client sent no trace context (no OpenTelemetry SDK installed)");
      assertEquals(traceparent, awaitRow(url, traced).traceparent());
      assertNull(awaitRow(url, garbled).traceparent(), "a malformed traceparent is not kept");
      assertTrue(okRow.version() >= 1, "graph version " + okRow.version());
      assertTrue(okRow.started().getTime() >= before - 24 * 3_600_000L, "started " + okRow.started());
      assertTrue(!okRow.finished().before(okRow.started()), okRow.started() + " .. " + okRow.finished());

      Row failedRow = awaitRow(url, failed);
      assertEquals("stockThenFail", failedRow.graph());
      assertEquals("FAILED", failedRow.status());
      assertNotNull(failedRow.error());
      assertTrue(failedRow.error().contains("stockThenFail") && failedRow.error().contains("IllegalStateException")
          && failedRow.error().contains("stockThenFail fails after writing and reading item 4302"), failedRow.error());
      assertEquals("alice", failedRow.caller());

      Row singleRow = awaitRow(url, single);
      assertEquals("setQty", singleRow.graph());
      assertEquals("DONE", singleRow.status());
      assertNull(singleRow.error());

      Row readRow = awaitRow(url, readOnly);
      assertEquals("readItem", readRow.graph());
      assertEquals("DONE", readRow.status());
      assertNull(readRow.error());

      assertEquals(1, count(url, "SELECT COUNT(*) FROM Invocations WHERE invocation_id = ?", ok),
          "the resend ended nothing a second time");
    }
  }

  @Test
  void aFunctionAnsweredFromItsRecordHasARowInModeRecordedWithoutEvents(TestDatabase database) throws Exception {
    ApiaryDatabase db = registered(database);
    String url = db.config().provenance().sinkUrl();
    String id = "inv43-recorded-" + UUID.randomUUID().toString().substring(0, 8);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    Invocation stock = new Invocation(Map.of("source", List.of(Json.tree("recorded"))), id, true, "itemLifecycle",
        null, false, false, null);
    assertEquals(false, invoker.callAsync("stock", 4310L, stock).get(30, TimeUnit.SECONDS).replayed());
    assertEquals(true, invoker.callAsync("stock", 4310L, stock).get(30, TimeUnit.SECONDS).replayed());

    List<String[]> rows = List.of();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      rows = strings(url, "SELECT mode, exec_id FROM FunctionInvocations WHERE execution_id = ? ORDER BY mode", id);
      if (rows.size() >= 2) {
        break;
      }
      Thread.sleep(200);
    }
    assertEquals(List.of("ran", "recorded"), rows.stream().map(r -> r[0]).toList());
    // Writes arrive through VoltDB's export: once the execution that ran has its insert and update, any event of
    // the answer from the record (there must be none) would have arrived too.
    String ranExec = rows.get(0)[1];
    long ranEvents = 0;
    while (System.nanoTime() < deadline + Duration.ofSeconds(30).toNanos() && ranEvents < 2) {
      Thread.sleep(200);
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      ranEvents = count(url, "SELECT COUNT(*) FROM itemsEvents WHERE exec_id = ?", ranExec);
    }
    assertEquals(2, ranEvents, "the execution that ran has its insert and update");
    assertEquals(0, count(url, "SELECT COUNT(*) FROM itemsEvents WHERE exec_id = ?", rows.get(1)[1]),
        "an answer from the record reads and writes nothing");
  }

  private static ApiaryDatabase registered(TestDatabase database) {
    ItemsApp.registerOnce(database.database());
    return database.database();
  }


  /** Sends one request frame straight to the frontend and checks it succeeded. */
  private static void sendRaw(FrontendServer frontend, byte[] frame) {
    try (org.zeromq.ZContext ctx = new org.zeromq.ZContext()) {
      org.zeromq.ZMQ.Socket socket = ctx.createSocket(org.zeromq.SocketType.DEALER);
      socket.setReceiveTimeOut(10_000);
      assertTrue(socket.connect(frontend.endpoint()));
      assertTrue(socket.send(frame));
      byte[] answer = socket.recv();
      assertNotNull(answer, "no reply within 10 s");
      org.apiary.internal.wire.WireReply reply = org.apiary.internal.wire.WireReply.fromBytes(answer);
      assertEquals(org.apiary.internal.wire.WireReply.OK, reply.status(), reply.message());
    }
  }
  private static Row awaitRow(String url, String invocation) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    do {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      try (Connection c = DriverManager.getConnection(url);
           PreparedStatement s = c.prepareStatement("SELECT graph, graph_version, status, error, started_at, "
               + "finished_at, frontend, caller, attempts, traceparent FROM Invocations WHERE invocation_id = ?")) {
        s.setString(1, invocation);
        try (ResultSet rs = s.executeQuery()) {
          if (rs.next()) {
            return new Row(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4), rs.getTimestamp(5),
                rs.getTimestamp(6), rs.getString(7), rs.getString(8), rs.getLong(9), rs.getString(10));
          }
        }
      } catch (java.sql.SQLException e) {
        if (!String.valueOf(e.getMessage()).contains("Invocations")) {
          throw e; // anything but the table not created yet
        }
      }
      Thread.sleep(200);
    } while (System.nanoTime() < deadline);
    throw new AssertionError("no Invocations row for " + invocation + " within 30 s");
  }

  private static long count(String url, String sql, String parameter) throws Exception {
    try (Connection c = DriverManager.getConnection(url); PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, parameter);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static List<String[]> strings(String url, String sql, String parameter) throws Exception {
    List<String[]> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url); PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, parameter);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          rows.add(new String[] {rs.getString(1), rs.getString(2)});
        }
      }
    }
    return rows;
  }
}

package org.apiary.docs.guide;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apiary.AccessPolicy;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.FunctionFailedException;
import org.apiary.Graph;
import org.apiary.OutcomeUnknownException;
import org.apiary.OverloadedException;
import org.apiary.Queue;
import org.apiary.RecordingMode;
import org.apiary.Schedule;
import org.apiary.SchemaMigration;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.docs.readme.Deposit;
import org.apiary.docs.readme.ReadRecord;
import org.apiary.examples.bank.BankApp;
import org.apiary.examples.bank.Payroll;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.testing.ApiaryExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Java fragments of docs/programming-guide.md, each inside a method so that it compiles. */
@SuppressWarnings("unused")
final class GuideSamples {
  static final String SCHEMA = BankApp.SCHEMA;

  private GuideSamples() {}

  /** "Changing the schema": numbered migrations (issue 44). */
  static final Application APP = Application.of(SCHEMA, payday())
      .withMigrations(
          new SchemaMigration(1, "a nickname per account",
              "ALTER TABLE accounts ADD COLUMN nickname VARCHAR(32) DEFAULT 'none';"),
          new SchemaMigration(2, "notes on accounts", """
              CREATE TABLE notes (account BIGINT NOT NULL, id BIGINT NOT NULL, note VARCHAR(64),
                PRIMARY KEY (account, id));
              PARTITION TABLE notes ON COLUMN account;"""),
          new SchemaMigration(3, "accounts by nickname",
              "CREATE INDEX accounts_by_nickname ON accounts (nickname);"));

  // "Global functions and fan-out"
  static Graph payday() {
    Graph payday = Graph.named("payday")
        .addGlobalFunction("payroll", Payroll.class)
        .addLocalFunction("deposit", Deposit.class)
        .addEdge(Graph.SOURCE, "payroll", "amount", Long.class)
        .addEdge("payroll", "deposit", ApiaryFunction.SOURCE)
        .addEdge("deposit", Graph.SINK, ApiaryFunction.SINK);
    return payday;
  }

  // "Registering an application"
  static void register(ApiaryDatabase db) {
    List<RegisteredGraph> graphs = Registrar.register(db, Application.of(SCHEMA, payday()));
    for (RegisteredGraph g : graphs) {
      System.out.println(g.name() + ": " + g.nodes());          // each function: local, writes, recorded
    }
  }

  // "Registering an application": the recording decision for measurement
  static void registerNaive(ApiaryDatabase db) {
    Registrar.register(db, Application.of(SCHEMA, payday()), RecordingMode.NAIVE);   // record every function
  }

  // "Calling": a frontend and a client of its own (the parts Apiary composes)
  static void calling(ApiaryDatabase db) {
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());   // or: ./apiary frontend --database host:port
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint(), "tcp://other-frontend:5555"))) {
      GraphResult r = client.invoke("timeline", 42L, 42L);              // graph, partition key, arguments
      client.invokeAsync(InvocationRequest.of("timeline", 42L, 42L))   // CompletableFuture<GraphResult>
            .thenAccept(result -> System.out.println(result.toJson()));
    }
  }

  // "Invocation IDs and results by ID"
  static void invocationIds(ApiaryClient client) {
    InvocationRequest request = InvocationRequest.of("payday", null, 100L);   // payday starts globally: no key
    String id = request.id();                                   // keep it to retry or to ask later
    try {
      client.invoke(request);
    } catch (OutcomeUnknownException e) {
      client.invoke(request);                                   // the same ID again, to any frontend: runs at most once
    }
    Optional<GraphResult> done = client.result(id);             // empty while it runs
    GraphResult result = client.awaitResult(id, Duration.ofSeconds(30));
  }

  // "Durable queues"
  static void queues(org.apiary.server.Apiary apiary, ApiaryClient client) {
    Queue emails = Queue.named("emails")
        .concurrency(8)                          // at most 8 of its invocations running, across every frontend
        .perFrontend(2)                          // at most 2 of them on any one frontend
        .rate(100, Duration.ofSeconds(1));       // at most 100 started in any second
    apiary.deploy(Application.of(SCHEMA, payday()).withQueues(emails));

    InvocationHandle handle = client.enqueue("emails", "payday-2026-11", InvocationRequest.of("payday", null, 100L));
    GraphResult result = handle.await(Duration.ofSeconds(60));   // QUEUED while it waits on the queue, then as any
  }

  // "Schedules and delayed starts"
  static void schedules(org.apiary.server.Apiary apiary, ApiaryClient client) {
    Schedule nightly = Schedule.cron("nightly", "0 2 * * *", payday())   // 02:00 UTC every day
        .missed(Schedule.catchUp(3));        // after an outage, also the 3 latest missed ticks
    apiary.deploy(Application.of(SCHEMA, payday()).withQueues(Queue.named("later")).withSchedules(nightly));

    InvocationHandle inAnHour = client.enqueue("later", null, InvocationRequest.of("payday", null, 100L),
        Duration.ofHours(1));                // a delayed start: not claimed before the database's clock says so
  }

  // "Errors"
  static void errors(ApiaryClient client) throws InterruptedException {
    try {
      client.invoke("checkout", 42L, "order-1");
    } catch (FunctionFailedException e) {            // a function threw; its transaction rolled back
      System.out.println(e.functionName() + ": " + e.errorType() + ": " + e.errorMessage());
    } catch (OverloadedException e) {                // refused by every frontend: nothing ran
      Thread.sleep(e.retryAfter().toMillis());
    } catch (OutcomeUnknownException e) {            // no answer: it may have run; retry with the same ID
    }
  }

  // "Provenance queries"
  static void provenanceQueries() throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:apiary-provenance.duckdb")) {
      ProvenanceQueries q = new ProvenanceQueries(c);
      ProvenanceTable accounts = q.describeEventsTable("accounts", List.of("id"));
      for (ProvenanceQueries.RecordRead read : q.readsOfRecord(accounts, Map.of("id", 7L))) {
        System.out.println(read.function() + " in " + read.executionId() + " by " + read.caller() + " for "
            + read.purpose());
      }
      Optional<Map<String, Object>> then = q.stateAt(accounts, Map.of("id", 7L), Instant.parse("2026-11-21T20:00:00Z"));
      List<ProvenanceQueries.DeniedCall> denied = q.deniedCalls(Instant.parse("2026-11-01T00:00:00Z"), Instant.now());
      List<Map<String, Object>> latency = q.sql(
          "SELECT function_name, AVG(latency_us) FROM FunctionInvocations GROUP BY function_name");
    }
  }

  // "Access control": a function's own policy
  static Graph ward() {
    Graph ward = Graph.named("ward")
        .addLocalFunction("readRecord", ReadRecord.class)
        .addEdge(Graph.SOURCE, "readRecord", "source", String.class)
        .addEdge("readRecord", Graph.SINK, "sink")
        .withFunctionAccess("readRecord", AccessPolicy.roles("doctor").withPurposes("treatment"));
    return ward;
  }

  // "Testing with ApiaryExtension"; an inner class, so that Surefire (which skips nested classes) does not run it.
class PaydayTest {
  @RegisterExtension
  static final ApiaryExtension apiary = ApiaryExtension.forApplication(Application.of(BankApp.SCHEMA, BankApp.PAYDAY))
      .withPartitions(4);

  @Test
  void payday() {
    apiary.query("INSERT INTO accounts VALUES (?, ?, ?)", 1L, "ann", 0L);
    apiary.invoke("payday", null, 100L);
    assertEquals(100L, apiary.query("SELECT balance FROM accounts WHERE id = ?", 1L).rows().get(0).getLong("balance"));
  }
}
}

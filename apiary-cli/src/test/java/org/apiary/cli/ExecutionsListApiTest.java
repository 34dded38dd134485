package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apiary.cli.InProcessCli.Run;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Invocations;
import org.apiary.frontend.Registrar;
import org.apiary.frontend.queue.QueueApp;
import org.apiary.internal.Json;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * Issue 42: what {@code apiary executions list [--graph] [--status] [--since] [--json]} shows is what the Java API
 * ({@link Invocations#list}) returns, query by query: the command line calls it.
 */
@DatabaseTest
class ExecutionsListApiTest {
  @Test
  void theCommandLineListsWhatTheJavaApiLists(TestDatabase database) {
    ApiaryDatabase db = database.database();
    Registrar.register(db, QueueApp.APP);
    String address = String.join(",", db.clientAddresses());
    String done;
    String failed;
    String queued;
    Instant before;
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
      done = client.start(InvocationRequest.of("qMark", 940L, "a")).id();
      client.handle(done).await(Duration.ofSeconds(30));
      InvocationRequest failing = InvocationRequest.of("qSpawn", 941L, "f", true);
      failed = failing.id();
      assertThrows(org.apiary.FunctionFailedException.class, () -> client.invoke(failing));
      sleep(20);
      before = Instant.now(); // the same clock as the database's, on this machine
      sleep(20);
      queued = client.start(InvocationRequest.of("qMark", 942L, "b"), Duration.ofHours(1)).id();

      Invocations.Listing marks = Invocations.list(db, Invocations.Query.newest(1000).graph("qMark"));
      List<String> ids = marks.invocations().stream().map(Invocations.Summary::id).toList();
      assertTrue(ids.contains(done) && ids.contains(queued) && !ids.contains(failed), ids.toString());
      assertEquals("QUEUED", status(marks, queued));
      assertEquals("DONE", status(marks, done));
      assertEquals(List.of(failed), Invocations.list(db, Invocations.Query.newest(1000).graph("qSpawn")
          .status("failed")).invocations().stream().map(Invocations.Summary::id).toList());
      assertEquals(List.of(queued), Invocations.list(db, Invocations.Query.newest(1000).graph("qMark")
          .since(before)).invocations().stream().map(Invocations.Summary::id).toList());

      for (String[] q : new String[][] {{"--graph", "qMark"}, {"--graph", "qSpawn", "--status", "failed"},
          {"--status", "QUEUED"}, {"--graph", "qMark", "--since", before.toString()}}) {
        Invocations.Query query = Invocations.Query.newest(1000);
        for (int i = 0; i < q.length; i += 2) {
          query = switch (q[i]) {
            case "--graph" -> query.graph(q[i + 1]);
            case "--status" -> query.status(q[i + 1]);
            default -> query.since(Instant.parse(q[i + 1]));
          };
        }
        List<String> api = Invocations.list(db, query).invocations().stream()
            .map(s -> s.id() + " " + s.status() + " " + s.graph()).toList();
        String[] args = new String[q.length + 7];
        System.arraycopy(new String[] {"executions", "list", "--json", "--limit", "1000", "--database", address}, 0,
            args, 0, 7);
        System.arraycopy(q, 0, args, 7, q.length);
        Run listed = run(args);
        assertEquals(0, listed.code(), listed.err());
        List<String> cli = listed.out().lines().map(l -> {
          JsonNode n = Json.parse(l.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          return n.get("id").asText() + " " + n.get("status").asText() + " " + n.get("graph").asText();
        }).toList();
        assertEquals(api, cli, String.join(" ", q));
        assertTrue(!api.isEmpty(), String.join(" ", q));
      }
      client.handle(queued).cancel("test: done");
    }
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> Invocations.Query.newest(10).status("sleeping"));
    assertTrue(bad.getMessage().contains("'sleeping'") && bad.getMessage().contains("QUEUED"), bad.getMessage());
    Run badCli = run("executions", "list", "--status", "sleeping", "--database", address);
    assertEquals(2, badCli.code());
    assertTrue(badCli.err().contains("'sleeping'"), badCli.err());
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String status(Invocations.Listing listing, String id) {
    return listing.invocations().stream().filter(s -> s.id().equals(id)).findFirst().orElseThrow().status();
  }
}

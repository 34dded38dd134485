package org.apiary.drills;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses;
import org.apiary.cli.Main;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.runtime.SystemSchema;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.voltdb.VoltTable;
import picocli.CommandLine;

/**
 * {@code apiary drill-frontend}, the frontend with a fault injected, in its own JVM against the test database (issue
 * 14). Its faults are not options of the production {@code frontend} command, and it takes exactly one. A fatal error
 * on its socket thread ends the process visibly: exit status 1, the failure on its output, its lease released
 * (expired at once, so a live frontend takes over).
 */
@DatabaseTest
class DrillFrontendCommandTest {
  private static final Duration START = Duration.ofSeconds(60);

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  void theDrillsJoinTheCommandLineThroughServiceLoader() {
    java.util.Map<String, CommandLine> commands = Main.commandLine().getSubcommands();
    assertTrue(commands.get("drill").getCommand() instanceof DrillCommand, commands.keySet().toString());
    assertTrue(commands.get("drill-frontend").getCommand() instanceof DrillFrontendCommand,
        commands.keySet().toString());
  }

  @Test
  void faultInjectionIsNotPartOfTheProductionCommandAndTheDrillFrontendTakesExactlyOneFault() {
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setErr(new PrintWriter(err));
    for (String fault : new String[] {"--crash-after", "--stop-after", "--fault"}) {
      assertEquals(2, cl.execute("frontend", "--database", "127.0.0.1:1", fault, "x"), fault);
      assertTrue(err.toString().contains("Unknown option"), err.toString());
    }
    StringWriter out = new StringWriter();
    cl.setOut(new PrintWriter(out));
    assertEquals(0, cl.execute("--help"));
    assertFalse(out.toString().contains("drill-frontend"), "the drill's frontend is listed:\n" + out);
    // Checked before the database is reached (there is none at port 1).
    assertEquals(2, cl.execute("drill-frontend", "--database", "127.0.0.1:1", "--crash-after", "f", "--stop-after", "f"));
    assertEquals(2, cl.execute("drill-frontend", "--database", "127.0.0.1:1"));
    assertEquals(2, cl.execute("drill-frontend", "--database", "127.0.0.1:1", "--fault", "disk-full"));
    assertTrue(err.toString().contains("--fault takes socket-thread-error, not 'disk-full'"), err.toString());
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aFatalErrorOnTheSocketThreadEndsTheProcessWithStatusOneAndReleasesItsLease(TestDatabase database)
      throws Exception {
    ApiaryDatabase db = database.database();
    Registrar.register(db, CounterApp.APP);
    Path log = work.resolve("failing-frontend.log");
    // A lease far longer than the test: a lease expired when the process exits was released, not run out.
    Process frontend = cli.start(log, "-Xmx384m", "drill-frontend", "--database",
        String.join(",", db.clientAddresses()), "--lease-ms", "600000", "--fault", "socket-thread-error");
    try {
      String listening = CliProcesses.await(frontend, log, "listening on ", START);
      String line = Files.readString(log).lines().filter(l -> l.contains(" listening on ")).findFirst().orElseThrow();
      String id = line.substring("frontend ".length(), line.indexOf(" listening on "));
      String endpoint = listening.substring("listening on ".length()).lines().findFirst().orElseThrow().strip();
      assertEquals(1L, leases(db, id), "the frontend holds no lease:\n" + Files.readString(log));

      // The first request makes the socket thread throw; the frontend answers no one, so the attempt times out.
      try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint)
          .withAttemptTimeout(Duration.ofSeconds(2)).withMaxAttempts(1))) {
        assertThrows(RuntimeException.class, () -> client.invoke("increment", 1L, 1L));
      }

      assertTrue(frontend.waitFor(30, TimeUnit.SECONDS),
          "the frontend whose socket thread failed is still running:\n" + Files.readString(log));
      String output = Files.readString(log);
      assertEquals(1, frontend.exitValue(), output);
      assertTrue(output.contains("frontend " + id + " stopped, its lease released: its socket thread or JeroMQ's I/O "
          + "thread failed"), output);
      assertTrue(output.contains("fault injection"), "the output does not name the error:\n" + output);
      // Released means expired at once (the row stays until a live frontend takes over what the dead one left).
      assertEquals(0L, liveLeases(db, id), "the frontend exited without releasing its lease:\n" + output);
      try (FrontendServer survivor = FrontendServer.start(db, FrontendConfig.defaults()
          .withLease(Duration.ofSeconds(2), Duration.ofMillis(200)))) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (leases(db, id) > 0 && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        assertEquals(0L, leases(db, id), "frontend " + survivor.id() + " did not take over the released lease");
      }
    } finally {
      frontend.destroyForcibly();
      frontend.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static long leases(ApiaryDatabase db, String frontendId) {
    VoltTable t = db.callAdmin("reading the frontend leases", "@AdHoc", "SELECT COUNT(*) FROM "
        + SystemSchema.FRONTENDS + " WHERE frontend = ?", frontendId).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }

  private static long liveLeases(ApiaryDatabase db, String frontendId) {
    VoltTable t = db.callAdmin("reading the frontend leases", "@AdHoc", "SELECT COUNT(*) FROM "
        + SystemSchema.FRONTENDS + " WHERE frontend = ? AND lease_expires_ms >= SINCE_EPOCH(MILLISECOND, NOW)",
        frontendId).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }
}

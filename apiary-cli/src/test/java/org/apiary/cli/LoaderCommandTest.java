package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.provenance.loader.LoaderClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code apiary loader}: its help, its refusals, and a run as a process of its own that loads and stops cleanly. */
class LoaderCommandTest {
  @TempDir
  Path dir;

  @Test
  void helpSaysWhatItIsAndHowToRunIt() {
    InProcessCli.Run run = InProcessCli.run("loader", "--help");
    assertEquals(0, run.code(), run.err());
    assertTrue(run.out().contains("Usage: apiary loader"), run.out());
    assertTrue(run.out().contains("--sink=JDBC-URL"), run.out());
    assertTrue(run.out().contains("--listen=HOST:PORT"), run.out());
    assertTrue(run.out().contains("ProvenanceConfig.loader"), run.out());
  }

  @Test
  void aMissingSinkOrAMalformedAddressIsBadUsage() {
    InProcessCli.Run noSink = InProcessCli.run("loader", "--listen", "127.0.0.1:0");
    assertEquals(2, noSink.code());
    assertTrue(noSink.err().contains("--sink"), noSink.err());
    InProcessCli.Run badListen = InProcessCli.run("loader", "--sink", "jdbc:duckdb:" + dir.resolve("p.db"),
        "--listen", "nowhere");
    assertEquals(2, badListen.code());
    assertTrue(badListen.err().contains("--listen: a loader address is host:port, not 'nowhere'"), badListen.err());
    InProcessCli.Run notJdbc = InProcessCli.run("loader", "--sink", "postgres://x/y");
    assertEquals(2, notJdbc.code());
    assertTrue(notJdbc.err().contains("--sink takes a JDBC URL"), notJdbc.err());
  }

  @Test
  void aLoaderProcessLoadsWhatItIsSentAndSaysSoWhenStopped() throws Exception {
    Path db = dir.resolve("loaded.duckdb");
    Path out = dir.resolve("loader.out");
    Path secret = Files.writeString(dir.resolve("loader.secret"), "the-loader-secret\n");
    List<String> cmd = CliProcesses.java("-Xmx256m");
    cmd.addAll(List.of("loader", "--sink", "jdbc:duckdb:" + db, "--listen", "127.0.0.1:0", "--secret-file",
        secret.toString()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      String started = CliProcesses.await(p, out, "loader listening on", Duration.ofSeconds(60));
      Matcher address = Pattern.compile("loader listening on (127\\.0\\.0\\.1:\\d+), loading into jdbc:duckdb:")
          .matcher(started);
      assertTrue(address.find(), started);
      ProvenanceTable table = new ProvenanceTable("Sent", List.of(new ProvenanceColumn("id", ColumnType.BIGINT),
          new ProvenanceColumn("what", ColumnType.VARCHAR)), List.of("id"), List.of());
      List<ProvenanceRow> rows = new ArrayList<>();
      for (long i = 0; i < 10; i++) {
        rows.add(new ProvenanceRow("Sent", java.util.Arrays.asList(i, "row " + i)));
      }
      assertTrue(!started.contains("NO secret") && !started.contains("the-loader-secret"), started);
      java.sql.SQLException refused = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
          () -> LoaderClient.connect(address.group(1), "cli-test", null, Duration.ofSeconds(30)));
      assertTrue(refused.getMessage().contains("present its secret"), refused.getMessage());
      try (LoaderClient client = LoaderClient.connect(address.group(1), "cli-test", "the-loader-secret",
          Duration.ofSeconds(30))) {
        client.loadBatch(table, rows, true);
      }
      p.destroy(); // SIGTERM, as an operator stops it
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "stopped within 30 s");
      String text = Files.readString(out);
      assertTrue(text.contains("loader stopped: 1 batches, 10 rows loaded from 2 connections; 0 loads failed, 1 "
          + "frames refused"), text);
    } finally {
      p.destroyForcibly();
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + db); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM Sent")) {
      rs.next();
      assertEquals(10, rs.getLong(1));
    }
  }
}

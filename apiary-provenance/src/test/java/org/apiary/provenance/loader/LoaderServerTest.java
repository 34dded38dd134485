package org.apiary.provenance.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.provenance.SpoolerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader apart, in this JVM, against DuckDB: what a spooler sends through it, its exactly-once, its guard. */
class LoaderServerTest {
  /** A table with a column of every type, so every value crosses the wire. */
  static final ProvenanceTable EVERY_TYPE = new ProvenanceTable("LoaderTypes", List.of(
      new ProvenanceColumn("id", ColumnType.BIGINT), new ProvenanceColumn("i", ColumnType.INTEGER),
      new ProvenanceColumn("s", ColumnType.SMALLINT), new ProvenanceColumn("t", ColumnType.TINYINT),
      new ProvenanceColumn("d", ColumnType.DOUBLE), new ProvenanceColumn("n", ColumnType.DECIMAL),
      new ProvenanceColumn("v", ColumnType.VARCHAR), new ProvenanceColumn("b", ColumnType.VARBINARY),
      new ProvenanceColumn("ts", ColumnType.TIMESTAMP)), List.of("id"), List.of());

  @TempDir
  Path dir;

  static ProvenanceRow row(long id) {
    return new ProvenanceRow(EVERY_TYPE.name(), Arrays.asList(id, (int) id * 3, (short) (id % 1000),
        (byte) (id % 100), id / 7.0, new BigDecimal(id).movePointLeft(2).setScale(12), id % 5 == 0 ? null : "value " + id + " ü",
        ("b" + id).getBytes(StandardCharsets.UTF_8), Instant.ofEpochSecond(1_700_000_000L + id, 123_000)));
  }

  static List<ProvenanceRow> rows(long from, int count) {
    List<ProvenanceRow> rows = new ArrayList<>();
    for (long id = from; id < from + count; id++) {
      rows.add(row(id));
    }
    return rows;
  }

  private String duckDb(String name) {
    return "jdbc:duckdb:" + dir.resolve(name);
  }

  private LoaderServer startLoader(String sinkUrl, int port) throws SQLException {
    return LoaderServer.start(LoaderServer.Settings.of(sinkUrl, new Properties(),
        new InetSocketAddress("127.0.0.1", port)));
  }

  private static SpoolerConfig spooler(Path spill) {
    return SpoolerConfig.defaults().withSpillDirectory(spill).withFlushInterval(Duration.ofMillis(50))
        .withInitialBackoff(Duration.ofMillis(20)).withMaxBackoff(Duration.ofMillis(200))
        .withMaxMemoryRows(1_000).withMaxBatchRows(500).withOfferWait(Duration.ofMillis(100))
        .withCloseTimeout(Duration.ofSeconds(5));
  }

  /** Every row of the table, one line each, in key order, as the sink returns it. */
  private static List<String> contents(String url) throws SQLException {
    List<String> lines = new ArrayList<>();
    try (ProvenanceSink sink = ProvenanceSink.open(url, new Properties());
         Statement s = sink.connection().createStatement();
         ResultSet rs = s.executeQuery("SELECT * FROM LoaderTypes ORDER BY id")) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        StringBuilder line = new StringBuilder();
        for (int i = 1; i <= columns; i++) {
          Object value = rs.getObject(i);
          line.append(value instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : value).append('|');
        }
        lines.add(line.toString());
      }
      sink.connection().rollback();
    }
    return lines;
  }

  private static long count(String url, String sql) throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url, new Properties());
         Statement s = sink.connection().createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      long value = rs.getLong(1);
      sink.connection().rollback();
      return value;
    }
  }

  @Test
  void aSpoolerLoadingThroughTheLoaderLoadsWhatItLoadsInProcess() throws Exception {
    String apart = duckDb("apart.db");
    String inProcess = duckDb("in-process.db");
    List<ProvenanceRow> rows = rows(1, 3_000);
    try (LoaderServer loader = startLoader(apart, 0)) {
      try (ProvenanceSpooler spooler = ProvenanceSpooler.start(spooler(dir.resolve("spill-a")),
          LoaderClient.opener(loader.address(), "test-node", null, Duration.ofSeconds(30)))) {
        spooler.register(EVERY_TYPE);
        for (int i = 0; i < rows.size(); i += 100) {
          spooler.offer(rows.subList(i, i + 100));
        }
        assertTrue(spooler.flush(Duration.ofSeconds(30)), "flushed through the loader");
      }
      assertEquals(rows.size(), loader.stats().rowsLoaded());
    }
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(spooler(dir.resolve("spill-b")),
        ProvenanceSink.opener(inProcess, new Properties()))) {
      spooler.register(EVERY_TYPE);
      spooler.offer(rows);
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flushed in process");
    }
    List<String> viaLoader = contents(apart);
    assertEquals(rows.size(), viaLoader.size());
    assertEquals(contents(inProcess), viaLoader, "the same rows, value for value");
  }

  @Test
  void aLoadResentAfterALostAnswerIsNotLoadedTwiceAndANewConnectionSupersedesTheOld() throws Exception {
    String url = duckDb("resent.db");
    try (LoaderServer loader = startLoader(url, 0);
         LoaderClient first = LoaderClient.connect(loader.address(), "node-a", null, Duration.ofSeconds(30))) {
      first.loadBatch(EVERY_TYPE, rows(1, 200), true);
      try (LoaderClient second = LoaderClient.connect(loader.address(), "node-a", null, Duration.ofSeconds(30))) {
        // The answer to the first was "lost": the node sends the batch again, not fresh, on a new connection.
        assertEquals(0, second.loadBatch(EVERY_TYPE, rows(1, 200), false), "no row added twice");
        assertEquals(50, second.loadBatch(EVERY_TYPE, rows(151, 100), false), "only the absent rows");
        SQLException superseded = assertThrows(SQLException.class,
            () -> first.loadBatch(EVERY_TYPE, rows(1000, 10), true));
        assertTrue(superseded.getMessage().contains("superseded"), superseded.getMessage());
      }
    }
    assertEquals(250, count(url, "SELECT COUNT(*) FROM LoaderTypes"));
    assertEquals(250, count(url, "SELECT COUNT(DISTINCT id) FROM LoaderTypes"));
  }

  @Test
  void identitiesAreForgottenWithTheirLastConnection() throws Exception {
    try (LoaderServer loader = startLoader(duckDb("identities.db"), 0)) {
      for (int i = 0; i < 20; i++) {
        try (LoaderClient client = LoaderClient.connect(loader.address(), "passing-" + i, null,
            Duration.ofSeconds(30))) {
          client.loadBatch(EVERY_TYPE, rows(i, 1), true);
        }
      }
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
      while (loader.clientsTracked() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20); // each connection's thread ends once it reads the client's close
      }
      assertEquals(0, loader.clientsTracked(), "no identity kept after its connections closed");
    }
  }

  /** Reads one answer frame from a raw connection: its type, and for an error whether it is fatal and its text. */
  private static String answer(DataInputStream in) throws IOException {
    int length = in.readInt();
    byte[] body = new byte[length];
    in.readFully(body);
    if (body[0] != 'E') {
      return String.valueOf((char) body[0]);
    }
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(body, 1, length - 1);
    boolean fatal = b.get() != 0;
    byte[] state = new byte[b.getInt()];
    b.get(state);
    byte[] message = new byte[b.getInt()];
    b.get(message);
    return "E" + (fatal ? "!" : "") + " " + new String(message, StandardCharsets.UTF_8);
  }

  private static Socket raw(LoaderServer loader) throws IOException {
    Socket socket = new Socket("127.0.0.1", loader.port());
    socket.setSoTimeout(10_000);
    return socket;
  }

  private static void hello(DataOutputStream out, DataInputStream in) throws IOException {
    LoaderProtocol.hello("raw-client", null).writeTo(out);
    assertEquals("W", answer(in));
  }

  @Test
  void garbageAndOversizeFramesAreRefusedAndTheLoaderKeepsServing() throws Exception {
    String url = duckDb("garbage.db");
    try (LoaderServer loader = startLoader(url, 0)) {
      try (Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
           DataInputStream in = new DataInputStream(s.getInputStream())) {
        out.write("GET / HTTP/1.1\r\nHost: loader\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        String refusal = answer(in);
        assertTrue(refusal.startsWith("E! a frame of"), refusal);
        assertEquals(-1, in.read(), "connection closed");
      }
      try (Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
           DataInputStream in = new DataInputStream(s.getInputStream())) {
        out.writeInt(20);
        out.write("not a hello at all!!".getBytes(StandardCharsets.US_ASCII));
        String refusal = answer(in);
        assertTrue(refusal.contains("not an Apiary loader client"), refusal);
      }
      try (Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
           DataInputStream in = new DataInputStream(s.getInputStream())) {
        hello(out, in);
        out.writeInt(LoaderProtocol.MAX_FRAME_BYTES + 1); // an oversize frame: refused before its bytes are read
        out.flush();
        String refusal = answer(in);
        assertTrue(refusal.startsWith("E! a frame of " + (LoaderProtocol.MAX_FRAME_BYTES + 1) + " bytes"), refusal);
      }
      try (Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
           DataInputStream in = new DataInputStream(s.getInputStream())) {
        hello(out, in);
        // A load whose row count claims far more rows than its bytes hold.
        LoaderProtocol.FrameWriter frame = LoaderProtocol.load(EVERY_TYPE, true);
        frame.putInt(frame.length() - 4, 1_000_000_000);
        frame.writeTo(out);
        String refusal = answer(in);
        assertTrue(refusal.startsWith("E! 1000000000 rows"), refusal);
      }
      try (Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
           DataInputStream in = new DataInputStream(s.getInputStream())) {
        hello(out, in);
        // Well-formed, but the values do not fit the table: refused, and the connection serves on.
        ProvenanceTable narrower = new ProvenanceTable("LoaderTypes", List.of(
            new ProvenanceColumn("id", ColumnType.BIGINT)), List.of("id"), List.of());
        LoaderProtocol.FrameWriter frame = LoaderProtocol.load(narrower, true);
        int countAt = frame.length() - 4;
        LoaderProtocol.putRow(frame, new ProvenanceRow("LoaderTypes", List.of("a string, not a number")));
        frame.putInt(countAt, 1);
        frame.writeTo(out);
        String refusal = answer(in);
        assertTrue(refusal.startsWith("E refused: column id of table LoaderTypes is BIGINT"), refusal);
        frame = LoaderProtocol.load(EVERY_TYPE, true);
        countAt = frame.length() - 4;
        LoaderProtocol.putRow(frame, row(7));
        frame.putInt(countAt, 1);
        frame.writeTo(out);
        assertEquals("A", answer(in), "the same connection loads a good batch after the refused one");
      }
      try (LoaderClient client = LoaderClient.connect(loader.address(), "node-after", null, Duration.ofSeconds(30))) {
        client.loadBatch(EVERY_TYPE, rows(100, 10), true);
      }
      assertEquals(5, loader.stats().framesRefused());
      assertEquals(11, loader.stats().rowsLoaded());
    }
    assertEquals(11, count(url, "SELECT COUNT(*) FROM LoaderTypes"));
  }

  @Test
  void aFrameTrickledSlowerThanTheFrameTimeoutIsCutOff() throws Exception {
    try (LoaderServer loader = LoaderServer.start(LoaderServer.Settings.of(duckDb("slow.db"), new Properties(),
        new InetSocketAddress("127.0.0.1", 0)).withFrameTimeout(Duration.ofSeconds(1)));
         Socket s = raw(loader); DataOutputStream out = new DataOutputStream(s.getOutputStream());
         DataInputStream in = new DataInputStream(s.getInputStream())) {
      hello(out, in);
      out.writeInt(1 << 20); // announces 1 MiB, then sends a byte every 200 ms: each read is quick, the frame never
      out.flush();         // arrives whole
      long started = System.nanoTime();
      boolean cut = false;
      s.setSoTimeout(200);
      for (int i = 0; i < 150 && !cut; i++) { // up to 30 s of trickling: far past the 1 s frame timeout
        try {
          in.read(); // the loader says nothing to a frame in progress: an answer or the end means it gave up on it
          cut = true;
        } catch (java.net.SocketTimeoutException e) {
          try {
            out.write(0);
            out.flush();
          } catch (IOException closed) {
            cut = true;
          }
        } catch (IOException e) {
          cut = true; // reset by the loader
        }
      }
      long seconds = (System.nanoTime() - started) / 1_000_000_000L;
      assertTrue(cut, "the loader cut the trickling frame off after its 1 s frame timeout; still reading it after "
          + seconds + " s of trickling");
    }
  }

  @Test
  void aLoaderWithASecretRefusesClientsThatDoNotPresentIt() throws Exception {
    String url = duckDb("secret.db");
    try (LoaderServer loader = LoaderServer.start(LoaderServer.Settings.of(url, new Properties(),
        new InetSocketAddress("127.0.0.1", 0)).withSecret("s3cret-of-the-loader"))) {
      assertTrue(!loader.toString().contains("s3cret") && !String.valueOf(LoaderServer.Settings.of(url, null,
          new InetSocketAddress(0)).withSecret("s3cret")).contains("s3cret"), "the secret is never shown");
      for (String wrong : new String[] {null, "another"}) {
        SQLException refused = assertThrows(SQLException.class,
            () -> LoaderClient.connect(loader.address(), "intruder", wrong, Duration.ofSeconds(30)));
        assertTrue(refused.getMessage().contains("takes only clients that present its secret"),
            refused.getMessage());
      }
      try (LoaderClient client = LoaderClient.connect(loader.address(), "node", "s3cret-of-the-loader",
          Duration.ofSeconds(30))) {
        client.loadBatch(EVERY_TYPE, rows(1, 5), true);
      }
      assertEquals(2, loader.stats().framesRefused());
    }
    assertEquals(5, count(url, "SELECT COUNT(*) FROM LoaderTypes"));
  }

  @Test
  void whileTheLoaderIsAwayTheSpoolerSpillsAndAfterItReturnsEveryRowArrivesOnce() throws Exception {
    String url = duckDb("outage.db");
    int port;
    List<ProvenanceRow> rows = rows(1, 6_000);
    LoaderServer loader = startLoader(url, 0);
    port = loader.port();
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(spooler(dir.resolve("spill")),
        LoaderClient.opener("127.0.0.1:" + port, "node-outage", null, Duration.ofSeconds(10)))) {
      spooler.register(EVERY_TYPE);
      for (int i = 0; i < 2_000; i += 50) {
        spooler.offerDurably(rows.subList(i, i + 50));
      }
      loader.close(); // mid-stream: loads in flight fail, or commit with their answers lost
      for (int i = 2_000; i < 6_000; i += 50) {
        spooler.offerDurably(rows.subList(i, i + 50));
      }
      assertTrue(spooler.stats().rowsOnDisk() > 0, "rows wait in spill files while the loader is away: "
          + spooler.stats());
      loader = startLoader(url, port);
      assertTrue(spooler.flush(Duration.ofSeconds(60)), "everything loaded once the loader is back: "
          + spooler.stats());
      assertEquals(0, spooler.stats().rowsOnDisk());
    } finally {
      loader.close();
    }
    assertEquals(6_000, count(url, "SELECT COUNT(*) FROM LoaderTypes"), "every row, none twice");
    assertEquals(6_000, count(url, "SELECT COUNT(DISTINCT id) FROM LoaderTypes"));
  }
}

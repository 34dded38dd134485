package org.apiary.provenance;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Properties;

/**
 * A schema of its own in the machine's PostgreSQL server (database {@code test}, user {@code postgres}, trust
 * authentication) for one test, dropped with everything in it on close, so concurrent runs never collide. The server
 * is shared: tests never stop it.
 */
public final class PostgresTestSchema implements AutoCloseable {
  static final String HOST = "127.0.0.1";
  static final int PORT = 5432;
  static final String DATABASE = "test";

  private final String schema;

  public PostgresTestSchema() throws SQLException {
    byte[] random = new byte[6];
    new SecureRandom().nextBytes(random);
    schema = "apiary_test_" + HexFormat.of().formatHex(random);
    try (Connection connection = DriverManager.getConnection(url(HOST, PORT, null), props());
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE SCHEMA " + schema);
    }
  }

  public String schema() {
    return schema;
  }

  /** The URL of this schema on the server. */
  public String url() {
    return url(HOST, PORT, schema);
  }

  /** The URL of this schema through a proxy listening on {@code port}. */
  public String urlThrough(int port) {
    return url(HOST, port, schema);
  }

  /** Connection properties: user postgres, no password, short timeouts so a cut connection fails fast. */
  public static Properties props() {
    Properties props = new Properties();
    props.setProperty("user", "postgres");
    props.setProperty("connectTimeout", "5");
    props.setProperty("socketTimeout", "30");
    return props;
  }

  /** The single number {@code sql} answers in this schema; 0 while the table it reads does not exist yet. */
  public long scalar(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url(), props());
         Statement s = c.createStatement(); java.sql.ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      if (e.getMessage().contains("does not exist")) {
        return 0; // not created yet: nothing arrived
      }
      throw e;
    }
  }

  /** Polls {@link #scalar} until it reaches {@code expected} or {@code timeout} passes; the last value it read. */
  public long awaitScalar(String sql, long expected, java.time.Duration timeout) throws SQLException,
      InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long value = scalar(sql);
    while (value < expected && System.nanoTime() < deadline) {
      Thread.sleep(250);
      value = scalar(sql);
    }
    return value;
  }

  private static String url(String host, int port, String schema) {
    return "jdbc:postgresql://" + host + ":" + port + "/" + DATABASE + (schema == null ? "" : "?currentSchema=" + schema);
  }

  @Override
  public void close() throws SQLException {
    try (Connection connection = DriverManager.getConnection(url(HOST, PORT, null), props());
         Statement statement = connection.createStatement()) {
      statement.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }
}

package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The same load and idempotency checks against Vertica Community Edition in a container. Skipped (not failed) where
 * no Docker engine runs.
 */
@Testcontainers(disabledWithoutDocker = true)
class VerticaSinkTest {
  private static final int VERTICA_PORT = 5433;

  @Container
  private static final GenericContainer<?> VERTICA = new GenericContainer<>(
      DockerImageName.parse("vertica/vertica-ce:24.1.0-0"))
      .withExposedPorts(VERTICA_PORT)
      .withEnv("TZ", "Etc/UTC")
      .waitingFor(Wait.forLogMessage(".*Vertica is now running.*\\n", 1).withStartupTimeout(Duration.ofMinutes(5)));

  private static String url() {
    return "jdbc:vertica://" + VERTICA.getHost() + ":" + VERTICA.getMappedPort(VERTICA_PORT) + "/VMart";
  }

  private static Properties props() {
    Properties props = new Properties();
    props.setProperty("user", "dbadmin");
    props.setProperty("password", "");
    return props;
  }

  @Test
  void loadsEveryTypeIdempotently() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), props())) {
      assertEquals(SinkDialect.VERTICA, sink.dialect());
      SinkChecks.checkIdempotentLoads(sink, "typed");
    }
  }

  @Test
  void aSecondSessionSkipsRowsTheFirstLoaded() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("shared");
    try (ProvenanceSink first = ProvenanceSink.open(url(), props());
         ProvenanceSink second = ProvenanceSink.open(url(), props())) {
      first.ensureTable(table);
      second.ensureTable(table);
      first.load(table, SinkChecks.typedRows(table, 0, 40, "first"));
      second.load(table, SinkChecks.typedRows(table, 30, 60, "second"));
      second.load(table, SinkChecks.typedRows(table, 30, 60, "second"));
      List<ProvenanceRow> expected = new ArrayList<>(SinkChecks.typedRows(table, 0, 40, "first"));
      expected.addAll(SinkChecks.typedRows(table, 40, 60, "second"));
      SinkChecks.assertStored(first, table, expected);
    }
  }
}

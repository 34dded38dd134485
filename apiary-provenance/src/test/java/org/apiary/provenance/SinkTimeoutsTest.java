package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which driver properties carry the sink timeout, and that a user's own value always wins. */
class SinkTimeoutsTest {
  private static final Duration TIMEOUT = Duration.ofMillis(2500);

  @TempDir
  Path directory;

  @Test
  void postgresGetsConnectLoginAndSocketTimeoutsInWholeSeconds() {
    Properties props = props(Map.of("user", "u"));
    Properties result = SinkDialect.POSTGRESQL.withTimeouts("jdbc:postgresql://h/db", props, TIMEOUT);
    assertEquals(props(Map.of("user", "u", "connectTimeout", "3", "loginTimeout", "3", "socketTimeout", "3")),
        result);
    assertEquals(props(Map.of("user", "u")), props, "the caller's properties are not modified");
  }

  @Test
  void postgresKeepsTheUsersOwnTimeoutsFromPropertiesAndUrl() {
    Properties result = SinkDialect.POSTGRESQL.withTimeouts(
        "jdbc:postgresql://h/db?currentSchema=s&socketTimeout=0", props(Map.of("connectTimeout", "60")), TIMEOUT);
    assertEquals(props(Map.of("connectTimeout", "60", "loginTimeout", "3")), result);
  }

  @Test
  void verticaGetsLoginAndNetworkTimeoutsAndKeepsTheUsersInAnyCase() {
    assertEquals(props(Map.of("LoginTimeout", "3", "LoginNetworkTimeout", "3", "NetworkTimeout", "2500")),
        SinkDialect.VERTICA.withTimeouts("jdbc:vertica://h:5433/db", new Properties(), TIMEOUT));
    assertEquals(props(Map.of("logintimeout", "90", "LoginNetworkTimeout", "3")),
        SinkDialect.VERTICA.withTimeouts("jdbc:vertica://h:5433/db?networkTimeout=0", props(Map.of("logintimeout",
            "90")), TIMEOUT));
  }

  @Test
  void duckDbGetsNoNetworkProperties() {
    assertEquals(props(Map.of("duckdb.read_only", "true")), SinkDialect.DUCKDB.withTimeouts("jdbc:duckdb:",
        props(Map.of("duckdb.read_only", "true")), TIMEOUT));
  }

  @Test
  void defaultsOfThePropertiesAreKept() {
    Properties defaults = props(Map.of("user", "u", "socketTimeout", "7"));
    Properties result = SinkDialect.POSTGRESQL.withTimeouts("jdbc:postgresql://h/db", new Properties(defaults),
        TIMEOUT);
    assertEquals("u", result.getProperty("user"));
    assertEquals("7", result.getProperty("socketTimeout"));
  }

  @Test
  void timeoutsAreRoundedUpToWholeSecondsAndDescribed() {
    assertEquals(1, ProvenanceSink.seconds(Duration.ofMillis(1)));
    assertEquals(30, ProvenanceSink.seconds(ProvenanceSink.DEFAULT_TIMEOUT));
    assertEquals("30 s", ProvenanceSink.describe(ProvenanceSink.DEFAULT_TIMEOUT));
    assertEquals("1500 ms", ProvenanceSink.describe(Duration.ofMillis(1500)));
  }

  @Test
  void aTimeoutMustBePositive() {
    assertThrows(IllegalArgumentException.class,
        () -> ProvenanceSink.opener("jdbc:postgresql://h/db", new Properties(), Duration.ZERO));
    assertThrows(IllegalArgumentException.class,
        () -> ProvenanceSink.open("jdbc:duckdb:", new Properties(), Duration.ofSeconds(-1)));
    assertThrows(NullPointerException.class,
        () -> ProvenanceSink.open("jdbc:duckdb:", new Properties(), null));
  }

  @Test
  void duckDbOpensWithTheDefaultTimeout() throws Exception {
    try (ProvenanceSink sink = ProvenanceSink.open("jdbc:duckdb:" + directory.resolve("t.db"), null)) {
      assertEquals(ProvenanceSink.DEFAULT_TIMEOUT, sink.timeout());
      assertFalse(sink.connection().getAutoCommit());
    }
  }

  @Test
  void urlParametersAreNamesOnly() {
    assertEquals(java.util.Set.of("a", "B"), SinkDialect.urlParameters("jdbc:vertica://h/db?a=1&B=&"));
    assertEquals(java.util.Set.of(), SinkDialect.urlParameters("jdbc:duckdb:/x.db"));
    assertNull(SinkDialect.copy(new Properties()).getProperty("socketTimeout"));
  }

  private static Properties props(Map<String, String> values) {
    Properties props = new Properties();
    values.forEach(props::setProperty);
    return props;
  }
}

package org.apiary.drills.netns;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.Registrar;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * The client host of {@link NetnsClusterTest}: a process of its own in the client's namespace, which reaches the
 * database and the frontends at their 198.18 addresses only. Prints what it saw, one fact a line, for the test to
 * check.
 *
 * <ul>
 *   <li>{@code deploy DB[,DB...]}: Apiary's system tables and the counter application; prints {@code deployed}.
 *   <li>{@code run DB[,DB...] N FRONTEND...}: {@code deploy}, then {@code invoke}.
 *   <li>{@code invoke DB[,DB...] N FRONTEND...}: waits for a live lease per frontend, then N increments through each
 *       frontend (key {@code 1000 * f + i}, by {@code i + 1}), each client talking to that frontend alone; prints
 *       {@code result KEY VALUE} per call, then {@code row KEY VALUE} per counter read from VoltDB directly and
 *       {@code lease ID ENDPOINT} per live frontend lease.
 * </ul>
 */
public final class NetnsClient {
  private static final Duration LEASE_WAIT = Duration.ofSeconds(45);

  private NetnsClient() {}

  public static void main(String[] args) throws Exception {
    List<String> database = Arrays.asList(args[1].split(","));
    DatabaseConfig config = DatabaseConfig.external(database.toArray(String[]::new))
        .withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(60));
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      switch (args[0]) {
        case "deploy" -> {
          SystemSchema.ensure(db);
          Registrar.register(db, CounterApp.APP);
          System.out.println("deployed");
        }
        case "invoke" -> invoke(db, Integer.parseInt(args[2]), Arrays.asList(args).subList(3, args.length));
        case "run" -> {
          SystemSchema.ensure(db);
          Registrar.register(db, CounterApp.APP);
          System.out.println("deployed");
          invoke(db, Integer.parseInt(args[2]), Arrays.asList(args).subList(3, args.length));
        }
        default -> throw new IllegalArgumentException("deploy, invoke or run, not " + args[0]);
      }
    }
    System.out.flush();
  }

  private static void invoke(ApiaryDatabase db, int n, List<String> frontends) throws InterruptedException {
    long deadline = System.nanoTime() + LEASE_WAIT.toNanos();
    while (leases(db).size() < frontends.size()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("fewer than " + frontends.size() + " live frontend leases within "
            + LEASE_WAIT + ": " + leases(db));
      }
      Thread.sleep(100);
    }
    for (int f = 0; f < frontends.size(); f++) {
      try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontends.get(f)).withCaller("netns-client")
          .withAttemptTimeout(Duration.ofSeconds(10)).withMaxAttempts(3))) {
        for (int i = 0; i < n; i++) {
          long key = 1000L * f + i;
          long value = client.invoke("increment", key, (long) (i + 1)).value(Long.class);
          System.out.println("result " + key + " " + value);
        }
      }
    }
    VoltTable rows = db.callAdmin("reading the counters", "@AdHoc", "SELECT k, v FROM counters ORDER BY k")
        .getResults()[0];
    while (rows.advanceRow()) {
      System.out.println("row " + rows.getLong(0) + " " + rows.getLong(1));
    }
    for (String lease : leases(db)) {
      System.out.println("lease " + lease);
    }
  }

  private static List<String> leases(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading frontend leases", "@AdHoc", "SELECT frontend, endpoint FROM "
        + SystemSchema.FRONTENDS + " WHERE lease_expires_ms > SINCE_EPOCH(MILLISECOND, NOW) ORDER BY endpoint")
        .getResults()[0];
    List<String> out = new ArrayList<>();
    while (t.advanceRow()) {
      out.add(t.getString(0) + " " + t.getString(1));
    }
    return out;
  }
}

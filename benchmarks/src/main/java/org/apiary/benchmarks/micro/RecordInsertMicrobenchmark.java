package org.apiary.benchmarks.micro;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.voltdb.client.Client;
import org.voltdb.client.ClientResponse;

/**
 * What one exactly-once record costs VoltDB's site threads, by table layout. Each layout is a table shaped like
 * {@code APIARY_RECORDED_INTEGER} with one difference, written by a one-statement partitioned procedure; the program
 * calls each {@code --calls} times (in turns, several rounds) and reads the site threads' CPU time from
 * {@code /proc/self/task}. A procedure that updates a counter gives the cost of a transaction that does one statement;
 * the differences between layouts are what a layout change would save per recorded execution. Last, it fills the
 * system schema's {@code APIARY_RECORDED_INTEGER} and times retention's sweep over it (nothing expired, then all of
 * it): the site CPU a pass costs per record, which with no time index each record pays once per cleanup interval.
 *
 * <pre>java -cp ... org.apiary.benchmarks.micro.RecordInsertMicrobenchmark [calls per round] [rounds]</pre>
 */
public final class RecordInsertMicrobenchmark {
  private static final Map<String, String> LAYOUTS = new LinkedHashMap<>();
  /** The record's primary key as deployed. */
  private static final String RECORD_KEY = "invocation_id, pkey, function_name";

  static {
    LAYOUTS.put("current", table("R_CURRENT", "VARCHAR(64)", "VARCHAR(64)", "VARBINARY(1048576)", true, RECORD_KEY));
    LAYOUTS.put("no-time-index", table("R_NOTIME", "VARCHAR(64)", "VARCHAR(64)", "VARBINARY(1048576)", false,
        RECORD_KEY));
    LAYOUTS.put("inline-strings", table("R_INLINE", "VARCHAR(63 BYTES)", "VARCHAR(63 BYTES)", "VARBINARY(1048576)",
        true, RECORD_KEY));
    LAYOUTS.put("bigint-time", "CREATE TABLE R_BIGT (pkey BIGINT NOT NULL, invocation_id VARCHAR(64) NOT NULL, "
        + "function_name VARCHAR(64) NOT NULL, outputs VARBINARY(1048576) NOT NULL, recorded_ms BIGINT NOT NULL, "
        + "request_hash BIGINT, caller VARCHAR(128), PRIMARY KEY (invocation_id, pkey, function_name));\n"
        + "PARTITION TABLE R_BIGT ON COLUMN pkey;\nCREATE INDEX R_BIGT_BY_TIME ON R_BIGT (recorded_ms);\n"
        + "CREATE PROCEDURE P_R_BIGT PARTITION ON TABLE R_BIGT COLUMN pkey PARAMETER 0 AS INSERT INTO R_BIGT (pkey, "
        + "invocation_id, function_name, outputs, recorded_ms, request_hash, caller) VALUES (?, ?, ?, ?, "
        + "SINCE_EPOCH(MILLISECOND, NOW), ?, ?);\n");
    LAYOUTS.put("integer-key", "CREATE TABLE R_INTK (pkey BIGINT NOT NULL, id_high BIGINT NOT NULL, id_low BIGINT "
        + "NOT NULL, function_id BIGINT NOT NULL, invocation_id VARCHAR(64) NOT NULL, function_name VARCHAR(64) NOT NULL, "
        + "outputs VARBINARY(1048576) NOT NULL, recorded_ms BIGINT NOT NULL, request_hash BIGINT, caller VARCHAR(128), "
        + "PRIMARY KEY (pkey, id_high, id_low, function_id));\n"
        + "PARTITION TABLE R_INTK ON COLUMN pkey;\nCREATE INDEX R_INTK_BY_TIME ON R_INTK (recorded_ms);\n"
        + "CREATE PROCEDURE P_R_INTK PARTITION ON TABLE R_INTK COLUMN pkey PARAMETER 0 AS INSERT INTO R_INTK (pkey, "
        + "id_high, id_low, function_id, invocation_id, function_name, outputs, recorded_ms, request_hash, caller) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, SINCE_EPOCH(MILLISECOND, NOW), ?, ?);\n");
    LAYOUTS.put("inline-no-time", table("R_INLNT", "VARCHAR(63 BYTES)", "VARCHAR(63 BYTES)", "VARBINARY(63)", false,
        RECORD_KEY));
    LAYOUTS.put("no-key", table("R_NOKEY", "VARCHAR(64)", "VARCHAR(64)", "VARBINARY(1048576)", false, null));
    LAYOUTS.put("id-key", table("R_IDKEY", "VARCHAR(64)", "VARCHAR(64)", "VARBINARY(1048576)", false,
        "invocation_id, pkey"));
    LAYOUTS.put("inline-id-key", table("R_INIDK", "VARCHAR(63 BYTES)", "VARCHAR(63 BYTES)", "VARBINARY(63)",
        false, "invocation_id, pkey"));
    LAYOUTS.put("inline-no-key", table("R_INNOK", "VARCHAR(63 BYTES)", "VARCHAR(63 BYTES)", "VARBINARY(63)", false,
        null));
  }

  /** A table shaped like the record, with a time index or not, and {@code key} as its primary key (or none). */
  private static String table(String name, String id, String function, String outputs, boolean timeIndex,
                              String key) {
    return "CREATE TABLE " + name + " (pkey BIGINT NOT NULL, invocation_id " + id + " NOT NULL, function_name "
        + function + " NOT NULL, outputs " + outputs + " NOT NULL, recorded_at TIMESTAMP NOT NULL, "
        + "request_hash BIGINT, caller VARCHAR(128)" + (key == null ? "" : ", PRIMARY KEY (" + key + ")") + ");\n"
        + "PARTITION TABLE " + name + " ON COLUMN pkey;\n"
        + (timeIndex ? "CREATE INDEX " + name + "_BY_TIME ON " + name + " (recorded_at);\n" : "")
        + "CREATE PROCEDURE P_" + name + " PARTITION ON TABLE " + name + " COLUMN pkey PARAMETER 0 AS INSERT INTO "
        + name + " (pkey, invocation_id, function_name, outputs, recorded_at, request_hash, caller) "
        + "VALUES (?, ?, ?, ?, NOW, ?, ?);\n";
  }

  public static void main(String[] args) throws Exception {
    measure(args);
    System.exit(0); // VoltDB leaves non-daemon threads behind after an embedded shutdown
  }

  private static void measure(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2))) {
      StringBuilder ddl = new StringBuilder("CREATE TABLE M_COUNTER (k BIGINT NOT NULL, v BIGINT NOT NULL, "
          + "PRIMARY KEY (k));\nPARTITION TABLE M_COUNTER ON COLUMN k;\nCREATE PROCEDURE P_COUNTER PARTITION ON TABLE "
          + "M_COUNTER COLUMN k PARAMETER 0 AS UPDATE M_COUNTER SET v = v + 1 WHERE k = ?;\n");
      LAYOUTS.values().forEach(ddl::append);
      db.loadSchema(ddl.toString());
      Client client = db.client();
      for (long k = 0; k < 1000; k++) {
        client.callProcedure("M_COUNTER.insert", k, 0L);
      }
      Map<String, List<Double>> micros = new LinkedHashMap<>();
      List<String> names = new ArrayList<>(List.of("counter-update"));
      names.addAll(LAYOUTS.keySet());
      for (int round = 0; round <= rounds; round++) { // round 0 warms up
        for (String name : names) {
          double perCall = run(client, name, calls);
          if (round > 0) {
            micros.computeIfAbsent(name, n -> new ArrayList<>()).add(perCall);
          }
        }
      }
      System.out.printf(Locale.ROOT, "%-16s %s%n", "procedure", "site CPU µs per call, by round");
      micros.forEach((name, values) -> System.out.printf(Locale.ROOT, "%-16s %s%n", name,
          values.stream().map(v -> String.format(Locale.ROOT, "%6.2f", v)).toList()));
      sweep(db, 4 * calls); // more rows than a round: the CPU clock ticks every 10 ms
    }
  }

  /** One retention pass over the recorded-outputs table, as a frontend runs it: every partition, 2,000 rows a step. */
  private static long sweepPass(ApiaryDatabase db, org.voltdb.types.TimestampType cutoff) {
    String table = org.apiary.runtime.SystemSchema.RECORDED_INTEGER;
    org.voltdb.VoltTable keys = db.callAdmin("listing partitions", "@GetPartitionKeys", "INTEGER").getResults()[0];
    long deleted = 0;
    while (keys.advanceRow()) {
      long key = keys.getLong(1);
      String after = "";
      while (after != null) {
        org.voltdb.VoltTable step = db.callAdmin("sweeping", org.apiary.runtime.SystemSchema.sweepProcedure(table), key,
            cutoff, after, 2000L).getResults()[0];
        step.advanceRow();
        deleted += step.getLong(0);
        after = step.getString(1);
      }
    }
    return deleted;
  }

  /** Fills the recorded-outputs table with {@code rows} records and times retention's passes over it. */
  private static void sweep(ApiaryDatabase db, int rows) throws Exception {
    org.apiary.runtime.SystemSchema.ensure(db);
    Client client = db.client();
    Semaphore inFlight = new Semaphore(100);
    for (int i = 0; i < rows; i++) {
      inFlight.acquire();
      client.callProcedure(r -> inFlight.release(), "APIARY_RECORDED_INTEGER.insert", (long) (i % 1000),
          org.apiary.internal.InvocationIds.next(), "ReadIncrement", OUTPUTS,
          new org.voltdb.types.TimestampType(), null, null);
    }
    if (!inFlight.tryAcquire(100, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("inserts still unanswered after 60 s");
    }
    for (int pass = 1; pass <= 3; pass++) {
      long before = siteCpuNanos();
      long deleted = sweepPass(db, new org.voltdb.types.TimestampType(0));
      System.out.printf(Locale.ROOT, "sweep pass %d over %d records, nothing expired: %.3f µs of site CPU per record "
          + "(%d deleted)%n", pass, rows, (siteCpuNanos() - before) / 1000.0 / rows, deleted);
    }
    long before = siteCpuNanos();
    long deleted = sweepPass(db, new org.voltdb.types.TimestampType((System.currentTimeMillis() + 3_600_000L) * 1000L));
    System.out.printf(Locale.ROOT, "sweep pass deleting all %d records: %.3f µs of site CPU per record deleted%n",
        deleted, (siteCpuNanos() - before) / 1000.0 / Math.max(1, deleted));
  }

  private static final byte[] OUTPUTS = "[{\"v\":12345}]".getBytes(StandardCharsets.UTF_8);

  private static double run(Client client, String name, int calls) throws Exception {
    String procedure = name.equals("counter-update") ? "P_COUNTER"
        : "P_" + LAYOUTS.get(name).substring("CREATE TABLE ".length(), LAYOUTS.get(name).indexOf(' ', 13));
    Semaphore inFlight = new Semaphore(100);
    AtomicReference<String> failure = new AtomicReference<>();
    long before = siteCpuNanos();
    for (int i = 0; i < calls; i++) {
      inFlight.acquire();
      long key = i % 1000;
      String id = org.apiary.internal.InvocationIds.next();
      Object[] params = procedure.equals("P_COUNTER") ? new Object[] {key}
          : procedure.equals("P_R_INTK") ? new Object[] {key, (long) id.hashCode(), (long) i, 7L, id, "ReadIncrement",
              OUTPUTS, (long) i, null}
          : new Object[] {key, id, "ReadIncrement", OUTPUTS, (long) i, null};
      client.callProcedure(r -> {
        if (r.getStatus() != ClientResponse.SUCCESS) {
          failure.compareAndSet(null, r.getStatusString());
        }
        inFlight.release();
      }, procedure, params);
    }
    if (!inFlight.tryAcquire(100, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + ": calls still unanswered after 60 s");
    }
    if (failure.get() != null) {
      throw new IllegalStateException(name + " failed: " + failure.get());
    }
    return (siteCpuNanos() - before) / 1000.0 / calls;
  }

  /** CPU time (user + system) of the threads VoltDB names "SP n Site ...". */
  private static long siteCpuNanos() throws IOException {
    long ticks = 0;
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : tasks.toList()) {
        String comm = Files.readString(task.resolve("comm")).trim();
        if (comm.startsWith("SP ") && comm.contains("Site")) {
          String stat = Files.readString(task.resolve("stat"));
          String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        }
      }
    }
    return ticks * 10_000_000L; // 100 ticks per second
  }
}

package org.apiary.benchmarks.micro;

import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * What loading one provenance row into DuckDB costs the loading thread, by way of loading: DuckDB's appender (what
 * the spooler does), or the batch written as a CSV file that DuckDB's {@code COPY} reads. Rows are shaped like
 * {@code FunctionInvocations} (13 columns, 8 of them VARCHAR), loaded in batches like the spooler's into a table
 * without a key; the figure is this thread's CPU per row (the CSV way includes writing the file), per round.
 *
 * <pre>java -cp ... org.apiary.benchmarks.micro.DuckDbLoadMicrobenchmark [rows per round] [batch] [rounds] [SQL ...]</pre>
 * Each further argument is a statement run first, for example {@code "SET checkpoint_threshold = '4GB'"}.
 */
public final class DuckDbLoadMicrobenchmark {
  private static final String COLUMNS = "event_time TIMESTAMP, exec_id VARCHAR, tx_id BIGINT, exec_seq BIGINT, "
      + "partition_id INTEGER, function_name VARCHAR, graph_id VARCHAR, execution_id VARCHAR, partition_key VARCHAR, "
      + "caller VARCHAR, latency_us BIGINT, purpose VARCHAR, caller_roles VARCHAR";

  private record Row(Timestamp time, String execId, long txId, long seq, int partition, String function,
                     String graph, String invocation, String key, String caller, long latency, String purpose,
                     String roles) {}

  private DuckDbLoadMicrobenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 600_000;
    int batch = args.length > 1 ? Integer.parseInt(args[1]) : 6_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    Path dir = Files.createTempDirectory("duckdb-load-");
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + dir.resolve("p.duckdb"))) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE via_appender (" + COLUMNS + ")");
        s.execute("CREATE TABLE via_csv (" + COLUMNS + ")");
        for (int i = 3; i < args.length; i++) {
          s.execute(args[i]);
        }
      }
      long seq = 0;
      for (int round = 1; round <= rounds; round++) {
        List<Row> data = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++, seq++) {
          data.add(new Row(new Timestamp(1_700_000_000_000L + seq), "0123456789abcdef-" + seq, 1_000_000 + seq,
              seq, (int) (seq % 8), "increment", "increment", "01a2b3c4-d5e6-7f80-9a0b-" + (100_000 + seq),
              String.valueOf(seq % 1000), "user-" + (seq % 16), 40 + seq % 100, null, null));
        }
        double appender = cpuPerRow(() -> {
          for (int from = 0; from < rows; from += batch) {
            appendBatch(c, data.subList(from, Math.min(rows, from + batch)));
          }
        }, rows);
        double csv = cpuPerRow(() -> {
          for (int from = 0; from < rows; from += batch) {
            copyBatch(c, data.subList(from, Math.min(rows, from + batch)), dir.resolve("batch.csv"));
          }
        }, rows);
        System.out.printf(Locale.ROOT, "round %d: appender %.2f µs/row, csv+copy %.2f µs/row (%,d rows, batches of "
            + "%,d)%n", round, appender, csv, rows, batch);
      }
      try (Statement s = c.createStatement()) {
        var r = s.executeQuery("SELECT (SELECT COUNT(*) FROM via_appender), (SELECT COUNT(*) FROM via_csv)");
        r.next();
        System.out.println("rows loaded: appender " + r.getLong(1) + ", csv " + r.getLong(2));
      }
    } finally {
      try (var paths = Files.walk(dir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private interface Work {
    void run() throws Exception;
  }

  private static double cpuPerRow(Work work, int rows) throws Exception {
    var bean = ManagementFactory.getThreadMXBean();
    long before = bean.getCurrentThreadCpuTime();
    work.run();
    return (bean.getCurrentThreadCpuTime() - before) / 1e3 / rows;
  }

  private static void appendBatch(Connection c, List<Row> rows) throws SQLException {
    try (DuckDBAppender a = c.unwrap(DuckDBConnection.class).createAppender(DuckDBConnection.DEFAULT_SCHEMA,
        "via_appender")) {
      for (Row r : rows) {
        a.beginRow();
        a.appendEpochMicros(r.time().getTime() * 1000L);
        a.append(r.execId());
        a.append(r.txId());
        a.append(r.seq());
        a.append(r.partition());
        a.append(r.function());
        a.append(r.graph());
        a.append(r.invocation());
        a.append(r.key());
        a.append(r.caller());
        a.append(r.latency());
        appendText(a, r.purpose());
        appendText(a, r.roles());
        a.endRow();
      }
      a.flush();
    }
  }

  private static void appendText(DuckDBAppender a, String value) throws SQLException {
    if (value == null) {
      a.appendNull();
    } else {
      a.append(value);
    }
  }

  private static void copyBatch(Connection c, List<Row> rows, Path file) throws IOException, SQLException {
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      StringBuilder line = new StringBuilder(256);
      for (Row r : rows) {
        line.setLength(0);
        line.append(r.time().getTime()).append(',');
        quoted(line, r.execId()).append(',').append(r.txId()).append(',').append(r.seq()).append(',')
            .append(r.partition()).append(',');
        quoted(line, r.function()).append(',');
        quoted(line, r.graph()).append(',');
        quoted(line, r.invocation()).append(',');
        quoted(line, r.key()).append(',');
        quoted(line, r.caller()).append(',').append(r.latency()).append(',');
        quoted(line, r.purpose()).append(',');
        quoted(line, r.roles()).append('\n');
        w.append(line);
      }
    }
    try (Statement s = c.createStatement()) {
      s.execute("INSERT INTO via_csv SELECT make_timestamp(column00 * 1000), column01, column02, column03, column04, "
          + "column05, column06, column07, column08, column09, column10, column11, column12 FROM read_csv('" + file
          + "', header = false, auto_detect = false, nullstr = '\\N', columns = {'column00': 'BIGINT', "
          + "'column01': 'VARCHAR', 'column02': 'BIGINT', 'column03': 'BIGINT', 'column04': 'INTEGER', "
          + "'column05': 'VARCHAR', 'column06': 'VARCHAR', 'column07': 'VARCHAR', 'column08': 'VARCHAR', "
          + "'column09': 'VARCHAR', 'column10': 'BIGINT', 'column11': 'VARCHAR', 'column12': 'VARCHAR'})");
    }
  }

  private static StringBuilder quoted(StringBuilder b, String value) {
    if (value == null) {
      return b.append("\\N");
    }
    b.append('"');
    for (int i = 0; i < value.length(); i++) {
      char ch = value.charAt(i);
      if (ch == '"') {
        b.append('"');
      }
      b.append(ch);
    }
    return b.append('"');
  }
}

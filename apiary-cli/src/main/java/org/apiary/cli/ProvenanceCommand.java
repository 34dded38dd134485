package org.apiary.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceQueries.WrittenRecord;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceTable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Provenance queries on the analytical database from the command line (paper section 6.3): a record's state as an
 * execution read it or at a time, what executions that read a record wrote afterwards, what a function read outside
 * an allowed set, the access-control audits (who read a record for which purpose, calls refused in a period, reads
 * outside allowed purposes), and raw SQL. Prints an aligned table. Exit code 0 on success, 1 if the database or a query fails,
 * 2 on bad usage (including a table or key column the database does not have).
 */
@Command(name = "provenance", mixinStandardHelpOptions = true,
    description = "Query captured provenance in the analytical database (DuckDB, PostgreSQL or Vertica).",
    subcommands = {ProvenanceCommand.State.class, ProvenanceCommand.Downstream.class,
        ProvenanceCommand.Outside.class, ProvenanceCommand.Reads.class, ProvenanceCommand.Denied.class,
        ProvenanceCommand.OutsidePurpose.class, ProvenanceCommand.Sql.class})
public final class ProvenanceCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name a query: state, downstream, outside, reads, denied, "
        + "outside-purpose or sql");
  }

  /** Where the provenance is; shared by every query. */
  static final class SinkOptions {
    @Option(names = "--sink", defaultValue = "jdbc:duckdb:./apiary-provenance.duckdb",
        description = "JDBC URL of the analytical database (default ${DEFAULT-VALUE}); a DuckDB file is opened "
            + "read-only.")
    String url;

    @Option(names = "--user", description = "Database user.")
    String user;

    @Option(names = "--password-file", description = "A file whose first line is the database password. Without it "
        + "the password comes from the environment variable " + PASSWORD_VARIABLE + ", if set; never from the command "
        + "line, where other users would see it in the process list.")
    java.nio.file.Path passwordFile;

    /** The password from the file or the environment, or {@code null}. */
    String password() {
      if (passwordFile != null) {
        try {
          java.util.List<String> lines = java.nio.file.Files.readAllLines(passwordFile);
          if (lines.isEmpty() || lines.get(0).isEmpty()) {
            throw new IllegalArgumentException("--password-file " + passwordFile + " is empty; its first line must "
                + "be the password");
          }
          return lines.get(0);
        } catch (java.io.IOException e) {
          throw new IllegalArgumentException("cannot read --password-file " + passwordFile + ": " + e.getMessage(), e);
        }
      }
      String fromEnvironment = System.getenv(PASSWORD_VARIABLE);
      return fromEnvironment == null || fromEnvironment.isEmpty() ? null : fromEnvironment;
    }
  }

  /** The environment variable that holds the sink's password when no file is given. */
  static final String PASSWORD_VARIABLE = "APIARY_SINK_PASSWORD";

  /** A query: connects, runs, prints, and turns failures into exit codes. */
  abstract static class Query implements Callable<Integer> {
    @Mixin
    SinkOptions sink;

    @Spec
    CommandSpec spec;

    abstract void run(ProvenanceQueries queries, PrintWriter out) throws SQLException;

    @Override
    public final Integer call() {
      String password;
      try {
        password = sink.password();
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), e.getMessage(), e);
      }
      Properties props = ProvenanceSink.credentials(sink.user, password);
      if (sink.url.regionMatches(true, 0, "jdbc:duckdb:", 0, "jdbc:duckdb:".length())) {
        props.setProperty("duckdb.read_only", "true");
      }
      PrintWriter out = spec.commandLine().getOut();
      // Its network timeout outlasts the longest query the commands wait for.
      try (ProvenanceSink opened = ProvenanceSink.open(sink.url, props,
          ProvenanceQueries.DEFAULT_QUERY_TIMEOUT.plusSeconds(10))) {
        run(new ProvenanceQueries(opened.connection()), out);
        out.flush();
        return 0;
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), e.getMessage(), e);
      } catch (SQLException e) {
        out.flush();
        spec.commandLine().getErr().println("error: " + e.getMessage());
        return 1;
      }
    }

    /** {@code col=value[,col=value...]} as a key; values stay text, parsed for the column types by the queries. */
    Map<String, Object> parseKey(String text, String option) {
      Map<String, Object> key = new LinkedHashMap<>();
      for (String part : text.split(",")) {
        int eq = part.indexOf('=');
        if (eq <= 0) {
          throw new ParameterException(spec.commandLine(), option + " takes col=value[,col=value...], not '" + text
              + "'");
        }
        String column = part.substring(0, eq).trim().toLowerCase(Locale.ROOT);
        if (key.put(column, part.substring(eq + 1)) != null) {
          throw new ParameterException(spec.commandLine(), option + " names column " + column + " twice");
        }
      }
      return key;
    }
  }

  @Command(name = "state", mixinStandardHelpOptions = true,
      description = "The state of a record as a graph execution read it, or at a time.")
  static final class State extends Query {
    @Option(names = "--table", required = true, description = "The application table, e.g. accounts.")
    String table;

    @Option(names = "--key", required = true, description = "The record's primary key: col=value[,col=value].")
    String key;

    @ArgGroup(exclusive = true, multiplicity = "1")
    When when;

    static final class When {
      @Option(names = "--execution", required = true, description = "The graph execution (invocation ID).")
      String execution;

      @Option(names = "--at", required = true, description = "An ISO-8601 instant, e.g. 2024-03-01T12:00:00Z.")
      String at;
    }

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      Map<String, Object> recordKey = parseKey(key, "--key");
      Instant at = null;
      if (when.at != null) {
        try {
          at = Instant.parse(when.at);
        } catch (DateTimeParseException e) {
          throw new ParameterException(spec.commandLine(), "--at takes an ISO-8601 instant such as "
              + "2024-03-01T12:00:00Z, not '" + when.at + "'");
        }
      }
      ProvenanceTable events = queries.describeEventsTable(table, List.copyOf(recordKey.keySet()));
      Optional<Map<String, Object>> state = at == null ? queries.stateWhenRead(events, recordKey, when.execution)
          : queries.stateAt(events, recordKey, at);
      if (state.isPresent()) {
        printTable(out, List.of(state.get()));
      } else {
        out.println(at == null ? "(no state: execution " + when.execution + " never read this record, or it did "
            + "not exist when read)" : "(no state: the record did not exist at " + at + ")");
      }
    }
  }

  @Command(name = "downstream", mixinStandardHelpOptions = true,
      description = "Every record written by graph executions at or after a function of theirs read a record.")
  static final class Downstream extends Query {
    @Option(names = "--table", required = true, description = "The read record's application table.")
    String table;

    @Option(names = "--key", required = true, description = "The read record's primary key: col=value[,col=value].")
    String key;

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      Map<String, Object> recordKey = parseKey(key, "--key");
      ProvenanceTable read = queries.describeEventsTable(table, List.copyOf(recordKey.keySet()));
      // Other tables' keys are unknown here: their written records are identified by all their columns.
      List<ProvenanceTable> all = new ArrayList<>();
      for (String name : queries.applicationTables()) {
        all.add(name.equalsIgnoreCase(table) ? read : queries.describeEventsTable(name, List.of()));
      }
      List<Map<String, Object>> rows = new ArrayList<>();
      for (WrittenRecord w : queries.writtenByExecutionsThatRead(all, read, recordKey)) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("table", w.table());
        row.put("execution_id", w.executionId());
        row.put("function_name", w.functionName());
        row.put("event_type", w.eventType());
        row.put("tx_id", w.txId());
        row.put("key", keyText(w.key()));
        rows.add(row);
      }
      printTable(out, rows);
    }
  }

  @Command(name = "outside", mixinStandardHelpOptions = true,
      description = "The records of a table a function read that are not in an allowed set.")
  static final class Outside extends Query {
    @Option(names = "--function", required = true, description = "The function's name.")
    String function;

    @Option(names = "--table", required = true, description = "The application table.")
    String table;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Allowed allowed;

    @Option(names = "--key-columns", split = ",",
        description = "The table's primary key columns; needed only when the allowed set is empty.")
    List<String> keyColumns;

    static final class Allowed {
      @Option(names = "--allowed", required = true,
          description = "Allowed keys: col=value[,col=value][;col=value...] (quote the ';' from the shell).")
      String inline;

      @Option(names = "--allowed-file", required = true,
          description = "A file of allowed keys, one col=value[,col=value] a line; blank lines and #-comments skipped.")
      Path file;
    }

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      List<String> entries = new ArrayList<>();
      if (allowed.file != null) {
        try {
          for (String line : Files.readAllLines(allowed.file)) {
            if (!line.isBlank() && !line.strip().startsWith("#")) {
              entries.add(line.strip());
            }
          }
        } catch (IOException e) {
          throw new ParameterException(spec.commandLine(), "cannot read --allowed-file " + allowed.file + ": " + e);
        }
      } else {
        for (String entry : allowed.inline.split(";")) {
          if (!entry.isBlank()) {
            entries.add(entry.strip());
          }
        }
      }
      List<Map<String, Object>> keys = new ArrayList<>();
      for (String entry : entries) {
        keys.add(parseKey(entry, "an allowed key"));
      }
      List<String> columns = keyColumns != null ? keyColumns.stream().map(c -> c.strip().toLowerCase(Locale.ROOT))
          .toList() : keys.isEmpty() ? List.of() : List.copyOf(keys.get(0).keySet());
      if (columns.isEmpty()) {
        throw new ParameterException(spec.commandLine(), "the allowed set is empty: name the key columns with "
            + "--key-columns");
      }
      ProvenanceTable events = queries.describeEventsTable(table, columns);
      printTable(out, queries.readsOutside(events, function, keys));
    }
  }

  @Command(name = "reads", mixinStandardHelpOptions = true,
      description = "Who read a record, and for which purpose: every read of it with its execution, graph, function, "
          + "caller and stated purpose, in the record's order.")
  static final class Reads extends Query {
    @Option(names = "--table", required = true, description = "The application table, e.g. accounts.")
    String table;

    @Option(names = "--key", required = true, description = "The record's primary key: col=value[,col=value].")
    String key;

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      Map<String, Object> recordKey = parseKey(key, "--key");
      ProvenanceTable events = queries.describeEventsTable(table, List.copyOf(recordKey.keySet()));
      printReads(out, queries.readsOfRecord(events, recordKey));
    }
  }

  @Command(name = "denied", mixinStandardHelpOptions = true,
      description = "Calls refused by graphs' access policies in a period (nothing of them ran), oldest first.")
  static final class Denied extends Query {
    @Option(names = "--from", description = "Start of the period (inclusive), an ISO-8601 instant; default: the "
        + "beginning.")
    String from;

    @Option(names = "--to", description = "End of the period (exclusive), an ISO-8601 instant; default: now.")
    String to;

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      Instant start = from == null ? Instant.EPOCH : instant(from, "--from");
      Instant end = to == null ? Instant.now() : instant(to, "--to");
      List<Map<String, Object>> rows = new ArrayList<>();
      for (ProvenanceQueries.DeniedCall d : queries.deniedCalls(start, end)) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("denied_at", d.deniedAt());
        row.put("invocation_id", d.invocationId());
        row.put("caller", d.caller());
        row.put("graph", d.graph());
        row.put("purpose", d.purpose());
        row.put("caller_roles", d.callerRoles());
        row.put("reason", d.reason());
        rows.add(row);
      }
      printTable(out, rows);
    }

    private Instant instant(String text, String option) {
      try {
        return Instant.parse(text);
      } catch (DateTimeParseException e) {
        throw new ParameterException(spec.commandLine(), option + " takes an ISO-8601 instant such as "
            + "2024-03-01T12:00:00Z, not '" + text + "'");
      }
    }
  }

  @Command(name = "outside-purpose", mixinStandardHelpOptions = true,
      description = "Reads of a table by the given callers or role (default: every caller) for a purpose not "
          + "allowed, or none.")
  static final class OutsidePurpose extends Query {
    @Option(names = "--table", required = true, description = "The application table.")
    String table;

    @Option(names = "--key-columns", required = true, split = ",", description = "The table's primary key columns.")
    List<String> keyColumns;

    @Option(names = "--allowed-purposes", required = true, split = ",",
        description = "The purposes reads are allowed for, comma-separated.")
    List<String> allowedPurposes;

    @ArgGroup(exclusive = true)
    Who who;

    static final class Who {
      @Option(names = "--caller", split = ",", description = "Only these callers (API key identities), "
          + "comma-separated.")
      List<String> callers;

      @Option(names = "--role", description = "Only callers that had this role when they called.")
      String role;
    }

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      ProvenanceTable events = queries.describeEventsTable(table, keyColumns.stream()
          .map(c -> c.strip().toLowerCase(Locale.ROOT)).toList());
      printReads(out, who != null && who.role != null
          ? queries.readsByRoleOutsidePurposes(events, who.role, allowedPurposes)
          : queries.readsOutsidePurposes(events, who == null ? List.of() : who.callers, allowedPurposes));
    }
  }

  private static void printReads(PrintWriter out, List<ProvenanceQueries.RecordRead> reads) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ProvenanceQueries.RecordRead r : reads) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("event_time", r.eventTime());
      row.put("key", keyText(r.key()));
      row.put("execution_id", r.executionId());
      row.put("graph", r.graph());
      row.put("function", r.function());
      row.put("caller", r.caller());
      row.put("purpose", r.purpose());
      row.put("caller_roles", r.callerRoles());
      rows.add(row);
    }
    printTable(out, rows);
  }

  @Command(name = "sql", mixinStandardHelpOptions = true, description = "Run a SQL query on the provenance tables.")
  static final class Sql extends Query {
    @Parameters(index = "0", description = "The query, e.g. \"SELECT * FROM FunctionInvocations LIMIT 10\".")
    String query;

    @Override
    void run(ProvenanceQueries queries, PrintWriter out) throws SQLException {
      printTable(out, queries.sql(query));
    }
  }

  /** Rows as a table: a header, then one line per row, columns left-aligned and two spaces apart. */
  static void printTable(PrintWriter out, List<Map<String, Object>> rows) {
    if (rows.isEmpty()) {
      out.println("(no rows)");
      return;
    }
    List<String> header = List.copyOf(rows.get(0).keySet());
    int[] widths = header.stream().mapToInt(String::length).toArray();
    List<List<String>> cells = new ArrayList<>();
    for (Map<String, Object> row : rows) {
      List<String> line = new ArrayList<>();
      for (int i = 0; i < header.size(); i++) {
        String text = text(row.get(header.get(i)));
        widths[i] = Math.max(widths[i], text.length());
        line.add(text);
      }
      cells.add(line);
    }
    printLine(out, header, widths);
    for (List<String> line : cells) {
      printLine(out, line, widths);
    }
    out.println("(" + rows.size() + (rows.size() == 1 ? " row)" : " rows)"));
  }

  private static void printLine(PrintWriter out, List<String> cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      line.append(i == 0 ? "" : "  ").append(cells.get(i));
      if (i < cells.size() - 1) {
        line.append(" ".repeat(widths[i] - cells.get(i).length()));
      }
    }
    out.println(line);
  }

  private static String text(Object value) {
    if (value == null) {
      return "NULL";
    }
    if (value instanceof byte[] bytes) {
      return "0x" + HexFormat.of().formatHex(bytes);
    }
    return String.valueOf(value).replace('\n', ' ');
  }

  private static String keyText(Map<String, Object> key) {
    Collection<String> parts = new ArrayList<>();
    key.forEach((column, value) -> parts.add(column + "=" + text(value)));
    return String.join(",", parts);
  }

  /** Runs the command on its own, for trying it out before it is registered with {@link Main}. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new ProvenanceCommand()).execute(args));
  }
}

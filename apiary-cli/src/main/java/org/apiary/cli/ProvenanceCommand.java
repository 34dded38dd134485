package org.apiary.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.provenance.ProvenanceSink;
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
    @Option(names = "--sink", description = "JDBC URL of the analytical database (default: " + DEFAULT_SINK
        + "); a DuckDB file is opened read-only.")
    String url;

    @Option(names = "--data", paramLabel = "DIR", description = "The data directory of `apiary start` (or of `apiary "
        + "cluster start`) instead of --sink: while the service runs it answers the query itself (its process holds "
        + "its DuckDB file) through its console, with the admin key kept in DIR; once it stopped, its file is read.")
    Path data;

    @Option(names = "--user", description = "Database user.")
    String user;

    @Option(names = "--password-file", description = "A file whose first line is the database password. Without it "
        + "the password comes from the environment variable " + PASSWORD_VARIABLE + ", if set; never from the command "
        + "line, where other users would see it in the process list.")
    Path passwordFile;

    /** The password from the file or the environment, or {@code null}. */
    String password() {
      if (passwordFile != null) {
        try {
          List<String> lines = Files.readAllLines(passwordFile);
          if (lines.isEmpty() || lines.get(0).isEmpty()) {
            throw new IllegalArgumentException("--password-file " + passwordFile + " is empty; its first line must "
                + "be the password");
          }
          return lines.get(0);
        } catch (IOException e) {
          throw new IllegalArgumentException("cannot read --password-file " + passwordFile + ": " + e.getMessage(), e);
        }
      }
      String fromEnvironment = System.getenv(PASSWORD_VARIABLE);
      return fromEnvironment == null || fromEnvironment.isEmpty() ? null : fromEnvironment;
    }

    /** Where the queries are answered. */
    ProvenanceSource source() {
      if (data != null) {
        if (url != null || user != null || passwordFile != null) {
          throw new IllegalArgumentException("give --data DIR or --sink (with --user and --password-file), not both");
        }
        return ProvenanceSource.data(data);
      }
      return ProvenanceSource.sink(url == null ? DEFAULT_SINK : url, ProvenanceSink.credentials(user, password()));
    }
  }

  /** The sink the queries read when neither --sink nor --data is given. */
  static final String DEFAULT_SINK = "jdbc:duckdb:./apiary-provenance.duckdb";

  /** The environment variable that holds the sink's password when no file is given. */
  static final String PASSWORD_VARIABLE = "APIARY_SINK_PASSWORD";

  /**
   * A query: names itself and its parameters ({@link ProvenanceReports}), has them answered where the provenance is,
   * prints the table, and turns failures into exit codes.
   */
  abstract static class Query implements Callable<Integer> {
    @Mixin
    SinkOptions sink;

    @Spec
    CommandSpec spec;

    /** The query's name in {@link ProvenanceReports}. */
    abstract String query();

    /** Its parameters from the options (absent ones as {@code null}). */
    abstract Map<String, String> parameters();

    @Override
    public final Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try {
        ProvenanceSource source = sink.source();
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters().forEach((name, value) -> {
          if (value != null) {
            parameters.put(name, value);
          }
        });
        source.answer(query(), parameters).lines().forEach(out::println);
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
  }

  /** Parameters in order, {@code null} values kept (left out when sent). */
  private static Map<String, String> named(String... namesAndValues) {
    Map<String, String> p = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      p.put(namesAndValues[i], namesAndValues[i + 1]);
    }
    return p;
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
    String query() {
      return "state";
    }

    @Override
    Map<String, String> parameters() {
      return named("table", table, "key", key, "execution", when.execution, "at", when.at);
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
    String query() {
      return "downstream";
    }

    @Override
    Map<String, String> parameters() {
      return named("table", table, "key", key);
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
    String query() {
      return "outside";
    }

    @Override
    Map<String, String> parameters() {
      String keys = allowed.inline;
      if (allowed.file != null) { // read here: whoever answers gets the keys, never a path on this machine
        List<String> entries = new ArrayList<>();
        try {
          for (String line : Files.readAllLines(allowed.file)) {
            if (!line.isBlank() && !line.strip().startsWith("#")) {
              entries.add(line.strip());
            }
          }
        } catch (IOException e) {
          throw new ParameterException(spec.commandLine(), "cannot read --allowed-file " + allowed.file + ": " + e);
        }
        keys = String.join(";", entries);
      }
      return named("function", function, "table", table, "allowed", keys, "key-columns",
          keyColumns == null ? null : String.join(",", keyColumns));
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
    String query() {
      return "reads";
    }

    @Override
    Map<String, String> parameters() {
      return named("table", table, "key", key);
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
    String query() {
      return "denied";
    }

    @Override
    Map<String, String> parameters() {
      return named("from", from, "to", to);
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
    String query() {
      return "outside-purpose";
    }

    @Override
    Map<String, String> parameters() {
      return named("table", table, "key-columns", String.join(",", keyColumns), "allowed-purposes",
          String.join(",", allowedPurposes), "caller", who == null || who.callers == null ? null
              : String.join(",", who.callers), "role", who == null ? null : who.role);
    }
  }

  @Command(name = "sql", mixinStandardHelpOptions = true, description = "Run a SQL query on the provenance tables "
      + "(SELECT, WITH, VALUES, TABLE, FROM, DESCRIBE, SHOW or EXPLAIN first; it runs in a transaction that is rolled "
      + "back, so the audit trail cannot be changed through it).")
  static final class Sql extends Query {
    @Parameters(index = "0", description = "The query, e.g. \"SELECT * FROM FunctionInvocations LIMIT 10\".")
    String query;

    @Override
    String query() {
      return "sql";
    }

    @Override
    Map<String, String> parameters() {
      return named("query", query);
    }
  }

  /** Rows as a table, as the queries print theirs (see {@link ProvenanceReports.Report#lines()}). */
  static void printTable(PrintWriter out, List<Map<String, Object>> rows) {
    ProvenanceReports.Report.of(rows, null).lines().forEach(out::println);
  }

  /** Runs the command on its own, for trying it out before it is registered with {@link Main}. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new ProvenanceCommand()).execute(args));
  }
}

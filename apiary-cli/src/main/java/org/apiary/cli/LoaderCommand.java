package org.apiary.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.loader.LoaderProtocol;
import org.apiary.provenance.loader.LoaderServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs the provenance loader apart from the database servers until the process is stopped. */
@Command(name = "loader", mixinStandardHelpOptions = true,
    description = {"Load the provenance the database servers capture into the analytical database, in a process of "
        + "its own (on any host), so the servers' CPU is not spent on loading. Servers configured with "
        + "ProvenanceConfig.loader(\"HOST:PORT\", URL) send their capture here instead of loading it themselves; "
        + "each keeps its spooler and spill files, and a batch leaves them only once this loader has committed it "
        + "into the sink, so a loader that dies or is stopped loses nothing (the servers spill and resend, and "
        + "resent rows are not loaded twice).",
        "Runs until stopped (Ctrl-C or SIGTERM); restart it with the same --sink and --listen."})
public class LoaderCommand implements Callable<Integer> {
  /** The environment variable the sink's password may come from. */
  static final String PASSWORD_VARIABLE = "APIARY_SINK_PASSWORD";

  @Option(names = "--sink", required = true, paramLabel = "JDBC-URL", description = "Where to load: "
      + "jdbc:duckdb:FILE, jdbc:postgresql://HOST:PORT/DB or jdbc:vertica://HOST:PORT/DB. A DuckDB file is this "
      + "process's alone while it runs.")
  String sink;

  @Option(names = "--sink-user", paramLabel = "USER", description = "The sink's user.")
  String sinkUser;

  @Option(names = "--sink-password-file", paramLabel = "FILE", description = "A file whose first line is the sink "
      + "user's password. Without it the password comes from the environment variable " + PASSWORD_VARIABLE
      + ", if set; never from the command line, where other users could read it.")
  Path sinkPasswordFile;

  @Option(names = "--secret-file", paramLabel = "FILE", description = "A file whose first line is a secret every "
      + "database server must present (`cluster start --loader-secret-file`, "
      + "ProvenanceConfig.withLoaderSecret); others are refused before they load anything. Without it anyone who "
      + "reaches --listen may add rows to the provenance tables.")
  Path secretFile;

  @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:" + LoaderProtocol.DEFAULT_PORT,
      description = "Where the servers reach this loader (default ${DEFAULT-VALUE}); on a host of its own, the host's "
          + "address. Port 0 picks a free one. Nothing is encrypted: listen only where the database servers, and no "
          + "one else, can connect, and give --secret-file.")
  String listen;

  @Override
  public Integer call() throws InterruptedException {
    if (!sink.startsWith("jdbc:")) {
      throw new CliException("--sink takes a JDBC URL (jdbc:duckdb:FILE, jdbc:postgresql://HOST:PORT/DB, "
          + "jdbc:vertica://...), not " + sink, 2, null);
    }
    InetSocketAddress address;
    try {
      address = LoaderProtocol.parseAddress(listen);
    } catch (IllegalArgumentException e) {
      throw new CliException("--listen: " + e.getMessage(), 2, e);
    }
    LoaderServer server;
    try {
      server = LoaderServer.start(LoaderServer.Settings.of(sink, ProvenanceSink.credentials(sinkUser, password()),
          address).withSecret(secretFile == null ? null : firstLine(secretFile, "--secret-file")));
    } catch (SQLException e) {
      throw new CliException("cannot open the provenance sink: " + e.getMessage(), e);
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      LoaderServer.Stats s = server.stats();
      System.out.println("loader stopped: " + s.batchesLoaded() + " batches, " + s.rowsLoaded() + " rows loaded from "
          + s.connections() + " connections; " + s.loadsFailed() + " loads failed, " + s.framesRefused()
          + " frames refused");
      System.out.flush();
      stopped.countDown();
    }, "apiary-loader-shutdown"));
    System.out.println("loader listening on " + server.address() + ", loading into " + ProvenanceSink.redact(sink)
        + (secretFile == null ? "; NO secret: anyone who reaches it may add provenance rows" : ""));
    System.out.flush();
    stopped.await();
    return 0;
  }

  private String password() {
    return sinkPasswordFile != null ? firstLine(sinkPasswordFile, "--sink-password-file")
        : System.getenv(PASSWORD_VARIABLE);
  }

  /** The first line of a file given by {@code option}, not empty. */
  static String firstLine(Path file, String option) {
    try {
      String line = Files.readAllLines(file).stream().findFirst().orElse("");
      if (line.isEmpty()) {
        throw new CliException(option + " " + file + " is empty; its first line must hold the value", 2, null);
      }
      return line;
    } catch (IOException e) {
      throw new CliException("cannot read " + option + " " + file + ": " + e.getMessage(), 2, e);
    }
  }
}

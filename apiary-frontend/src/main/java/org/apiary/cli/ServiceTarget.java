package org.apiary.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** Where the commands that talk to a running Apiary find it: its data directory, or an address given directly. */
final class ServiceTarget {
  /** How long a command waits to connect to the database before saying it cannot reach it. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  /** How long one database call of a command may take (a deployment compiles and loads classes). */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

  private ServiceTarget() {}

  /** {@code --data DIR} or {@code --database HOST:PORT[,...]}: the database. */
  static final class Database {
    @Option(names = "--data", paramLabel = "DIR",
        description = "The data directory of a running `apiary start`; the database's address is read there.")
    Path data;

    @Option(names = "--database", paramLabel = "HOST:PORT", split = ",",
        description = "The database's client addresses, host:port[,host:port...], instead of --data.")
    List<String> database;

    /**
     * The database to connect to, with the provenance capture of the service in {@code --data} (an address given
     * directly says nothing about provenance: writes are then not captured).
     */
    DatabaseConfig config() {
      DatabaseConfig config;
      if (data != null) {
        ServiceDirectory.State state = new ServiceDirectory(data).runningState();
        config = DatabaseConfig.external(state.database());
        if (state.provenance() != null) {
          config = config.withProvenance(ProvenanceConfig.sink(state.provenance()));
        }
      } else {
        config = DatabaseConfig.external(database.toArray(String[]::new));
      }
      return config.withTimeouts(CONNECT_TIMEOUT, CALL_TIMEOUT);
    }

    String describe() {
      return data != null ? "Apiary in " + data : "the database at " + String.join(",", database);
    }
  }

  /** {@code --data DIR} or {@code --frontend HOST:PORT[,...]}: the frontends a client talks to. */
  static final class Frontend {
    @Option(names = "--data", paramLabel = "DIR",
        description = "The data directory of a running `apiary start`; the frontend's address is read there.")
    Path data;

    @Option(names = "--frontend", paramLabel = "HOST:PORT", split = ",",
        description = "Frontend addresses, host:port or tcp://host:port, instead of --data.")
    List<String> frontends;

    /** The frontends' ZeroMQ endpoints. */
    List<String> endpoints() {
      if (data != null) {
        return List.of(new ServiceDirectory(data).runningState().frontend());
      }
      return frontends.stream().map(f -> f.contains("://") ? f : "tcp://" + f).toList();
    }
  }

  /** Refuses a command given no target, saying what to give. */
  static ParameterException missing(CommandSpec spec, String alternative) {
    return new ParameterException(spec.commandLine(), "say where Apiary runs: --data DIR (the directory given to "
        + "`apiary start`) or " + alternative);
  }
}

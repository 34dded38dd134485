package org.apiary.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
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

  /** The environment variable a command reads an API key from when no file is given. */
  static final String API_KEY_VARIABLE = "APIARY_API_KEY";

  private ServiceTarget() {}

  /**
   * The API key a client command calls with: the first line of {@code file}, else {@link #API_KEY_VARIABLE}, else
   * the admin key in the data directory {@code data} if there is one, else {@code null} (no key).
   */
  static String credential(java.nio.file.Path file, java.nio.file.Path data) {
    java.nio.file.Path from = file;
    if (from == null) {
      String variable = System.getenv(API_KEY_VARIABLE);
      if (variable != null && !variable.isBlank()) {
        return variable.strip();
      }
      if (data == null || !java.nio.file.Files.exists(new ServiceDirectory(data).adminKey())) {
        return null;
      }
      from = new ServiceDirectory(data).adminKey();
    }
    try {
      List<String> lines = java.nio.file.Files.readAllLines(from);
      if (lines.isEmpty() || lines.get(0).isBlank()) {
        throw new CliException(from + " is empty; its first line must be an API key", 2, null);
      }
      return lines.get(0).strip();
    } catch (java.io.IOException e) {
      throw new CliException("cannot read the API key in " + from + ": " + e.getMessage(), 2, e);
    }
  }

  /** {@code --data DIR} or {@code --database HOST:PORT[,...]}: the database. */
  static final class Database {
    @Option(names = "--data", paramLabel = "DIR",
        description = "The data directory of a running `apiary start` or `apiary cluster start`; the database's "
            + "address is read there.")
    Path data;

    @Option(names = "--database", paramLabel = "HOST:PORT", split = ",",
        description = "The database's client addresses, host:port[,host:port...], instead of --data.")
    List<String> database;

    @Option(names = "--database-users", paramLabel = "FILE", description = "With --database, where its security is "
        + "on: the users file its start wrote (`apiary cluster start --secure`); the command connects as the "
        + "administrator. With --data it is read from the directory.")
    Path databaseUsers;

    /**
     * The database to connect to, with the provenance capture of the service in {@code --data} (an address given
     * directly says nothing about provenance: writes are then not captured).
     */
    DatabaseConfig config() {
      if (data != null && database != null) {
        throw new CliException("give --data DIR or --database HOST:PORT, not both", 2, null);
      }
      if (data == null && database == null) {
        throw new CliException("say where Apiary runs: --data DIR (the directory given to `apiary start`) or "
            + "--database HOST:PORT", 2, null);
      }
      if (data != null && databaseUsers != null) {
        throw new CliException("--database-users goes with --database; with --data the users are read from DIR", 2,
            null);
      }
      DatabaseConfig config;
      if (data != null && ClusterDirectory.isCluster(data)) {
        ClusterDirectory cluster = new ClusterDirectory(data);
        // A cluster's nodes say themselves whether they capture provenance (Registrar reads their deployment).
        config = DatabaseConfig.external(cluster.runningState().database().split(","))
            .withLogin(cluster.readDatabaseUsers().map(DatabaseUsers::admin).orElse(null));
      } else if (data != null) {
        ServiceDirectory service = new ServiceDirectory(data);
        ServiceDirectory.State state = service.runningState();
        config = DatabaseConfig.external(state.database());
        if (state.provenance() != null) {
          config = config.withProvenance(ProvenanceConfig.sink(state.provenance()));
        }
        config = config.withLogin(service.readDatabaseUsers().map(DatabaseUsers::admin).orElse(null));
      } else {
        config = DatabaseConfig.external(database.toArray(String[]::new));
        if (databaseUsers != null) {
          config = config.withLogin(DatabaseUsers.readFrom(databaseUsers).admin());
        }
      }
      return config.withTimeouts(CONNECT_TIMEOUT, CALL_TIMEOUT);
    }

    /** The provenance sink the service or cluster in {@code --data} captures into, or {@code null}. */
    String provenanceSink() {
      if (data == null) {
        return null;
      }
      if (ClusterDirectory.isCluster(data)) {
        return new ClusterDirectory(data).readSettings().map(ClusterDirectory.Settings::provenance).orElse(null);
      }
      return new ServiceDirectory(data).runningState().provenance();
    }

    /** Where the servers of the service or cluster in {@code --data} write their backlog reports, or {@code null}. */
    Path provenanceSpill() {
      if (data == null) {
        return null;
      }
      return ClusterDirectory.isCluster(data) ? new ClusterDirectory(data).provenanceSpill()
          : new ServiceDirectory(data).provenanceSpill();
    }

    String describe() {
      return data == null ? "the database at " + String.join(",", database)
          : (ClusterDirectory.isCluster(data) ? "the cluster in " : "Apiary in ") + data;
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
  /**
   * Opens the database {@code target} names, as its administrator; a command given neither {@code --data} nor
   * {@code --database} ({@code target} null) is refused naming both.
   */
  static ApiaryDatabase openDatabase(Database target, CommandSpec spec) {
    if (target == null) {
      throw missing(spec, "--database HOST:PORT");
    }
    return ApiaryDatabase.open(target.config());
  }

    static ParameterException missing(CommandSpec spec, String alternative) {
    return new ParameterException(spec.commandLine(), "say where Apiary runs: --data DIR (the directory given to "
        + "`apiary start`) or " + alternative);
  }
}

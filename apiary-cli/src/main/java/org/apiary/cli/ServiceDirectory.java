package org.apiary.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.apiary.runtime.journal.JournalStatusReport;

/**
 * The data directory of an {@code apiary start} service and the files it keeps there:
 *
 * <ul>
 *   <li>{@value #DATABASE}/: the embedded VoltDB's root (its snapshots, restored on the next start);</li>
 *   <li>{@value #PROVENANCE}: the DuckDB file captured provenance is loaded into;</li>
 *   <li>{@value #SETTINGS}: what the first start chose (partitions, snapshot interval, provenance), which VoltDB keeps
 *       for good in its root, so later starts use the same;</li>
 *   <li>{@value #LOCK}: locked by the running service for its whole life (the operating system drops the lock when
 *       the process dies, even by SIGKILL), holding its process ID; a second start on the directory is refused;</li>
 *   <li>{@value #STATE}: written once the service is ready (process ID and addresses), removed on a clean stop. A run
 *       that ends otherwise (SIGKILL, a crash, VoltDB exiting) leaves it behind, stale: it describes the running
 *       service only while the process that holds {@value #LOCK} is the one it names, so a reused pid never makes a
 *       stale file look alive ({@link #runningState()}); the next start replaces it, saying so;</li>
 *   <li>{@code journal-status.json} ({@link JournalStatusReport}): the journal's mode, size and durable lag,
 *       rewritten every 2 s (the journal's writer lives in the service's process, so this is how
 *       {@code apiary status} learns it); removed on a clean stop;</li>
 *   <li>{@code database/provenance-spill/server-.../}{@value org.apiary.runtime.provenance.BacklogReport#FILE}: the
 *       provenance spooler's backlog, written by the database server itself
 *       ({@link org.apiary.runtime.provenance.BacklogReport}).</li>
 * </ul>
 */
final class ServiceDirectory {
  static final String DATABASE = "database";
  static final String PROVENANCE = "provenance.duckdb";
  static final String SETTINGS = "apiary-settings.json";
  static final String LOCK = "apiary.lock";
  static final String STATE = "apiary.json";
  /** The admin API key the first start created, readable by its owner only. */
  static final String ADMIN_KEY = "admin.key";
  /** The database's VoltDB users' passwords ({@link org.apiary.database.DatabaseUsers}), readable by its owner only. */
  static final String DATABASE_USERS = "database-users.properties";
  /** The frontends' database login alone, for frontends on other hosts (a cluster's, from {@code --secure}). */
  static final String FRONTEND_DATABASE_USER = "frontend-database-user.properties";
  /** Where the embedded database's servers spill provenance and report their backlog, under {@value #DATABASE}. */
  static final String PROVENANCE_SPILL = "provenance-spill";

  static final ObjectMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  /**
   * What a ready service writes to {@value #STATE}.
   *
   * @param pid the service's process ID
   * @param dataDirectory the data directory, absolute
   * @param database the VoltDB client address, {@code host:port}
   * @param frontend the frontend's ZeroMQ endpoint, {@code tcp://host:port}
   * @param frontendPort the frontend's TCP port
   * @param partitions the database's partitions
   * @param provenance the provenance sink's JDBC URL, or {@code null} if provenance is not captured
   * @param startedAt when the service became ready (ISO-8601)
   * @param console its console's base URL ({@code http://127.0.0.1:PORT}), which also answers the provenance
   *     commands while the service holds its sink; {@code null} if it serves none (or was started by an older version)
   */
  record State(long pid, String dataDirectory, String database, String frontend, int frontendPort, int partitions,
               String provenance, String startedAt, String console) {}

  /**
   * What the first start chose; see {@link ServiceDirectory}.
   *
   * @param partitions the embedded database's partitions
   * @param snapshotIntervalSeconds seconds between automatic snapshots
   * @param provenance whether provenance is captured (into {@value #PROVENANCE})
   */
  record Settings(int partitions, long snapshotIntervalSeconds, boolean provenance, String journal) {
    /** The journal mode of the first start; directories first started before the journal existed have none. */
    org.apiary.journal.JournalMode journalMode() {
      return journal == null ? org.apiary.journal.JournalMode.NONE : org.apiary.journal.JournalMode.parse(journal);
    }
  }

  private final Path root;

  ServiceDirectory(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  Path root() {
    return root;
  }

  Path database() {
    return root.resolve(DATABASE);
  }

  Path provenance() {
    return root.resolve(PROVENANCE);
  }

  Path adminKey() {
    return root.resolve(ADMIN_KEY);
  }

  Path databaseUsers() {
    return root.resolve(DATABASE_USERS);
  }

  /**
   * The database's users, if it has them: those of the file the first start wrote. A directory whose database was
   * created before Apiary gave it users has none (it runs open).
   */
  Optional<org.apiary.database.DatabaseUsers> readDatabaseUsers() {
    return org.apiary.database.DatabaseUsers.readIfPresent(databaseUsers());
  }

  Path stateFile() {
    return root.resolve(STATE);
  }

  /** The state a ready service wrote, if the file is there (a service killed by SIGKILL leaves a stale one). */
  Optional<State> readState() {
    return read(stateFile(), State.class);
  }

  /**
   * How {@value #STATE} describes a process that is not the one holding the directory now, for messages: "stale
   * apiary.json from pid N" (or "an unreadable stale apiary.json" if it cannot be parsed, as a write cut short by a
   * full disk leaves it); empty if there is no such file or it names {@code holder}.
   */
  Optional<String> staleState(long holder) {
    if (!Files.exists(stateFile())) {
      return Optional.empty();
    }
    State state;
    try {
      state = JSON.readValue(stateFile().toFile(), State.class);
    } catch (IOException e) {
      return Optional.of("an unreadable stale " + STATE + " (" + e.getMessage().lines().findFirst().orElse("") + ")");
    }
    if (state.pid() == holder) {
      return Optional.empty();
    }
    return Optional.of("stale " + STATE + " from pid " + state.pid() + ", started " + state.startedAt());
  }

  Optional<Settings> readSettings() {
    return read(root.resolve(SETTINGS), Settings.class);
  }

  void writeSettings(Settings settings) {
    write(root.resolve(SETTINGS), settings);
  }

  void writeState(State state) {
    write(stateFile(), state);
  }

  void deleteState() {
    delete(stateFile());
  }

  /** The spill root of the embedded database's provenance capture, where its server reports its backlog. */
  Path provenanceSpill() {
    return database().resolve(PROVENANCE_SPILL);
  }

  void deleteJournalStatus() {
    delete(root.resolve(JournalStatusReport.FILE));
  }

  Optional<JournalStatusReport> readJournalStatus() {
    return JournalStatusReport.readFrom(root);
  }

  private static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Takes the directory's lock for this process and writes this process's ID into the lock file.
   *
   * @return the lock, held until it is released or the process ends; empty if another process holds it
   */
  Optional<FileLock> lock() {
    try {
      // Owner-only: it holds the database's passwords, its data and provenance (issue 45).
      org.apiary.database.OwnerOnlyFile.createDirectory(root);
      FileChannel channel = FileChannel.open(root.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
        return Optional.empty();
      }
      org.apiary.database.OwnerOnlyFile.restrictTree(root); // files an older version left readable
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      channel.force(false);
      return Optional.of(lock);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot lock " + root.resolve(LOCK) + ": " + e.getMessage(), e);
    }
  }

  /**
   * The process ID of the service holding this directory, if one does: the lock is held by another process. A
   * directory without a lock file has no service.
   */
  Optional<Long> holder() {
    Path lockFile = root.resolve(LOCK);
    if (!Files.exists(lockFile)) {
      return Optional.empty();
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock probe = channel.tryLock();
      if (probe != null) {
        probe.release();
        return Optional.empty();
      }
      String text = Files.readString(lockFile, StandardCharsets.US_ASCII).strip();
      try {
        return Optional.of(Long.parseLong(text));
      } catch (NumberFormatException e) {
        return Optional.of(-1L); // held, but the holder has not written its ID yet
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot check the lock " + lockFile + ": " + e.getMessage(), e);
    }
  }

  /**
   * The state of the service running here.
   *
   * @throws CliException saying how to start one if none runs or it is not ready yet
   */
  State runningState() {
    if (!Files.isDirectory(root)) {
      throw new CliException(root + " does not exist: start Apiary there with: apiary start --data " + root);
    }
    Optional<Long> holder = holder();
    if (holder.isEmpty()) {
      throw new CliException("no Apiary is running in " + root + staleSuffix(-1) + ": start it with: apiary start "
          + "--data " + root);
    }
    long pid = holder.get();
    Optional<String> stale = staleState(pid);
    Optional<State> state = stale.isPresent() ? Optional.empty() : readState();
    return state.orElseThrow(() -> new CliException("Apiary in " + root + " is still starting ("
        + (pid > 0 ? "pid " + pid : "its pid is not written yet") + stale.map(s -> "; " + s + " ignored").orElse("")
        + "): try again in a few seconds"));
  }

  /**
   * " (not running: stale apiary.json from pid N, ...)" for a directory whose lock nobody holds but whose state file
   * is still there, else "".
   */
  String staleSuffix(long holder) {
    return staleState(holder).map(s -> " (not running: " + s + ", which ended without a clean stop: killed, crashed "
        + "or stopped by a full disk; ignored, and the next start replaces it)").orElse("");
  }

  static <T> Optional<T> read(Path file, Class<T> type) {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(JSON.readValue(file.toFile(), type));
    } catch (IOException e) {
      throw new CliException("cannot read " + file + " (" + e.getMessage() + "): if no Apiary runs there, delete it");
    }
  }

  static void write(Path file, Object value) {
    try {
      Files.createDirectories(file.getParent());
      org.apiary.database.OwnerOnlyFile.replaceAtomically(file, JSON.writeValueAsBytes(value));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}

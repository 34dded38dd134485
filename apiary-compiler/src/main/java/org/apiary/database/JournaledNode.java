package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;
import org.apiary.journal.JournalDirectory;
import org.apiary.journal.JournalException;
import org.apiary.journal.JournalMode;
import org.apiary.journal.JournalWriter;
import org.apiary.runtime.journal.ServerJournal;

/**
 * The main class of a journaled cluster node's JVM: locks the node's journal directory (a second server on it is
 * refused before VoltDB starts), installs the node's {@link ServerJournal} and its {@link NodeCheckpointer}, and
 * runs {@code org.voltdb.VoltDB} with the same arguments. The node replays until the cluster's recovery tells it
 * which timeline to write.
 */
public final class JournaledNode {
  /** The system property naming the node's journal directory. */
  public static final String DIRECTORY_PROPERTY = "apiary.journal.directory";
  /** The system property naming the journal's mode ({@link JournalMode#parse}). */
  public static final String MODE_PROPERTY = "apiary.journal.mode";
  /** The system property giving the checkpoint interval in milliseconds. */
  public static final String INTERVAL_PROPERTY = "apiary.journal.checkpointIntervalMs";
  /** The system property naming the owner-only file of the cluster's users (absent: security is off). */
  public static final String USERS_PROPERTY = "apiary.journal.users";
  /** The system property naming the owner-only file holding the cluster's journal secret. */
  public static final String SECRET_PROPERTY = "apiary.journal.secretFile";
  /**
   * The system property of a node that rejoins a running cluster: the timeline (hexadecimal) the cluster's nodes
   * write, which this node continues from its first transaction on.
   */
  public static final String REJOIN_TIMELINE_PROPERTY = "apiary.journal.rejoinTimeline";

  private JournaledNode() {}

  /** Runs the node; exits with status 2, saying why, if its journal cannot be opened. */
  public static void main(String[] args) throws Exception {
    JournalDirectory directory;
    JournalMode mode;
    Duration interval;
    DatabaseLogin login;
    long secret;
    try {
      mode = JournalMode.parse(System.getProperty(MODE_PROPERTY));
      String dir = System.getProperty(DIRECTORY_PROPERTY);
      if (dir == null || mode == JournalMode.NONE) {
        throw new IllegalArgumentException("a journaled node needs -D" + DIRECTORY_PROPERTY + " and -D" + MODE_PROPERTY
            + " (asynchronous or synchronous)");
      }
      interval = Duration.ofMillis(Long.parseLong(System.getProperty(INTERVAL_PROPERTY, "60000")));
      String users = System.getProperty(USERS_PROPERTY);
      login = users == null ? null : DatabaseUsers.readFrom(Path.of(users)).admin();
      secret = ClusterJournal.readSecret(Path.of(System.getProperty(SECRET_PROPERTY, "")));
      directory = JournalDirectory.open(Path.of(dir));
    } catch (JournalException | IllegalArgumentException | org.apiary.DatabaseException e) {
      System.err.println("apiary: this node cannot start: " + e.getMessage());
      System.exit(2);
      return;
    }
    Path root = directory.path().getParent();
    ServerJournal journal = ServerJournal.installForNode(directory, JournalWriter.Settings.of(mode),
        id -> DatabaseJournal.deleteSnapshotsOtherThan(root,
            ClusterCheckpoints.nonce(ServerJournal.current().writer().timeline(), id)), secret);
    String rejoin = System.getProperty(REJOIN_TIMELINE_PROPERTY);
    if (rejoin != null) {
      try {
        startWritingForRejoin(journal, directory, Long.parseUnsignedLong(rejoin, 16), JournalWriter.Settings.of(mode));
      } catch (JournalException | IllegalArgumentException e) {
        System.err.println("apiary: this node cannot rejoin: " + e.getMessage());
        System.exit(2);
        return;
      }
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> journal.closeNode(Duration.ofSeconds(5)),
        "apiary-journal-close"));
    Thread checkpointer = new Thread(new NodeCheckpointer(interval, login, root), "apiary-journal-checkpointer");
    checkpointer.setDaemon(true);
    checkpointer.start();
    org.voltdb.VoltDB.main(args);
  }

  /**
   * A node that rejoins the running cluster writes from before VoltDB starts, so every transaction its sites run
   * once they have taken their partitions' copies from the live replicas is journaled: its journal continues
   * {@code timeline} (the one the live nodes write) after the records it had when it died, the torn tail cut. What
   * ran while it was down is in the live replicas' journals, which a recovery merges with its own (a node that
   * missed transactions loses nothing another node has); the records it had before it died stay, since the
   * multi-partition transactions it coordinated are recorded only there. Other timelines are deleted.
   */
  static void startWritingForRejoin(ServerJournal journal, JournalDirectory directory, long timeline,
                                    JournalWriter.Settings settings) {
    org.apiary.journal.JournalReader.Timeline mine = org.apiary.journal.JournalReader.scan(directory.path(), false)
        .get(timeline);
    directory.deleteTimelinesOtherThan(timeline);
    JournalWriter writer = mine == null ? JournalWriter.start(directory, timeline, 1, settings)
        : JournalWriter.continueTimeline(directory, mine, settings);
    journal.startWriting(writer, directory.path());
  }
}

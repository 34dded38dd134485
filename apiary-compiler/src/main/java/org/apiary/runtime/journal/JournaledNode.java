package org.apiary.runtime.journal;

import java.nio.file.Path;
import org.apiary.journal.JournalDirectory;
import org.apiary.journal.JournalException;
import org.apiary.journal.JournalMode;
import org.apiary.journal.JournalWriter;

/**
 * The main class of a journaled cluster node's JVM: locks the node's journal directory (a second server on it is
 * refused before VoltDB starts), installs the node's {@link ServerJournal}, and runs {@code org.voltdb.VoltDB} with
 * the same arguments. The node replays until the cluster's recovery tells it which timeline to write.
 */
public final class JournaledNode {
  /** The system property naming the node's journal directory. */
  public static final String DIRECTORY_PROPERTY = "apiary.journal.directory";
  /** The system property naming the journal's mode ({@link JournalMode#parse}). */
  public static final String MODE_PROPERTY = "apiary.journal.mode";

  private JournaledNode() {}

  /** Runs the node; exits with status 2, saying why, if its journal cannot be opened. */
  public static void main(String[] args) throws Exception {
    JournalDirectory directory;
    JournalMode mode;
    try {
      mode = JournalMode.parse(System.getProperty(MODE_PROPERTY));
      String dir = System.getProperty(DIRECTORY_PROPERTY);
      if (dir == null || mode == JournalMode.NONE) {
        throw new IllegalArgumentException("a journaled node needs -D" + DIRECTORY_PROPERTY + " and -D" + MODE_PROPERTY
            + " (asynchronous or synchronous)");
      }
      directory = JournalDirectory.open(Path.of(dir));
    } catch (JournalException | IllegalArgumentException e) {
      System.err.println("apiary: this node cannot start: " + e.getMessage());
      System.exit(2);
      return;
    }
    ServerJournal journal = ServerJournal.installForNode(directory, JournalWriter.Settings.of(mode));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> journal.closeNode(java.time.Duration.ofSeconds(5)),
        "apiary-journal-close"));
    org.voltdb.VoltDB.main(args);
  }
}

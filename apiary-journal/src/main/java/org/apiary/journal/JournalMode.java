package org.apiary.journal;

/** When a committed write transaction's journal record reaches the disk, relative to its reply. */
public enum JournalMode {
  /** No journal: a crash loses what committed after the last snapshot (tests and benchmarks). */
  NONE,
  /**
   * Records are written and fsynced in groups at least every {@link JournalWriter.Settings#fsyncInterval()}; replies
   * do not wait, so a crash loses at most that interval's acknowledged work.
   */
  ASYNCHRONOUS,
  /** A reply leaves only once every record it depends on is fsynced: a crash loses nothing acknowledged. */
  SYNCHRONOUS;

  /** The mode named by {@code text} (case-insensitive: none, asynchronous or async, synchronous or sync). */
  public static JournalMode parse(String text) {
    return switch (text == null ? "" : text.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "none" -> NONE;
      case "asynchronous", "async" -> ASYNCHRONOUS;
      case "synchronous", "sync" -> SYNCHRONOUS;
      default -> throw new IllegalArgumentException("journal mode '" + text + "' is not one of none, asynchronous, "
          + "synchronous");
    };
  }
}

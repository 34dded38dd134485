package org.apiary.drills.provenance;

/** What the drill's aborting functions throw after their writes and reads, so their transaction rolls back. */
public class PlannedAbortException extends RuntimeException {
  /** An abort of the segment tagged {@code tag}. */
  public PlannedAbortException(String tag) {
    super("aborts on purpose after its writes and reads (tag " + tag + ")");
  }
}

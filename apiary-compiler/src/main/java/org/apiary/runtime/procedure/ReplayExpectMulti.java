package org.apiary.runtime.procedure;

import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.VoltProcedure;

/**
 * Tells the node coordinating multi-partition transactions which journal record it replays next (see
 * {@link ReplayExpect}): a multi-partition procedure's code runs on that node only.
 */
public class ReplayExpectMulti extends VoltProcedure {
  /** @return 1 */
  public long run(byte[] records) {
    ServerJournal journal = ServerJournal.current();
    if (journal == null || !journal.replaying()) {
      throw new VoltAbortException("no journal replay is in progress on this node");
    }
    journal.expectBatch(records);
    return 1;
  }
}

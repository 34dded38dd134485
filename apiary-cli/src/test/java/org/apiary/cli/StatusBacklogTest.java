package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.apiary.runtime.provenance.BacklogReport;
import org.junit.jupiter.api.Test;

/** How {@code apiary status} prints one server's provenance backlog report (issue 43). */
class StatusBacklogTest {
  /** The spill files' bytes, the oldest unloaded row's age and an unreachable sink are printed. */
  @Test
  void aServersLineNamesSpillBytesTheOldestRowsAgeAndTheSink() {
    String line = StatusCommand.spooler(new BacklogReport("/srv/a", 9, 3, 40, 100, 0, "cannot connect", null, false,
        Instant.now().toString(), 8192L, 75.25, false));
    assertTrue(line.startsWith("rows waiting in the spooler: 43 (3 in memory, 40 in spill files of 8192 bytes; "
        + "oldest unloaded row 75.3 s old; sink UNREACHABLE at its last attempt; 100 loaded since its start"), line);
    assertTrue(line.contains("last error: cannot connect"), line);
    String fine = StatusCommand.spooler(new BacklogReport("/srv/a", 9, 0, 0, 100, 0, null, null, false,
        Instant.now().toString(), 0L, 0.0, true));
    assertTrue(fine.contains("0 in spill files of 0 bytes; oldest unloaded row 0.0 s old; sink reachable;"), fine);
    String old = StatusCommand.spooler(new BacklogReport("/srv/a", 9, 0, 0, 100, 0, null, null, false,
        Instant.now().toString(), null, null, null));
    assertTrue(old.startsWith("rows waiting in the spooler: 0 (0 in memory, 0 in spill files; 100 loaded"), old);
  }
}

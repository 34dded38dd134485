package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * VoltDB's status text as Apiary's errors quote it: no Java stack frame (issue 44: a schedule round retried after a
 * deploy logged "wasn't planned against the current catalog version" with VoltDB's frame under it).
 */
class StatusTextTest {
  @Test
  void stackFramesAreLeftOutAndAtMostThreeLinesKept() {
    String seen = "VOLTDB ERROR: USER ABORT AdHoc transaction 3619631924690943 wasn't planned against the current "
        + "catalog version. Statement: SELECT name FROM APIARY_SCHEDULES\n"
        + "    at org.voltdb.sysprocs.AdHoc_RO_MP.run(AdHoc_RO_MP.java:42)\n";
    assertEquals("VOLTDB ERROR: USER ABORT AdHoc transaction 3619631924690943 wasn't planned against the current "
        + "catalog version. Statement: SELECT name FROM APIARY_SCHEDULES", ApiaryDatabase.firstLines(seen));
    assertEquals("a\nb\nc", ApiaryDatabase.firstLines("a\n\tat x.Y.z(Y.java:1)\nb\nc\nd\n"));
    assertEquals("", ApiaryDatabase.firstLines(null));
  }
}

package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.RecordFailure;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 44 item 3: whether another execution recorded an instance first is the recording procedure's answer, not a
 * search of VoltDB's error text for "CONSTRAINT" (which the frontend, the dispatcher and external steps each did).
 */
@DatabaseTest
class RecordFailureTest {
  @Test
  void aSecondRecordOfAnInstanceWritesNothingAndSaysSoAndTheFirstStands(TestDatabase database) {
    ApiaryDatabase db = database.database();
    SystemSchema.ensure(db);
    String procedure = SystemSchema.recordFailureFencedProcedure(SystemSchema.RECORDED_VARCHAR);
    long first = db.callAdmin("recording", procedure, "rf-key", "rf-invocation", "rfFunction", new byte[] {1}, 7L,
        "rf-caller", 0L, 0L).getResults()[0].asScalarLong();
    long second = db.callAdmin("recording again", procedure, "rf-key", "rf-invocation", "rfFunction", new byte[] {2},
        7L, "rf-caller", 0L, 0L).getResults()[0].asScalarLong();
    assertEquals(RecordFailure.RECORDED, first);
    assertEquals(RecordFailure.ALREADY_RECORDED, second);
    VoltTable t = db.callAdmin("reading the record", "@AdHoc", "SELECT outputs FROM " + SystemSchema.RECORDED_VARCHAR
        + " WHERE invocation_id = 'rf-invocation'").getResults()[0];
    assertEquals(1, t.getRowCount());
    t.advanceRow();
    assertArrayEquals(new byte[] {1}, t.getVarbinary(0), "the first record stands");
  }
}

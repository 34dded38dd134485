package org.apiary.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The merge of a cluster's journals into a replay order. The expected orders are written out by hand from what each
 * node executed, not computed.
 */
class JournalMergeTest {
  private static final int MP = JournalRecord.MULTI_PARTITION;

  private static JournalRecord sp(int partition, long txnId) {
    return new JournalRecord(0, partition, txnId, txnId * 10, 1, txnId, "P" + partition + "_" + txnId, null,
        new byte[] {(byte) txnId});
  }

  private static JournalRecord mp(long txnId) {
    return new JournalRecord(0, MP, txnId, txnId * 10, 1, txnId, "M" + txnId, null, new byte[] {(byte) txnId});
  }

  private static JournalRecord mark(int partition, long mpTxnId) {
    return JournalRecord.mark(0, partition, mpTxnId, 1);
  }

  /** The plan as text: "p0:a,b p1:c | M | ..." with each step's records by procedure name. */
  private static String render(JournalMerge.Plan plan) {
    List<String> out = new ArrayList<>();
    for (JournalMerge.Step s : plan.steps()) {
      if (s instanceof JournalMerge.Barrier b) {
        out.add(b.record().procedure());
      } else {
        JournalMerge.Partitions p = (JournalMerge.Partitions) s;
        List<String> parts = new ArrayList<>();
        p.records().forEach((partition, list) -> parts.add(String.join(",",
            list.stream().map(JournalRecord::procedure).toList())));
        out.add(String.join(" ", parts));
      }
    }
    return String.join(" | ", out);
  }

  private static final Map<Integer, Long> NOTHING_IN_SNAPSHOT = Map.of(0, 0L, 1, 0L, MP, 0L);

  @Test
  void replicasMergeAndMultiPartitionTransactionsFallBetweenTheirMarks() {
    // Node A holds partition 0 and coordinated M100; node B holds partition 1; both replicate each other.
    List<JournalRecord> a = List.of(sp(0, 1), sp(1, 1), sp(0, 2), mark(0, 100), mark(1, 100), mp(100), sp(1, 2),
        sp(0, 3));
    List<JournalRecord> b = List.of(sp(1, 1), sp(0, 1), sp(0, 2), mark(1, 100), mark(0, 100), sp(0, 3), sp(1, 2));
    JournalMerge.Plan plan = JournalMerge.plan(List.of(a, b), NOTHING_IN_SNAPSHOT, false);
    assertEquals("P0_1,P0_2 P1_1 | M100 | P0_3 P1_2", render(plan));
    assertEquals(6, plan.records());
    assertEquals(0, plan.unmatchedMarks());
  }

  @Test
  void aNodeThatMissedTransactionsLosesNothingAnotherNodeHas() {
    // B was down for P0_1 and P0_2 (it rejoined): its mark of M100 knows no transaction before it.
    List<JournalRecord> a = List.of(sp(0, 1), sp(0, 2), mark(0, 100), mp(100), sp(0, 3));
    List<JournalRecord> b = List.of(mark(0, 100), sp(0, 3), sp(0, 4));
    JournalMerge.Plan plan = JournalMerge.plan(List.of(b, a), Map.of(0, 0L, MP, 0L), false);
    assertEquals("P0_1,P0_2 | M100 | P0_3,P0_4", render(plan));
  }

  @Test
  void whatTheSnapshotHoldsIsSkipped() {
    List<JournalRecord> a = List.of(sp(0, 1), sp(0, 2), mark(0, 100), mp(100), sp(0, 3), mark(0, 101), mp(101),
        sp(0, 4));
    JournalMerge.Plan plan = JournalMerge.plan(List.of(a), Map.of(0, 3L, MP, 100L), false);
    assertEquals("M101 | P0_4", render(plan));
    assertEquals(4, plan.alreadyInSnapshot());
  }

  @Test
  void aMarkWithoutItsRecordIsARolledBackTransactionAndIsDropped() {
    List<JournalRecord> a = List.of(sp(0, 1), mark(0, 100), sp(0, 2), mark(0, 101), mp(101), sp(0, 3));
    JournalMerge.Plan plan = JournalMerge.plan(List.of(a), Map.of(0, 0L, MP, 0L), false);
    assertEquals("P0_1,P0_2 | M101 | P0_3", render(plan));
    assertEquals(1, plan.unmatchedMarks());
  }

  @Test
  void aPartitionWhoseJournalEndsBeforeAMarkRanEverythingItHasBeforeIt() {
    // Node B's unsynced tail (its mark of M100 and what followed) was lost in a crash.
    List<JournalRecord> a = List.of(sp(0, 1), mark(0, 100), mp(100), sp(0, 2));
    List<JournalRecord> b = List.of(sp(1, 1));
    JournalMerge.Plan plan = JournalMerge.plan(List.of(a, b), NOTHING_IN_SNAPSHOT, false);
    assertEquals("P0_1 P1_1 | M100 | P0_2", render(plan));
  }

  @Test
  void aMultiPartitionRecordMarkedNowhereCannotBePlaced() {
    List<JournalRecord> a = List.of(sp(0, 1), mp(100), sp(0, 2), mark(0, 101), mp(101), sp(0, 3));
    JournalCorruptException e = assertThrows(JournalCorruptException.class,
        () -> JournalMerge.plan(List.of(a), Map.of(0, 0L, MP, 0L), false));
    assertTrue(e.getMessage().contains("M100") && e.getMessage().contains("--accept-journal-loss"), e.getMessage());
    JournalMerge.Plan plan = JournalMerge.plan(List.of(a), Map.of(0, 0L, MP, 0L), true);
    assertEquals("", render(plan), "accepting the loss, replay stops before the record it cannot place");
    assertEquals(1, plan.notes().size());
    assertTrue(plan.notes().get(0).contains("dropping 5 records"), plan.notes().get(0));
  }

  @Test
  void nodesThatDisagreeAboutATransactionStopTheMerge() {
    JournalRecord other = new JournalRecord(0, 0, 1, 10, 1, 1, "Different", null, new byte[] {1});
    assertThrows(JournalCorruptException.class,
        () -> JournalMerge.plan(List.of(List.of(sp(0, 1)), List.of(other)), Map.of(0, 0L, MP, 0L), false));
  }

  @Test
  void aPartitionTheSnapshotDoesNotPlaceIsAnError() {
    assertThrows(JournalCorruptException.class,
        () -> JournalMerge.plan(List.of(List.of(sp(5, 1))), Map.of(0, 0L, MP, 0L), false));
  }

  @Test
  void recordsSurviveBatchEncoding() {
    List<JournalRecord> records = List.of(sp(0, 1), mp(100), mark(1, 100));
    List<JournalRecord> back = JournalFormat.decodeRecords(JournalFormat.encodeRecords(records));
    assertEquals(records, back);
    assertTrue(back.get(2).isMark());
    byte[] damaged = JournalFormat.encodeRecords(records);
    damaged[damaged.length - 1] ^= 1;
    assertThrows(IllegalArgumentException.class, () -> JournalFormat.decodeRecords(damaged));
  }
}

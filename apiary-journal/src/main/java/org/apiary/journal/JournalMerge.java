package org.apiary.journal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The replay order of a cluster's journals: each node journals the partitions it holds (replicas included) and, for a
 * multi-partition transaction, a {@link JournalRecord#mark mark} on each of them where it executed; the node that
 * coordinated it journals its record. This merges one timeline of every node's journal into steps a recovery runs in
 * order: each partition's single-partition transactions up to the next multi-partition one, then that one alone.
 *
 * <p>Within a partition, single-partition transactions are ordered by transaction ID (VoltDB numbers them in the
 * order the partition executed them); a mark sits after the transaction that preceded it in the node's journal.
 * Replicas hold the same records: they are merged, so a node that missed some (it was down) loses nothing another
 * node has. A mark with no record is of a transaction that rolled back after marking (or whose record a crash took
 * with the coordinator's unsynced tail): it is dropped and counted.
 */
public final class JournalMerge {
  private JournalMerge() {}

  /** One step of a replay. */
  public sealed interface Step permits Partitions, Barrier {}

  /**
   * Single-partition transactions to run, each partition's in list order; different partitions' may run side by side.
   */
  public record Partitions(Map<Integer, List<JournalRecord>> records) implements Step {
    /** How many records the step holds. */
    public int size() {
      return records.values().stream().mapToInt(List::size).sum();
    }
  }

  /** A multi-partition transaction: everything before it completes before it runs, and it completes before the rest. */
  public record Barrier(JournalRecord record) implements Step {}

  /**
   * A merged replay.
   *
   * @param steps what to run, in order
   * @param records records to run
   * @param alreadyInSnapshot records the restored snapshot holds (skipped)
   * @param unmatchedMarks marks of multi-partition transactions with no record (dropped)
   * @param notes what was dropped, one sentence each
   */
  public record Plan(List<Step> steps, long records, long alreadyInSnapshot, long unmatchedMarks, List<String> notes) {}

  /** A place in a partition's order: a transaction ID, then (for a mark) the multi-partition transaction's. */
  private record Place(long txnId, long multiPartitionTxnId) implements Comparable<Place> {
    @Override
    public int compareTo(Place o) {
      int c = Long.compare(txnId, o.txnId);
      return c != 0 ? c : Long.compare(multiPartitionTxnId, o.multiPartitionTxnId);
    }
  }

  /**
   * Merges one timeline of several nodes' journals.
   *
   * @param nodes each node's records of the timeline, in journal order
   * @param cutoffs per partition ({@link JournalRecord#MULTI_PARTITION} included), the last transaction ID the
   *     restored snapshot holds
   * @param acceptLoss whether a multi-partition record that cannot be placed ends the replay there (reported in the
   *     plan's notes) instead of failing
   * @throws JournalCorruptException if two nodes disagree about a transaction, a partition's place in the snapshot is
   *     unknown, or (unless {@code acceptLoss}) a multi-partition record cannot be placed
   */
  public static Plan plan(List<List<JournalRecord>> nodes, Map<Integer, Long> cutoffs, boolean acceptLoss) {
    Map<Integer, TreeMap<Place, JournalRecord>> byPartition = new TreeMap<>();
    Map<Integer, Map<Long, Place>> marks = new HashMap<>();
    TreeMap<Long, JournalRecord> multi = new TreeMap<>();
    long skipped = 0;
    for (List<JournalRecord> node : nodes) {
      Map<Integer, Long> lastSinglePartition = new HashMap<>();
      for (JournalRecord r : node) {
        if (r.multiPartition()) {
          JournalRecord earlier = multi.putIfAbsent(r.txnId(), r);
          checkSame(earlier, r);
        } else if (r.isMark()) {
          Place place = new Place(lastSinglePartition.getOrDefault(r.partition(), Long.MIN_VALUE), r.txnId());
          // A node that missed transactions before the mark places it earlier; the best-informed place wins.
          marks.computeIfAbsent(r.partition(), p -> new HashMap<>()).merge(r.txnId(), place,
              (a, b) -> a.compareTo(b) >= 0 ? a : b);
        } else {
          lastSinglePartition.put(r.partition(), r.txnId());
          JournalRecord earlier = byPartition.computeIfAbsent(r.partition(), p -> new TreeMap<>())
              .putIfAbsent(new Place(r.txnId(), Long.MIN_VALUE), r);
          checkSame(earlier, r);
        }
      }
    }
    long multiCutoff = cutoff(cutoffs, JournalRecord.MULTI_PARTITION, multi.isEmpty() && marks.isEmpty());
    skipped += multi.headMap(multiCutoff, true).size();
    multi.headMap(multiCutoff, true).clear();
    long unmatched = 0;
    for (Map.Entry<Integer, Map<Long, Place>> e : marks.entrySet()) {
      for (Map.Entry<Long, Place> m : e.getValue().entrySet()) {
        if (m.getKey() <= multiCutoff) {
          continue;
        }
        if (!multi.containsKey(m.getKey())) {
          unmatched++;
          continue;
        }
        JournalRecord mark = JournalRecord.mark(-1, e.getKey(), m.getKey(), 0);
        byPartition.computeIfAbsent(e.getKey(), p -> new TreeMap<>()).put(m.getValue(), mark);
      }
    }
    Map<Integer, List<JournalRecord>> ordered = new TreeMap<>();
    for (Map.Entry<Integer, TreeMap<Place, JournalRecord>> e : byPartition.entrySet()) {
      long cutoff = cutoff(cutoffs, e.getKey(), false);
      List<JournalRecord> list = new ArrayList<>();
      for (JournalRecord r : e.getValue().values()) {
        if (!r.isMark() && r.txnId() <= cutoff) {
          skipped++;
        } else {
          list.add(r);
        }
      }
      ordered.put(e.getKey(), list);
    }
    List<Step> steps = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    Map<Integer, Integer> at = new HashMap<>();
    long records = 0;
    for (JournalRecord mp : multi.values()) {
      Map<Integer, List<JournalRecord>> before = new LinkedHashMap<>();
      String unplaceable = null;
      boolean markedSomewhere = false;
      for (Map.Entry<Integer, List<JournalRecord>> e : ordered.entrySet()) {
        List<JournalRecord> list = e.getValue();
        int from = at.getOrDefault(e.getKey(), 0);
        int markAt = -1;
        int laterMarkAt = -1;
        for (int i = from; i < list.size(); i++) {
          JournalRecord r = list.get(i);
          if (r.isMark()) {
            if (r.txnId() == mp.txnId()) {
              markAt = i;
            } else {
              laterMarkAt = i;
            }
            break;
          }
        }
        if (markAt >= 0) {
          markedSomewhere = true;
        } else if (laterMarkAt >= 0) {
          unplaceable = mp + " has no mark on partition " + e.getKey() + ", which holds marks of later "
              + "multi-partition transactions";
          break;
        }
        int end = markAt >= 0 ? markAt : list.size(); // no mark and none later: the partition's journal ends before it
        if (end > from) {
          before.put(e.getKey(), list.subList(from, end));
        }
        at.put(e.getKey(), markAt >= 0 ? markAt + 1 : end);
      }
      if (unplaceable == null && !markedSomewhere && !ordered.isEmpty()) {
        unplaceable = mp + " was marked on no partition, so its place among the single-partition transactions is "
            + "unknown";
      }
      if (unplaceable != null) {
        if (!acceptLoss) {
          throw new JournalCorruptException("the cluster's journals cannot be merged: " + unplaceable
              + "; start with --accept-journal-loss to recover up to it", null, -1);
        }
        long dropped = multi.tailMap(mp.txnId(), true).size();
        for (Map.Entry<Integer, List<JournalRecord>> e : ordered.entrySet()) {
          dropped += e.getValue().subList(Math.min(at.getOrDefault(e.getKey(), 0), e.getValue().size()),
              e.getValue().size()).stream().filter(r -> !r.isMark()).count();
        }
        notes.add(unplaceable + ": replay stops before it, dropping " + dropped + " records");
        return new Plan(List.copyOf(steps), records, skipped, unmatched, List.copyOf(notes));
      }
      if (!before.isEmpty()) {
        Partitions p = new Partitions(before);
        records += p.size();
        steps.add(p);
      }
      steps.add(new Barrier(mp));
      records++;
    }
    Map<Integer, List<JournalRecord>> rest = new LinkedHashMap<>();
    for (Map.Entry<Integer, List<JournalRecord>> e : ordered.entrySet()) {
      List<JournalRecord> tail = e.getValue().subList(at.getOrDefault(e.getKey(), 0), e.getValue().size());
      List<JournalRecord> transactions = tail.stream().filter(r -> !r.isMark()).toList();
      if (transactions.size() != tail.size()) {
        throw new IllegalStateException("a matched mark is left after the last multi-partition record");
      }
      if (!transactions.isEmpty()) {
        rest.put(e.getKey(), transactions);
      }
    }
    if (!rest.isEmpty()) {
      Partitions p = new Partitions(rest);
      records += p.size();
      steps.add(p);
    }
    return new Plan(List.copyOf(steps), records, skipped, unmatched, List.copyOf(notes));
  }

  private static long cutoff(Map<Integer, Long> cutoffs, int partition, boolean optional) {
    Long c = cutoffs.get(partition);
    if (c == null) {
      if (optional) {
        return Long.MIN_VALUE;
      }
      throw new JournalCorruptException("the restored snapshot does not say where partition " + partition
          + " stands, so its journal records cannot be placed", null, -1);
    }
    return c;
  }

  private static void checkSame(JournalRecord earlier, JournalRecord r) {
    if (earlier != null && !(earlier.procedure().equals(r.procedure()) && earlier.uniqueId() == r.uniqueId()
        && earlier.resultHash() == r.resultHash() && Arrays.equals(earlier.parameters(), r.parameters()))) {
      throw new JournalCorruptException("two nodes' journals disagree about transaction " + r.txnId() + " of "
          + "partition " + r.partition() + ": " + earlier + " and " + r, null, -1);
    }
  }
}

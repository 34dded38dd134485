package org.apiary.drills;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.apiary.ApiaryException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.drills.provenance.Plan;
import org.apiary.drills.provenance.PlannedAbortException;
import org.apiary.drills.provenance.ProvDrillApp;
import org.apiary.drills.provenance.ProvDrillApp.Shape;

/**
 * The workload of {@link ProvenanceDrill} and its oracle: client threads, each the only writer of its own keys, that
 * draw invocations of {@link ProvDrillApp}'s graphs from the seed, know every row's state from what committed (so
 * they never read data back to decide what to expect), and compute for each function execution the read and write
 * events it must leave in the sink. Nothing here asks Apiary what it captured.
 */
final class ProvenanceWorkload {
  /** Partition keys the load spreads over (VoltDB hashes them onto the partitions). */
  static final int PARTITION_KEYS = 8;

  private ProvenanceWorkload() {}

  /** A row as the workload knows it. */
  record Row(String tag, long v) {}

  /** An expected write event: the row written, or for a delete the row deleted. */
  record Write(String type, long p, long k, String tag, long v) {
    String content() {
      return type + "|" + p + "|" + k + "|" + tag + "|" + v;
    }
  }

  /** The outcome the client knows. */
  enum Outcome {
    OK, ABORTED, FAILED, UNKNOWN
  }

  /** One function's part of an invocation, and what it must leave in the sink if it commits. */
  static final class Step {
    final String function;
    final Plan.Segment segment;
    /** Keys of the rows present when read: one read event each. */
    final List<List<Long>> reads = new ArrayList<>();
    /** For each read key, how many of the record's writes committed before this step (the commit order). */
    final Map<List<Long>, Integer> slots = new HashMap<>();
    final List<Write> writes = new ArrayList<>();
    /** What the function returns for its reads. */
    final List<String> tokens = new ArrayList<>();
    /** The rows it leaves: a row, or null for a deleted one. */
    final Map<List<Long>, Row> changes = new LinkedHashMap<>();

    Step(String function, Plan.Segment segment) {
      this.function = function;
      this.segment = segment;
    }

    boolean global() {
      return ProvDrillApp.isGlobal(function);
    }

    boolean readOnly() {
      return ProvDrillApp.isReadOnly(function);
    }
  }

  /** One invocation: its plan, what the client saw, when. */
  static final class Invocation {
    final String id;
    final Shape shape;
    final Long key;
    final List<Step> steps;
    final String caller;
    long sentMs;
    long answeredMs;
    volatile Outcome outcome = Outcome.UNKNOWN;
    /** The function that failed (ABORTED, FAILED). */
    volatile String failedFunction;
    volatile String detail = "";
    /** What the last {@code result(id)} said, if it said nothing definite. */
    volatile String lookup;
    volatile List<String> outputs = List.of();
    volatile boolean resolvedLater;
    /** Whether its keys were in the client's model when its outcome became known. */
    boolean modelled;

    Invocation(String id, Shape shape, Long key, List<Step> steps, String caller) {
      this.id = id;
      this.shape = shape;
      this.key = key;
      this.steps = steps;
      this.caller = caller;
    }

    InvocationRequest request() {
      return InvocationRequest.of(shape.graph(), key, Plan.encode(steps.stream().map(s -> s.segment).toList()))
          .withId(id);
    }

    void answer(GraphResult r, Throwable e) {
      if (r != null) {
        outcome = Outcome.OK;
        outputs = r.values(JsonNode.class).stream().map(ProvenanceWorkload::text).toList();
      } else if (e instanceof FunctionFailedException f) {
        failedFunction = f.functionName();
        boolean planned = ProvDrillApp.aborts(f.functionName())
            && f.errorType().equals(PlannedAbortException.class.getName());
        outcome = planned ? Outcome.ABORTED : Outcome.FAILED;
        detail = f.functionName() + ": " + f.errorType() + ": " + f.errorMessage();
      } else {
        outcome = Outcome.UNKNOWN;
        detail = e == null ? "no answer" : e.getClass().getSimpleName() + ": " + e.getMessage();
      }
    }

    void resolve(GraphResult r, FunctionFailedException e) {
      answer(r, e);
      resolvedLater = true;
    }

    /** The steps that committed, by the outcome the client knows; none if it does not know. */
    List<Step> committedSteps() {
      return switch (outcome) {
        case OK -> steps;
        case ABORTED, FAILED -> steps.subList(0, failedIndex());
        case UNKNOWN -> List.of();
      };
    }

    /** The steps that did not commit, by the outcome the client knows; none if it does not know. */
    List<Step> rolledBackSteps() {
      return switch (outcome) {
        case OK, UNKNOWN -> List.of();
        case ABORTED, FAILED -> steps.subList(failedIndex(), steps.size());
      };
    }

    private int failedIndex() {
      for (int i = 0; i < steps.size(); i++) {
        if (steps.get(i).function.equals(failedFunction)) {
          return i;
        }
      }
      return 0; // a function the graph does not have: count nothing as committed
    }

    boolean overlaps(long from, long to) {
      return from >= 0 && sentMs <= to && answeredMs >= from;
    }
  }

  private static String text(JsonNode value) {
    return value == null ? "null" : value.isTextual() ? value.textValue() : value.toString();
  }

  /** A client thread: its own keys, their state as it knows it, and the invocations it made, in order. */
  static final class Client {
    final int index;
    final String idPrefix;
    final SplittableRandom random;
    final List<Invocation> invocations = new ArrayList<>();
    /** Rows present, by key (p, k). */
    final Map<List<Long>, Row> rows = new TreeMap<>(ProvenanceWorkload::compareKeys);
    /** Keys known absent (deleted). */
    final Set<List<Long>> deleted = new HashSet<>();
    /** Keys whose state is unknown (an invocation writing them had no definite outcome): left alone. */
    final Set<List<Long>> retired = new HashSet<>();
    /** Writes committed per key, in commit order (this client is the only writer of its keys). */
    final Map<List<Long>, List<Write>> history = new HashMap<>();
    long nextKey;
    int n;

    private final LongSupplier clock;
    private final List<String> crashes;

    /**
     * A client.
     *
     * @param clock the drill's clock, in ms
     * @param crashes where to report that the drill itself went wrong
     */
    Client(int index, String seedText, SplittableRandom random, LongSupplier clock, List<String> crashes) {
      this.clock = clock;
      this.crashes = crashes;
      this.index = index;
      this.idPrefix = "pd-" + seedText + "-c" + index + "-";
      this.random = random;
      this.nextKey = (index + 1) * 1_000_000_000L;
    }

    void work(long stopAt, String... endpoints) {
      ClientConfig config = ClientConfig.of(endpoints).withAttemptTimeout(ProvenanceDrill.ATTEMPT_TIMEOUT)
          .withMaxAttempts(ProvenanceDrill.MAX_ATTEMPTS)
          .withCaller("provdrill-c" + index);
      try (ApiaryClient client = ApiaryClient.connect(config)) {
        while (clock.getAsLong() < stopAt) {
          Invocation inv = next();
          invocations.add(inv);
          inv.sentMs = clock.getAsLong();
          try {
            inv.answer(client.invoke(inv.request()), null);
          } catch (InvalidRequestException e) {
            inv.answer(null, e);
            crashes.add("the drill sent an invalid request (" + inv.id + "): " + e.getMessage());
          } catch (ApiaryException e) {
            inv.answer(null, e);
          }
          inv.answeredMs = clock.getAsLong();
          settle(inv);
        }
      }
    }

    /** Applies what committed to the model; retires the keys of an invocation whose outcome is unknown. */
    private void settle(Invocation inv) {
      if (inv.outcome == Outcome.UNKNOWN || inv.outcome == Outcome.FAILED) {
        for (Step s : inv.steps) {
          retired.addAll(s.changes.keySet());
        }
        return;
      }
      inv.modelled = true;
      for (Step s : inv.committedSteps()) {
        for (Write w : s.writes) {
          history.computeIfAbsent(List.of(w.p(), w.k()), x -> new ArrayList<>()).add(w);
        }
        s.changes.forEach((key, row) -> {
          if (row == null) {
            rows.remove(key);
            deleted.add(key);
          } else {
            rows.put(key, row);
          }
        });
      }
    }

    // The generator. Every choice comes from this client's random stream; every expectation from its model.

    private Invocation next() {
      String id = idPrefix + n++;
      Shape shape = pick();
      pending.clear();
      Map<List<Long>, Row> view = new HashMap<>(); // this invocation's changes so far, over the model
      Set<List<Long>> viewDeleted = new HashSet<>();
      List<Step> steps = new ArrayList<>();
      long p = random.nextLong(PARTITION_KEYS);
      List<String> fns = shape.functions();
      for (int i = 0; i < fns.size(); i++) {
        String fn = fns.get(i);
        String tag = id + "." + i;
        List<Plan.Op> ops = new ArrayList<>();
        Long segmentKey = ProvDrillApp.isGlobal(fn) ? null : p;
        List<List<Long>> touched = steps.isEmpty() ? List.of() : new ArrayList<>(steps.get(i - 1).changes.keySet());
        switch (fn) {
          case ProvDrillApp.WRITE -> writes(ops, List.of(p), 1 + random.nextInt(3), 1, true, view, viewDeleted);
          case ProvDrillApp.ABORT -> writes(ops, List.of(p), 1 + random.nextInt(2), 1, false, view, viewDeleted);
          case ProvDrillApp.READ, ProvDrillApp.READ_FIRST -> {
            if (!touched.isEmpty()) { // after a writer: read on one of the partitions it wrote
              p = touched.get(random.nextInt(touched.size())).get(0);
              segmentKey = p;
            }
            reads(ops, List.of(p), 1 + random.nextInt(4), touched, view, viewDeleted);
          }
          case ProvDrillApp.GLOBAL_READ -> reads(ops, partitions(2 + random.nextInt(3)), 2 + random.nextInt(4),
              List.of(), view, viewDeleted);
          case ProvDrillApp.GLOBAL_WRITE -> writes(ops, partitions(2 + random.nextInt(2)), 2 + random.nextInt(3), 1,
              true, view, viewDeleted);
          case ProvDrillApp.GLOBAL_ABORT -> writes(ops, partitions(2), 2 + random.nextInt(2), 1, false, view,
              viewDeleted);
          default -> throw new IllegalStateException("no generator for " + fn);
        }
        Step step = new Step(fn, new Plan.Segment(tag, segmentKey, ops));
        simulate(step, view, viewDeleted);
        steps.add(step);
      }
      Long key = shape.startsGlobal() ? null : steps.get(0).segment.key();
      return new Invocation(id, shape, key, steps, "provdrill-c" + index);
    }

    private Shape pick() {
      int r = random.nextInt(100);
      int[] weights = {18, 14, 12, 10, 8, 7, 7, 8, 8, 8};
      Shape[] shapes = Shape.values();
      for (int i = 0; i < shapes.length; i++) {
        r -= weights[i];
        if (r < 0) {
          return shapes[i];
        }
      }
      return Shape.WRITE_ONLY;
    }

    private List<Long> partitions(int count) {
      List<Long> all = new ArrayList<>();
      for (long p = 0; p < PARTITION_KEYS; p++) {
        all.add(p);
      }
      Collections.shuffle(all, new java.util.Random(random.nextLong()));
      return all.subList(0, Math.min(count, all.size()));
    }

    private Row state(List<Long> key, Map<List<Long>, Row> view, Set<List<Long>> viewDeleted) {
      if (viewDeleted.contains(key)) {
        return null;
      }
      Row r = view.get(key);
      return r != null ? r : rows.get(key);
    }

    private List<List<Long>> present(long p, Map<List<Long>, Row> view, Set<List<Long>> viewDeleted,
                                     Set<List<Long>> used) {
      Set<List<Long>> keys = new java.util.TreeSet<>(ProvenanceWorkload::compareKeys);
      rows.keySet().stream().filter(k -> k.get(0) == p).forEach(keys::add);
      view.keySet().stream().filter(k -> k.get(0) == p).forEach(keys::add);
      return keys.stream().filter(k -> !retired.contains(k) && !used.contains(k)
          && state(k, view, viewDeleted) != null).toList();
    }

    /**
     * Write operations over {@code ps}: inserts of fresh keys, updates and deletes of present ones (aborting
     * functions do not delete: a delete event carries the row's last writer's tag, which a later delete of the same
     * row would carry again), and up to {@code maxReads} reads of other keys.
     */
    private void writes(List<Plan.Op> ops, List<Long> ps, int count, int maxReads, boolean mayDelete,
                        Map<List<Long>, Row> view, Set<List<Long>> viewDeleted) {
      Set<List<Long>> used = new HashSet<>();
      for (int i = 0; i < count; i++) {
        long p = ps.get(i % ps.size());
        List<List<Long>> live = present(p, view, viewDeleted, used);
        int r = random.nextInt(100);
        boolean crowded = live.size() >= 4;
        if (live.isEmpty() || r < (crowded ? 25 : 55)) {
          long k = nextKey++;
          used.add(List.of(p, k));
          ops.add(new Plan.Op(Plan.Kind.INSERT, p, k, random.nextLong(1_000_000)));
        } else {
          List<Long> key = live.get(random.nextInt(live.size()));
          used.add(key);
          boolean delete = mayDelete && r >= (crowded ? 60 : 85);
          ops.add(new Plan.Op(delete ? Plan.Kind.DELETE : Plan.Kind.UPDATE, p, key.get(1),
              delete ? 0 : random.nextLong(1_000_000)));
        }
      }
      int reads = random.nextInt(maxReads + 1);
      for (int i = 0; i < reads; i++) {
        long p = ps.get(random.nextInt(ps.size()));
        List<Long> key = readKey(p, List.of(), view, viewDeleted, used);
        if (key != null) {
          used.add(key);
          ops.add(new Plan.Op(Plan.Kind.READ, p, key.get(1), 0));
        }
      }
    }

    /** Reads of distinct keys over {@code ps}, preferring keys the step before touched. */
    private void reads(List<Plan.Op> ops, List<Long> ps, int count, List<List<Long>> touched,
                       Map<List<Long>, Row> view, Set<List<Long>> viewDeleted) {
      Set<List<Long>> used = new HashSet<>();
      for (int i = 0; i < count; i++) {
        long p = ps.get(i % ps.size());
        List<Long> key = readKey(p, touched, view, viewDeleted, used);
        if (key != null) {
          used.add(key);
          ops.add(new Plan.Op(Plan.Kind.READ, p, key.get(1), 0));
        }
      }
    }

    /** A key to read on {@code p}: one just touched, a present one, a deleted one, or one never written. */
    private List<Long> readKey(long p, List<List<Long>> touched, Map<List<Long>, Row> view,
                               Set<List<Long>> viewDeleted, Set<List<Long>> used) {
      List<List<Long>> fresh = touched.stream().filter(k -> k.get(0) == p && !used.contains(k)
          && !retired.contains(k)).toList();
      int r = random.nextInt(100);
      if (!fresh.isEmpty() && r < 60) {
        return fresh.get(random.nextInt(fresh.size()));
      }
      List<List<Long>> live = present(p, view, viewDeleted, used);
      if (!live.isEmpty() && r < 85) {
        return live.get(random.nextInt(live.size()));
      }
      List<List<Long>> gone = deleted.stream().filter(k -> k.get(0) == p && !used.contains(k)
          && !retired.contains(k) && state(k, view, viewDeleted) == null).sorted(ProvenanceWorkload::compareKeys)
          .toList();
      if (!gone.isEmpty() && r < 95) {
        return gone.get(random.nextInt(gone.size()));
      }
      return List.of(p, nextKey++); // never written: a read that finds nothing and leaves no event
    }

    /** Runs a step's operations against the model: its expected events, what it returns, the rows it leaves. */
    private void simulate(Step step, Map<List<Long>, Row> view, Set<List<Long>> viewDeleted) {
      String tag = step.segment.tag();
      for (Plan.Op op : step.segment.ops()) {
        List<Long> key = List.of(op.p(), op.k());
        Row before = state(key, view, viewDeleted);
        switch (op.kind()) {
          case READ -> {
            step.tokens.add(Plan.readToken(op.p(), op.k(), before == null ? null : before.tag(),
                before == null ? null : before.v()));
            if (before != null) {
              step.reads.add(key);
              step.slots.put(key, history.getOrDefault(key, List.of()).size() + pendingWrites(key, view));
            }
          }
          case INSERT, UPDATE -> {
            step.writes.add(new Write(op.kind() == Plan.Kind.INSERT ? "insert" : "update", op.p(), op.k(), tag,
                op.v()));
            Row row = new Row(tag, op.v());
            step.changes.put(key, row);
          }
          case DELETE -> {
            step.writes.add(new Write("delete", op.p(), op.k(), before.tag(), before.v()));
            step.changes.put(key, null);
          }
        }
      }
      if (!ProvDrillApp.aborts(step.function)) { // later steps see this one's writes
        step.changes.forEach((key, row) -> {
          if (row == null) {
            view.remove(key);
            viewDeleted.add(key);
          } else {
            view.put(key, row);
            viewDeleted.remove(key);
          }
        });
        pending.addAll(step.writes);
      }
    }

    /** Writes of the invocation being generated, for the read slots of its later steps. */
    private final List<Write> pending = new ArrayList<>();

    private int pendingWrites(List<Long> key, Map<List<Long>, Row> view) {
      return (int) pending.stream().filter(w -> w.p() == key.get(0) && w.k() == key.get(1)).count();
    }
  }

  static int compareKeys(List<Long> a, List<Long> b) {
    int c = Long.compare(a.get(0), b.get(0));
    return c != 0 ? c : Long.compare(a.get(1), b.get(1));
  }
}

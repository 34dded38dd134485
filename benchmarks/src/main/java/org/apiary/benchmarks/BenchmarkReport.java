package org.apiary.benchmarks;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.internal.Json;

/**
 * A workload's results across variants: each variant's highest sustained load, latency at the fixed loads, and the
 * issue's target ratios, each marked met or not.
 */
final class BenchmarkReport {
  /** A load is sustained when nothing failed, p99 stays under the bound and at least this share of it completes. */
  static final double SUSTAINED_SHARE = 0.95;

  /**
   * One target of issue 5.
   *
   * @param value the measured ratio
   * @param met whether it meets the target
   */
  record Target(String name, String measured, double value, String goal, boolean met) {}

  /** What a guarantee costs is measured as a variant with it against the same variant without it. */
  record GuaranteeCost(String guarantee, String with, String without) {
    String name() {
      return guarantee + " cost (" + with + " vs " + without + ")";
    }
  }

  static final GuaranteeCost EXACTLY_ONCE = new GuaranteeCost("exactly-once", "apiary", "apiary-no-eo");
  static final GuaranteeCost PROVENANCE = new GuaranteeCost("provenance", "apiary", "apiary-no-prov");

  private final Workload workload;
  private final Map<String, VariantRun.Outcome> outcomes = new LinkedHashMap<>();
  private final List<String> failed;
  private final double p99BoundMs;

  BenchmarkReport(Workload workload, List<VariantRun.Outcome> outcomes, List<String> failed, double p99BoundMs) {
    this.workload = workload;
    outcomes.forEach(o -> this.outcomes.put(o.variant(), o));
    this.failed = failed;
    this.p99BoundMs = p99BoundMs;
  }

  /** The highest load a variant sustained (over fixed and sweep points), if any. */
  Optional<OpenLoop.Point> maxSustained(String variant) {
    VariantRun.Outcome o = outcomes.get(variant);
    if (o == null) {
      return Optional.empty();
    }
    return Stream.concat(o.fixed().stream(), o.sweep().stream()).filter(p -> sustained(p, p99BoundMs))
        .max((a, b) -> Double.compare(a.achieved(), b.achieved()));
  }

  /** Whether a load point was sustained: nothing failed, p99 under the bound, nearly all of the load completed. */
  static boolean sustained(OpenLoop.Point p, double p99BoundMs) {
    return p.errors() == 0 && p.all().p99Ms() <= p99BoundMs && p.achieved() >= SUSTAINED_SHARE * p.offered();
  }

  private Optional<Double> max(String variant) {
    return maxSustained(variant).map(OpenLoop.Point::achieved);
  }

  /**
   * The p50 at the sweep's first load, which is the same offered load for every variant; empty unless that point
   * was sustained (a latency measured on a growing queue says nothing about the system).
   */
  private Optional<OpenLoop.Point> firstSweepPoint(String variant) {
    VariantRun.Outcome o = outcomes.get(variant);
    return o == null || o.sweep().isEmpty() || !sustained(o.sweep().get(0), p99BoundMs) ? Optional.empty()
        : Optional.of(o.sweep().get(0));
  }

  List<Target> targets() {
    List<Target> t = new ArrayList<>();
    String name = workload.name();
    if (name.equals("counter")) {
      ratio(t, "apiary / raw-voltdb max throughput", max("apiary"), max("raw-voltdb"), ">= 0.70", r -> r >= 0.70);
    }
    if (name.equals("shop")) {
      ratio(t, "apiary / rpc-servers max throughput", max("apiary"), max("rpc-servers"), ">= 1.75", r -> r >= 1.75);
    }
    if (name.equals("shop") || name.equals("hotel")) {
      Optional<OpenLoop.Point> rpc = firstSweepPoint("rpc-servers");
      Optional<OpenLoop.Point> apiary = firstSweepPoint("apiary");
      if (rpc.isPresent() && apiary.isPresent() && rpc.get().offered() == apiary.get().offered()) {
        ratio(t, "rpc-servers p50 / apiary p50 at " + (long) apiary.get().offered() + " req/s",
            Optional.of(rpc.get().all().p50Ms()), Optional.of(apiary.get().all().p50Ms()), ">= 1.6", r -> r >= 1.6);
      }
    }
    cost(t, EXACTLY_ONCE.name(), max(EXACTLY_ONCE.with()), max(EXACTLY_ONCE.without()), "< 5%", c -> c < 0.05);
    cost(t, "naive exactly-once cost (apiary-naive-eo vs apiary-no-eo)", max("apiary-naive-eo"), max("apiary-no-eo"),
        "(for contrast)", c -> true);
    cost(t, PROVENANCE.name(), max(PROVENANCE.with()), max(PROVENANCE.without()), "< 15%", c -> c < 0.15);
    ratio(t, "apiary / apiary-manual-log max throughput", max("apiary"), max("apiary-manual-log"), "> 1.0", r -> r > 1.0);
    return t;
  }

  private static void ratio(List<Target> t, String name, Optional<Double> a, Optional<Double> b, String goal,
                            java.util.function.DoublePredicate ok) {
    if (a.isPresent() && b.isPresent() && b.get() > 0) {
      double r = a.get() / b.get();
      t.add(new Target(name, String.format(Locale.ROOT, "%.2fx", r), r, goal, ok.test(r)));
    }
  }

  private static void cost(List<Target> t, String name, Optional<Double> with, Optional<Double> without, String goal,
                           java.util.function.DoublePredicate ok) {
    if (with.isPresent() && without.isPresent() && without.get() > 0) {
      double c = 1 - with.get() / without.get();
      t.add(new Target(name, String.format(Locale.ROOT, "%.1f%%", 100 * c), c, goal, ok.test(c)));
    }
  }

  /**
   * The guarantees' costs round by round, each against its baseline's run of the same round (the variants alternate,
   * so a drift of the machine over a long run moves both sides of a pair alike), and their median. One pair of
   * numbers per round is what {@code --rounds} buys: a variant's median round alone can pair a fast round of one
   * variant with a slow one of another.
   *
   * @param perRound each variant's measure, round by round (max sustained load, or load achieved at a held rate)
   * @return one line per cost whose two variants both ran every round
   */
  static List<String> pairedCosts(Map<String, List<Double>> perRound) {
    List<String> lines = new ArrayList<>();
    for (GuaranteeCost pair : List.of(EXACTLY_ONCE, PROVENANCE)) {
      List<Double> with = perRound.get(pair.with());
      List<Double> without = perRound.get(pair.without());
      if (with == null || without == null || with.size() != without.size() || with.size() < 2) {
        continue;
      }
      List<Double> costs = new ArrayList<>();
      for (int r = 0; r < with.size(); r++) {
        costs.add(without.get(r) > 0 ? 1 - with.get(r) / without.get(r) : Double.NaN);
      }
      List<Double> sorted = costs.stream().sorted().toList();
      int n = sorted.size();
      double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
      String byRound = costs.stream().map(c -> String.format(Locale.ROOT, "%.1f%%", 100 * c))
          .collect(java.util.stream.Collectors.joining(", "));
      lines.add(String.format(Locale.ROOT, "%s by round: %s; median %.1f%%", pair.name(), byRound, 100 * median));
    }
    return lines;
  }

  ObjectNode toJson() {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("workload", workload.name());
    root.set("operations", Json.tree(workload.operations()));
    root.put("p99BoundMs", p99BoundMs);
    ObjectNode vs = root.putObject("variants");
    for (VariantRun.Outcome o : outcomes.values()) {
      ObjectNode v = vs.putObject(o.variant());
      maxSustained(o.variant()).ifPresentOrElse(p -> v.set("maxSustained", Json.tree(p)), () -> v.putNull("maxSustained"));
      v.set("fixedLoads", Json.tree(o.fixed()));
      v.set("sweep", Json.tree(o.sweep()));
      v.put("provenanceRowsLoaded", o.provenanceRows());
      if (o.note() != null) {
        v.put("note", o.note());
      }
    }
    ArrayNode f = root.putArray("failedVariants");
    failed.forEach(f::add);
    root.set("targets", Json.tree(targets()));
    return root;
  }

  void print(PrintStream out) {
    List<Double> loads = outcomes.isEmpty() ? List.of() : outcomes.values().iterator().next().fixed().stream()
        .map(OpenLoop.Point::offered).toList();
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-18s %13s %9s %9s", "variant",
        "max sustained", "p50@max", "p99@max"));
    for (double l : loads) {
      header.append(String.format(Locale.ROOT, " %16s", "p50/p99@" + (long) l));
    }
    out.println(header.append("   (req/s; ms)"));
    for (VariantRun.Outcome o : outcomes.values()) {
      Optional<OpenLoop.Point> m = maxSustained(o.variant());
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-18s %13s %9s %9s", o.variant(),
          m.map(p -> String.format(Locale.ROOT, "%.0f", p.achieved())).orElse("-"),
          m.map(p -> String.format(Locale.ROOT, "%.1f", p.all().p50Ms())).orElse("-"),
          m.map(p -> String.format(Locale.ROOT, "%.1f", p.all().p99Ms())).orElse("-")));
      for (OpenLoop.Point p : o.fixed()) {
        row.append(String.format(Locale.ROOT, " %16s", p.errors() > 0 ? p.errors() + " errors"
            : String.format(Locale.ROOT, "%.2f/%.2f", p.all().p50Ms(), p.all().p99Ms())));
      }
      out.println(row);
    }
    StringBuilder cpuHeader = new StringBuilder(String.format(Locale.ROOT, "%-18s", "variant"));
    for (double l : loads) {
      cpuHeader.append(String.format(Locale.ROOT, " %16s", "cpu@" + (long) l));
    }
    out.println(cpuHeader.append("   (CPU microseconds of the benchmark process per request)"));
    for (VariantRun.Outcome o : outcomes.values()) {
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-18s", o.variant()));
      for (OpenLoop.Point p : o.fixed()) {
        row.append(String.format(Locale.ROOT, " %16s", p.cpuMicrosPerRequest() < 0 ? "-"
            : String.format(Locale.ROOT, "%.0f", p.cpuMicrosPerRequest())));
      }
      out.println(row);
    }
    failed.forEach(v -> out.println(v + ": FAILED"));
    for (Target t : targets()) {
      out.printf(Locale.ROOT, "  %-62s %8s  target %-14s %s%n", t.name(), t.measured(), t.goal(),
          t.goal().startsWith("(") ? "" : t.met() ? "met" : "NOT MET");
    }
  }
}

package org.apiary.frontend.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apiary.frontend.graph.RecordingAnalysis.Edge;
import org.apiary.frontend.graph.RecordingAnalysis.Node;
import org.junit.jupiter.api.Test;

/** Algorithm 1 (paper section 5.4): hand-checked graphs, then random DAGs against brute force. */
class RecordingAnalysisTest {
  private static Node read(String name) {
    return new Node(name, false, false);
  }

  private static Node write(String name) {
    return new Node(name, true, false);
  }

  private static Node readFansOut(String name) {
    return new Node(name, false, true);
  }

  private static Node writeFansOut(String name) {
    return new Node(name, true, true);
  }

  /** Edges written "A->B". */
  private static List<Edge> edges(String... arrows) {
    List<Edge> edges = new ArrayList<>();
    for (String arrow : arrows) {
      String[] ends = arrow.split("->");
      edges.add(new Edge(ends[0], ends[1]));
    }
    return edges;
  }

  private static Set<String> recorded(List<Node> nodes, String... arrows) {
    return RecordingAnalysis.recordedFunctions(nodes, edges(arrows));
  }

  // ---- Figure 8 ----

  @Test
  void figure8RecordsTheWriterAndTheReaderFeedingItAndTheReply() {
    List<Node> nodes = List.of(read("F1"), read("F2"), write("F3"));
    assertEquals(
        Set.of("F1", "F3"),
        recorded(nodes, "source->F1", "F1->F2", "F1->F3", "F2->sink", "F3->sink"));
  }

  @Test
  void figure8WithoutTheWriterReplyingRecordsTheSame() {
    List<Node> nodes = List.of(read("F1"), read("F2"), write("F3"));
    assertEquals(Set.of("F1", "F3"), recorded(nodes, "source->F1", "F1->F2", "F1->F3", "F2->sink"));
  }

  // ---- Hand cases ----

  @Test
  void aReaderWhosePathsAllCrossOneWriterIsNotRecorded() {
    // A's paths A->B and A->B->sink share B.
    List<Node> nodes = List.of(read("A"), write("B"));
    assertEquals(Set.of("B"), recorded(nodes, "source->A", "A->B", "B->sink"));
  }

  @Test
  void anAllReadOnlyGraphRecordsNothing() {
    List<Node> nodes = List.of(read("A"), read("B"), read("C"), read("D"));
    assertEquals(
        Set.of(),
        recorded(
            nodes, "source->A", "source->B", "A->C", "A->D", "B->D", "C->sink", "D->sink",
            "A->sink"));
  }

  @Test
  void aReadOnlyDiamondIntoAWriterRecordsOnlyTheWriter() {
    // B and C each reach the targets {D, sink} only through D; A's two disjoint paths both end at
    // D, the same target, and every path of A to the sink crosses D.
    List<Node> nodes = List.of(read("A"), read("B"), read("C"), write("D"));
    assertEquals(
        Set.of("D"), recorded(nodes, "source->A", "A->B", "A->C", "B->D", "C->D", "D->sink"));
  }

  @Test
  void aDiamondWithOneArmAlsoReplyingRecordsThatArmAndTheTop() {
    // B: B->D and B->sink. Then A: A->B and A->C->D end at two different targets.
    List<Node> nodes = List.of(read("A"), read("B"), read("C"), write("D"));
    assertEquals(
        Set.of("A", "B", "D"),
        recorded(nodes, "source->A", "A->B", "A->C", "B->D", "C->D", "D->sink", "B->sink"));
  }

  @Test
  void aDiamondIntoAFanningOutWriterRecordsEverything() {
    // B and C each have an edge into D's two executions; then A->B and A->C are disjoint.
    List<Node> nodes = List.of(read("A"), read("B"), read("C"), writeFansOut("D"));
    assertEquals(
        Set.of("A", "B", "C", "D"),
        recorded(nodes, "source->A", "A->B", "A->C", "B->D", "C->D", "D->sink"));
  }

  @Test
  void aReaderFeedingAFanningOutWriterIsRecorded() {
    List<Node> nodes = List.of(read("A"), writeFansOut("F"));
    assertEquals(Set.of("A", "F"), recorded(nodes, "source->A", "A->F", "F->sink"));
    assertEquals(Set.of("A", "F"), recorded(nodes, "source->A", "A->F"));
  }

  @Test
  void aReaderFeedingAWriterThatDoesNotFanOutIsNotRecorded() {
    List<Node> nodes = List.of(read("A"), write("F"));
    assertEquals(Set.of("F"), recorded(nodes, "source->A", "A->F", "F->sink"));
    assertEquals(Set.of("F"), recorded(nodes, "source->A", "A->F", "A->F", "A->F"));
  }

  @Test
  void onlyTheDirectPredecessorOfAFanningOutWriterIsRecordedForIt() {
    // X has an edge into both executions of F; A reaches them only through X.
    List<Node> nodes = List.of(read("A"), read("X"), writeFansOut("F"));
    assertEquals(Set.of("X", "F"), recorded(nodes, "source->A", "A->X", "X->F", "F->sink"));
    // If X writes it is recorded anyway, and A, with the single successor X, still is not.
    List<Node> writingX = List.of(read("A"), write("X"), writeFansOut("F"));
    assertEquals(Set.of("X", "F"), recorded(writingX, "source->A", "A->X", "X->F", "F->sink"));
  }

  @Test
  void aFanningOutReaderCountsTwiceOnlyOnceRecorded() {
    // F is read-only and fans out; unrecorded, it is a single path to the sink.
    assertEquals(
        Set.of(), recorded(List.of(read("A"), readFansOut("F")), "source->A", "A->F", "F->sink"));
    // F reaches W and the sink disjointly, so it is recorded, and then A feeds its two executions.
    List<Node> nodes = List.of(read("A"), readFansOut("F"), write("W"));
    assertEquals(
        Set.of("A", "F", "W"), recorded(nodes, "source->A", "A->F", "F->W", "F->sink", "W->sink"));
  }

  @Test
  void aReaderFeedingTwoWritersIsRecorded() {
    List<Node> nodes = List.of(read("A"), write("W1"), write("W2"));
    assertEquals(Set.of("A", "W1", "W2"), recorded(nodes, "source->A", "A->W1", "A->W2"));
    assertEquals(
        Set.of("A", "W1", "W2"),
        recorded(nodes, "source->A", "A->W1", "A->W2", "W1->sink", "W2->sink"));
  }

  @Test
  void aReaderFeedingAWriterAndTheReplyIsRecorded() {
    List<Node> nodes = List.of(read("A"), write("W"));
    assertEquals(Set.of("A", "W"), recorded(nodes, "source->A", "A->W", "A->sink"));
  }

  @Test
  void disconnectedFunctionsFollowTheSameRule() {
    List<Node> nodes =
        List.of(read("Lonely"), write("LonelyWriter"), read("U"), write("W"), read("V"));
    // U is not reachable from the source and V does not reach the sink.
    assertEquals(
        Set.of("LonelyWriter", "U", "W"),
        recorded(nodes, "source->sink", "U->W", "U->sink", "V->W"));
  }

  @Test
  void theResultFollowsTheNodesOrderAndNeverNamesThePseudoNodes() {
    List<Node> nodes = List.of(write("Z"), read("A"), write("M"));
    Set<String> result = recorded(nodes, "source->A", "A->Z", "A->M", "Z->sink", "M->sink");
    assertEquals(List.of("Z", "A", "M"), List.copyOf(result));
    assertFalse(result.contains(RecordingAnalysis.SOURCE));
    assertFalse(result.contains(RecordingAnalysis.SINK));
    assertEquals(Set.of(), recorded(List.of(), "source->sink"));
    assertEquals(Set.of(), recorded(List.of()));
  }

  // ---- Invalid graphs ----

  private static String rejection(List<Node> nodes, String... arrows) {
    return assertThrows(IllegalArgumentException.class, () -> recorded(nodes, arrows))
        .getMessage();
  }

  @Test
  void unknownNodesAreRejectedByName() {
    List<Node> nodes = List.of(read("A"));
    assertTrue(rejection(nodes, "source->A", "A->Ghost").contains("Ghost"));
    assertTrue(rejection(nodes, "Phantom->A", "A->sink").contains("Phantom"));
  }

  @Test
  void cyclesAreRejectedNamingTheirNodes() {
    List<Node> nodes = List.of(read("A"), read("B"), read("C"), read("D"));
    String message = rejection(nodes, "source->A", "A->B", "B->C", "C->B", "C->D", "D->sink");
    assertTrue(message.contains("cycle"), message);
    assertTrue(message.contains("B -> C -> B") || message.contains("C -> B -> C"), message);
    String selfLoop = rejection(nodes, "source->A", "A->A", "A->sink");
    assertTrue(selfLoop.contains("A -> A"), selfLoop);
  }

  @Test
  void malformedGraphsAreRejected() {
    assertTrue(rejection(List.of(read("A"), write("A"))).contains("A"));
    assertTrue(rejection(List.of(read("sink"))).contains("sink"));
    assertTrue(rejection(List.of(read("A")), "A->source").contains("source"));
    assertTrue(rejection(List.of(read("A")), "sink->A").contains("sink"));
  }

  // ---- Random DAGs against brute force ----

  private static final long SEED = 0x5EED_A1A7L;
  private static final int GRAPHS = 5000;

  @Test
  void randomDagsAgreeWithBruteForce() {
    int withRecordedReader = 0;
    int whereFanOutMatters = 0;
    for (int trial = 0; trial < GRAPHS; trial++) {
      long seed = SEED + trial;
      Random random = new Random(seed);
      List<Node> nodes = new ArrayList<>();
      List<Edge> edges = new ArrayList<>();
      randomDag(random, nodes, edges);
      String context = "seed " + seed + ": nodes " + nodes + ", edges " + edges;

      Set<String> expected = bruteForce(nodes, edges);
      assertEquals(expected, RecordingAnalysis.recordedFunctions(nodes, edges), context);

      if (nodes.stream().anyMatch(node -> !node.writes() && expected.contains(node.name()))) {
        withRecordedReader++;
      }
      List<Node> noFanOut = new ArrayList<>();
      for (Node node : nodes) {
        noFanOut.add(new Node(node.name(), node.writes(), false));
      }
      if (!bruteForce(noFanOut, edges).equals(expected)) {
        whereFanOutMatters++;
      }
    }
    System.out.printf(
        "RecordingAnalysisTest: %d random DAGs (seed %d): %d with a recorded read-only function,"
            + " %d where fan-out changes the result%n",
        GRAPHS, SEED, withRecordedReader, whereFanOutMatters);
    assertTrue(withRecordedReader > 100, "seed " + SEED + ": only " + withRecordedReader);
    assertTrue(whereFanOutMatters > 100, "seed " + SEED + ": only " + whereFanOutMatters);
  }

  /** 1 to 9 functions with random flags and random forward edges, in shuffled order. */
  private static void randomDag(Random random, List<Node> nodes, List<Edge> edges) {
    int n = 1 + random.nextInt(9);
    double density = 0.15 + 0.5 * random.nextDouble();
    for (int i = 0; i < n; i++) {
      nodes.add(new Node("F" + i, random.nextDouble() < 0.3, random.nextDouble() < 0.3));
    }
    List<String> topological = new ArrayList<>();
    for (Node node : nodes) {
      topological.add(node.name());
    }
    Collections.shuffle(topological, random);
    for (int i = 0; i < n; i++) {
      String f = topological.get(i);
      if (random.nextDouble() < density) {
        edges.add(new Edge(RecordingAnalysis.SOURCE, f));
      }
      if (random.nextDouble() < density) {
        edges.add(new Edge(f, RecordingAnalysis.SINK));
      }
      for (int j = i + 1; j < n; j++) {
        if (random.nextDouble() < density) {
          edges.add(new Edge(f, topological.get(j)));
        }
      }
    }
    if (random.nextDouble() < 0.1) {
      edges.add(new Edge(RecordingAnalysis.SOURCE, RecordingAnalysis.SINK));
    }
    if (!edges.isEmpty() && random.nextDouble() < 0.2) {
      edges.add(edges.get(random.nextInt(edges.size())));
    }
    Collections.shuffle(edges, random);
  }

  /**
   * Algorithm 1 taken literally: functions in reverse topological order; a reader is recorded if,
   * among all paths from it to a target (passing through other targets allowed), two end at
   * different targets and share no vertex but the reader. Fanning-out recorded functions are two
   * explicit vertices.
   */
  static Set<String> bruteForce(List<Node> nodes, List<Edge> edges) {
    Map<String, Node> byName = new LinkedHashMap<>();
    for (Node node : nodes) {
      byName.put(node.name(), node);
    }
    Map<String, Set<String>> successors = new HashMap<>();
    for (Edge edge : edges) {
      successors.computeIfAbsent(edge.from(), k -> new HashSet<>()).add(edge.to());
    }
    Set<String> done = new HashSet<>();
    Set<String> recorded = new HashSet<>();
    while (done.size() < nodes.size()) {
      for (String f : byName.keySet()) {
        Set<String> next = successors.getOrDefault(f, Set.of());
        boolean ready = next.stream().allMatch(s -> !byName.containsKey(s) || done.contains(s));
        if (!done.contains(f) && ready) {
          done.add(f);
          if (byName.get(f).writes() || hasDisjointPaths(f, byName, successors, recorded)) {
            recorded.add(f);
          }
          break;
        }
      }
    }
    return recorded;
  }

  private static List<String> copies(String v, Map<String, Node> byName, Set<String> recorded) {
    boolean twice = recorded.contains(v) && byName.get(v).fansOut();
    return twice ? List.of(v + "#1", v + "#2") : List.of(v);
  }

  private static boolean hasDisjointPaths(
      String start,
      Map<String, Node> byName,
      Map<String, Set<String>> successors,
      Set<String> recorded) {
    // The expanded graph, its vertices numbered for bit masks.
    Map<String, List<String>> expanded = new HashMap<>();
    Set<String> targets = new HashSet<>();
    targets.add(RecordingAnalysis.SINK);
    for (Map.Entry<String, Set<String>> entry : successors.entrySet()) {
      List<String> next = new ArrayList<>();
      for (String s : entry.getValue()) {
        next.addAll(copies(s, byName, recorded));
      }
      for (String copy : copies(entry.getKey(), byName, recorded)) {
        expanded.put(copy, next);
      }
    }
    Map<String, Integer> number = new HashMap<>();
    number.put(RecordingAnalysis.SINK, 0);
    for (String f : byName.keySet()) {
      for (String copy : copies(f, byName, recorded)) {
        number.put(copy, number.size());
        if (recorded.contains(f)) {
          targets.add(copy);
        }
      }
    }
    List<long[]> paths = new ArrayList<>(); // {vertices but start, endpoint}
    enumerate(start, 0L, expanded, number, targets, paths);
    for (long[] p : paths) {
      for (long[] q : paths) {
        if (p[1] != q[1] && (p[0] & q[0]) == 0) {
          return true;
        }
      }
    }
    return false;
  }

  private static void enumerate(
      String v,
      long visited,
      Map<String, List<String>> expanded,
      Map<String, Integer> number,
      Set<String> targets,
      List<long[]> paths) {
    for (String w : expanded.getOrDefault(v, List.of())) {
      long bit = 1L << number.get(w);
      if ((visited & bit) != 0) {
        continue; // not reachable in a DAG, but keeps the paths simple regardless
      }
      if (targets.contains(w)) {
        paths.add(new long[] {visited | bit, number.get(w)});
      }
      enumerate(w, visited | bit, expanded, number, targets, paths);
    }
  }
}

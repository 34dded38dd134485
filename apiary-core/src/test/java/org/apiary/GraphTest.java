package org.apiary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class GraphTest {
  public static class L extends LocalFunction<Long> {
    @Override
    protected void run() {}
  }

  public static class G extends GlobalFunction {
    @Override
    protected void run() {}
  }

  private static void assertProblem(Graph g, String expected) {
    List<String> problems = g.problems();
    assertTrue(problems.stream().anyMatch(p -> p.contains(expected)), problems + " should mention: " + expected);
  }

  @Test
  void aValidGraphHasNoProblems() {
    Graph g = Graph.named("ok").addLocalFunction("a", L.class).addGlobalFunction("b", G.class)
        .addEdge(Graph.SOURCE, "a", "source", Long.class).addEdge("a", "b", "x").addEdge("b", Graph.SINK, "sink");
    assertEquals(List.of(), g.problems());
    g.validate();
  }

  @Test
  void everyStructuralMistakeIsNamed() {
    assertProblem(Graph.named("c").addLocalFunction("a", L.class).addLocalFunction("b", L.class)
        .addEdge(Graph.SOURCE, "a", "s").addEdge("a", "b", "x").addEdge("b", "a", "y"), "has a cycle: a -> b -> a");
    assertProblem(Graph.named("d").addLocalFunction("a", L.class).addEdge(Graph.SOURCE, "a", "s")
        .addEdge("a", "ghost", "x"), "goes to unknown function 'ghost'");
    assertProblem(Graph.named("e").addLocalFunction("a", L.class).addEdge(Graph.SOURCE, "a", "s")
        .addEdge("ghost", "a", "x"), "comes from unknown function 'ghost'");
    assertProblem(Graph.named("f").addLocalFunction("a", L.class).addLocalFunction("b", L.class)
        .addEdge(Graph.SOURCE, "a", "s", Long.class).addEdge(Graph.SOURCE, "b", "s", String.class),
        "the client's arguments cannot be both");
    assertProblem(Graph.named("g").addLocalFunction("a", L.class).addLocalFunction("b", L.class)
        .addEdge(Graph.SOURCE, "a", "s"), "function 'b' has no incoming edge");
    assertProblem(Graph.named("h").addLocalFunction("a", L.class).addEdge(Graph.SOURCE, "a", "s")
        .addEdge(Graph.SINK, "a", "t"), "leaves the sink");
    assertProblem(Graph.named("i").addLocalFunction("a", L.class).addEdge("a", Graph.SOURCE, "s"),
        "enters the source");
    assertProblem(Graph.named("j").addLocalFunction("a", L.class).addLocalFunction("b", L.class)
        .addEdge(Graph.SOURCE, "a", "s").addEdge("a", "b", "x").addEdge("a", Graph.SINK, "x"),
        "already has an outgoing edge 'x'");
    assertProblem(Graph.named("k").addLocalFunction("a", L.class).addLocalFunction("a", L.class)
        .addEdge(Graph.SOURCE, "a", "s"), "function 'a' is added twice");
    assertProblem(Graph.named("bad name!").addLocalFunction("a", L.class).addEdge(Graph.SOURCE, "a", "s"),
        "a graph name is");
    assertProblem(Graph.named("m"), "has no functions");
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  @Test
  void aClassAddedAsTheWrongKindIsRefused() {
    Graph g = Graph.named("n").addLocalFunction("a", (Class) G.class).addEdge(Graph.SOURCE, "a", "s");
    assertProblem(g, "is added as local but its class extends GlobalFunction");
    RegistrationException e = assertThrows(RegistrationException.class, g::validate);
    assertTrue(e.getMessage().contains("GlobalFunction"));
  }

  @Test
  void aGraphLargerThanTheLimitsIsRejectedWithItsSize() {
    Graph g = Graph.named("huge");
    String previous = Graph.SOURCE;
    for (int i = 0; i <= Graph.MAX_FUNCTIONS; i++) {
      g.addLocalFunction("f" + i, L.class);
      if (previous.equals(Graph.SOURCE)) {
        g.addEdge(previous, "f" + i, "source", Long.class);
      } else {
        g.addEdge(previous, "f" + i, "e" + i);
      }
      previous = "f" + i;
    }
    g.addEdge(previous, Graph.SINK, "sink");
    List<String> problems = g.problems();
    assertTrue(problems.stream().anyMatch(p -> p.contains((Graph.MAX_FUNCTIONS + 1) + " functions")
        && p.contains("at most " + Graph.MAX_FUNCTIONS)), problems.toString());
  }

  @Test
  void aGraphWithMoreEdgesThanTheLimitIsRejectedWithItsCount() {
    // 48 functions (within their limit), f0 -> f1 ... f47 by every forward pair: acyclic, each function reached.
    int functions = 48;
    Graph g = Graph.named("dense");
    for (int i = 0; i < functions; i++) {
      g.addLocalFunction("f" + i, L.class);
    }
    g.addEdge(Graph.SOURCE, "f0", "source", Long.class);
    g.addEdge("f" + (functions - 1), Graph.SINK, "sink");
    int edges = 2;
    for (int i = 0; i < functions && edges <= Graph.MAX_EDGES; i++) {
      for (int j = i + 1; j < functions && edges <= Graph.MAX_EDGES; j++) {
        g.addEdge("f" + i, "f" + j, "e" + i + "_" + j);
        edges++;
      }
    }
    assertEquals(Graph.MAX_EDGES + 1, edges);
    // The edge count is the graph's only problem.
    assertEquals(List.of("graph 'dense' has " + (Graph.MAX_EDGES + 1) + " edges; a graph may have at most "
        + Graph.MAX_EDGES), g.problems());
    RegistrationException e = assertThrows(RegistrationException.class, g::validate);
    assertTrue(e.getMessage().contains((Graph.MAX_EDGES + 1) + " edges"), e.getMessage());
  }

  public static class Step extends ExternalFunction {
    @Override
    protected void run() {
      returnOutput(idempotencyKey());
    }
  }

  public static class StepWithoutDefaultConstructor extends ExternalFunction {
    public StepWithoutDefaultConstructor(String x) {}

    @Override
    protected void run() {}
  }

  @Test
  void anExternalStepIsANodeLikeAFunctionAndIsCheckedLikeOne() {
    Graph g = Graph.named("pay").addExternalFunction("charge", Step.class).addLocalFunction("a", L.class)
        .addEdge(Graph.SOURCE, "charge", "source").addEdge("charge", "a", "source").addEdge("a", Graph.SINK, "sink");
    assertEquals(List.of(), g.problems());
    assertEquals(List.of("charge"), List.copyOf(g.externalFunctions().keySet()));
    assertEquals(StepPolicy.defaults(), g.externalFunctions().get("charge").policy());
    assertProblem(Graph.named("twice").addLocalFunction("a", L.class).addExternalFunction("a", Step.class)
        .addEdge(Graph.SOURCE, "a", "source"), "function 'a' is added twice");
    assertProblem(Graph.named("ctor").addExternalFunction("s", StepWithoutDefaultConstructor.class)
        .addEdge(Graph.SOURCE, "s", "source"), "no public no-argument constructor");
    assertProblem(Graph.named("orphan").addExternalFunction("s", Step.class).addLocalFunction("a", L.class)
        .addEdge(Graph.SOURCE, "a", "source"), "function 's' has no incoming edge");
    assertProblem(Graph.named("loop").addExternalFunction("s", Step.class).addGlobalFunction("b", G.class)
        .addEdge(Graph.SOURCE, "s", "source").addEdge("s", "b", "x").addEdge("b", "s", "y"), "has a cycle");
  }

  @Test
  void aStepPolicyIsCheckedAndItsBackOffDoublesUpToItsMaximum() {
    StepPolicy p = StepPolicy.defaults().withBackoff(java.time.Duration.ofMillis(100), java.time.Duration.ofMillis(350));
    assertEquals(List.of(100L, 200L, 350L, 350L), List.of(p.backoffAfter(1).toMillis(), p.backoffAfter(2).toMillis(),
        p.backoffAfter(3).toMillis(), p.backoffAfter(4).toMillis()));
    assertThrows(IllegalArgumentException.class, () -> p.withMaxAttempts(0));
    assertThrows(IllegalArgumentException.class, () -> p.withTimeout(java.time.Duration.ZERO));
    assertThrows(IllegalArgumentException.class,
        () -> p.withBackoff(java.time.Duration.ofSeconds(2), java.time.Duration.ofSeconds(1)));
  }

  @Test
  void anExternalStepsApiIsUsableOnlyWhileAFrontendRunsIt() {
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> new Step().run());
    assertTrue(e.getMessage().contains("only usable while a frontend runs this step"), e.getMessage());
  }

  @Test
  void anApplicationRefusesOneNameForAStepInOneGraphAndAFunctionInAnother() {
    Graph a = Graph.named("a").addExternalFunction("x", Step.class).addEdge(Graph.SOURCE, "x", "source");
    Graph b = Graph.named("b").addGlobalFunction("x", G.class).addEdge(Graph.SOURCE, "x", "source");
    RegistrationException e = assertThrows(RegistrationException.class, () -> Application.of("", a, b).functions());
    assertTrue(e.problems().toString().contains("'x' is an external step in one graph and a function in another"),
        e.problems().toString());
  }
}

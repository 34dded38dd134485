package org.apiary.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link DagLayout}: layers by longest path, order by barycenter, boxes apart. */
class DagLayoutTest {
  private static String[] e(String from, String to) {
    return new String[] {from, to};
  }

  @Test
  void layersAreLongestPathsAndSinkIsLast() {
    // S -> a -> b -> c -> K, and S -> c directly: c is in layer 3 (the longest path), not 1; K after all.
    DagLayout.Layout l = DagLayout.layout(List.of("S", "a", "b", "c", "K", "lonely"),
        List.of(e("S", "a"), e("a", "b"), e("b", "c"), e("S", "c"), e("c", "K")), "S", "K");
    assertEquals(0, l.places().get("S").layer());
    assertEquals(3, l.places().get("c").layer());
    assertEquals(1, l.places().get("lonely").layer(), "a node without predecessors follows SOURCE");
    assertEquals(4, l.places().get("K").layer());
    assertApart(l);
  }

  @Test
  void barycenterUncrossesEdges() {
    // Given in the order that crosses: a -> d and b -> c, with c listed before d; barycenter puts d above c.
    DagLayout.Layout l = DagLayout.layout(List.of("S", "a", "b", "c", "d", "K"),
        List.of(e("S", "a"), e("S", "b"), e("a", "d"), e("b", "c"), e("c", "K"), e("d", "K")), "S", "K");
    assertTrue(l.places().get("d").order() < l.places().get("c").order(), l.places().toString());
    assertTrue(l.places().get("d").y() < l.places().get("c").y());
    assertApart(l);
  }

  @Test
  void aWideFanIsApartAndACycleStillEnds() {
    List<String> nodes = new ArrayList<>(List.of("S", "K"));
    List<String[]> edges = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      nodes.add("f" + i);
      edges.add(e("S", "f" + i));
      edges.add(e("f" + i, i % 2 == 0 ? "K" : "f" + (i - 1)));
    }
    edges.add(e("f0", "f1")); // with f1 -> f0: a cycle, which a registered graph cannot have
    DagLayout.Layout l = DagLayout.layout(nodes, edges, "S", "K");
    assertEquals(nodes.size(), l.places().size());
    assertApart(l);
  }

  private static void assertApart(DagLayout.Layout l) {
    List<DagLayout.Place> p = new ArrayList<>(l.places().values());
    for (int i = 0; i < p.size(); i++) {
      DagLayout.Place a = p.get(i);
      assertTrue(a.x() >= 0 && a.y() >= 0 && a.x() + DagLayout.NODE_WIDTH <= l.width()
          && a.y() + DagLayout.NODE_HEIGHT <= l.height(), a + " within " + l.width() + "x" + l.height());
      for (int j = i + 1; j < p.size(); j++) {
        DagLayout.Place b = p.get(j);
        boolean apart = a.x() + DagLayout.NODE_WIDTH <= b.x() || b.x() + DagLayout.NODE_WIDTH <= a.x()
            || a.y() + DagLayout.NODE_HEIGHT <= b.y() || b.y() + DagLayout.NODE_HEIGHT <= a.y();
        assertTrue(apart, a + " overlaps " + b);
      }
    }
  }
}

package org.apiary.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a graph's nodes are drawn, left to right: layers by longest path from the nodes without predecessors
 * ({@code SOURCE} first; {@code SINK} always in a layer after every other node), the order within each layer by the
 * barycenter of the neighbours in the layer before (then after, alternating, a few sweeps), each layer centred
 * vertically. Nodes are boxes of {@link #NODE_WIDTH} x {@link #NODE_HEIGHT} whose top-left corners are at least a box
 * plus a gap apart, so none overlap. A cycle (which a registered graph cannot have) is broken by ignoring the edges
 * that close it.
 */
final class DagLayout {
  static final int NODE_WIDTH = 176;
  static final int NODE_HEIGHT = 48;
  static final int GAP_X = 128;
  static final int GAP_Y = 36;
  static final int MARGIN = 16;
  private static final int SWEEPS = 4;

  /** One node's place: its layer (column), its order in it, its box's top-left corner. */
  record Place(String id, int layer, int order, int x, int y) {}

  /** The places by node ID, in the order nodes were given, and the drawing's size. */
  record Layout(Map<String, Place> places, int width, int height) {}

  private DagLayout() {}

  /**
   * Lays out {@code nodes} (IDs, in a stable order) joined by {@code edges} (pairs from, to; edges naming unknown
   * nodes are ignored).
   */
  static Layout layout(List<String> nodes, List<String[]> edges, String source, String sink) {
    Map<String, List<String>> in = new HashMap<>();
    Map<String, List<String>> out = new HashMap<>();
    for (String n : nodes) {
      in.put(n, new ArrayList<>());
      out.put(n, new ArrayList<>());
    }
    for (String[] e : edges) {
      if (in.containsKey(e[0]) && in.containsKey(e[1]) && !e[0].equals(e[1])) {
        out.get(e[0]).add(e[1]);
        in.get(e[1]).add(e[0]);
      }
    }
    // Longest path: a node's layer is one more than its predecessors' greatest (Kahn's order; a cycle's rest last).
    Map<String, Integer> layer = new LinkedHashMap<>();
    Map<String, Integer> waiting = new HashMap<>();
    List<String> ready = new ArrayList<>();
    for (String n : nodes) {
      waiting.put(n, in.get(n).size());
      if (in.get(n).isEmpty()) {
        ready.add(n);
      }
    }
    List<String> order = new ArrayList<>();
    while (order.size() < nodes.size()) {
      if (ready.isEmpty()) { // a cycle: take the first node not placed yet
        nodes.stream().filter(n -> !order.contains(n)).findFirst().ifPresent(ready::add);
      }
      String n = ready.remove(0);
      if (order.contains(n)) {
        continue;
      }
      order.add(n);
      int l = n.equals(source) ? 0 : 1;
      for (String p : in.get(n)) {
        if (layer.containsKey(p)) {
          l = Math.max(l, layer.get(p) + 1);
        }
      }
      layer.put(n, l);
      for (String s : out.get(n)) {
        if (waiting.merge(s, -1, Integer::sum) == 0) {
          ready.add(s);
        }
      }
    }
    if (layer.containsKey(sink)) {
      int last = 0;
      for (Map.Entry<String, Integer> e : layer.entrySet()) {
        if (!e.getKey().equals(sink)) {
          last = Math.max(last, e.getValue());
        }
      }
      layer.put(sink, last + 1);
    }
    int layers = layer.values().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
    List<List<String>> columns = new ArrayList<>();
    for (int i = 0; i < layers; i++) {
      columns.add(new ArrayList<>());
    }
    for (String n : nodes) {
      columns.get(layer.get(n)).add(n);
    }
    // Barycenter: order each layer by the mean position of its neighbours in the layer just swept.
    Map<String, Double> position = new HashMap<>();
    columns.forEach(c -> number(c, position));
    for (int sweep = 0; sweep < SWEEPS; sweep++) {
      boolean down = sweep % 2 == 0;
      for (int k = 1; k < layers; k++) {
        List<String> column = columns.get(down ? k : layers - 1 - k);
        Map<String, List<String>> neighbours = down ? in : out;
        Map<String, Double> key = new HashMap<>();
        for (String n : column) {
          double sum = 0;
          int count = 0;
          for (String m : neighbours.get(n)) {
            sum += position.get(m);
            count++;
          }
          key.put(n, count == 0 ? position.get(n) : sum / count);
        }
        column.sort(Comparator.comparingDouble(key::get)); // stable: ties keep their order
        number(column, position);
      }
    }
    int tallest = columns.stream().mapToInt(List::size).max().orElse(0);
    int height = 2 * MARGIN + Math.max(0, tallest * NODE_HEIGHT + (tallest - 1) * GAP_Y);
    int width = 2 * MARGIN + Math.max(0, layers * NODE_WIDTH + (layers - 1) * GAP_X);
    Map<String, Place> places = new LinkedHashMap<>();
    for (String n : nodes) {
      places.put(n, null);
    }
    for (int l = 0; l < layers; l++) {
      List<String> column = columns.get(l);
      int columnHeight = column.size() * NODE_HEIGHT + (column.size() - 1) * GAP_Y;
      int top = MARGIN + (height - 2 * MARGIN - columnHeight) / 2;
      for (int i = 0; i < column.size(); i++) {
        String n = column.get(i);
        places.put(n, new Place(n, l, i, MARGIN + l * (NODE_WIDTH + GAP_X), top + i * (NODE_HEIGHT + GAP_Y)));
      }
    }
    return new Layout(places, width, height);
  }

  private static void number(List<String> column, Map<String, Double> position) {
    for (int i = 0; i < column.size(); i++) {
      position.put(column.get(i), (double) i);
    }
  }
}

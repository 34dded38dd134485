package org.apiary.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apiary.AccessPolicy;
import org.apiary.internal.Json;

/**
 * The access check of a registered graph: its own policy, then its functions' in topological order. One
 * implementation for the frontend, which checks every call before anything runs, and for the database, whose
 * {@code CheckAndRecordDenial} runs the same check again on the stored graph before it records a refusal, so the two
 * reach the same verdict with the same message.
 */
public final class GraphAccess {
  private GraphAccess() {}

  /**
   * Why a call is refused, or {@code null} if every policy allows it.
   *
   * @param graph the graph's name
   * @param policy the graph's policy
   * @param functions its functions in topological order
   * @param functionAccess the policies of those functions that have one
   * @param caller who calls ({@code null}: anonymous), for the message
   * @param callerRoles the caller's roles
   * @param purpose the purpose the call states, or {@code null}
   */
  public static String refusal(String graph, AccessPolicy policy, List<String> functions,
                               Map<String, AccessPolicy> functionAccess, String caller, Set<String> callerRoles,
                               String purpose) {
    String refusal = policy.refusal("graph '" + graph + "'", caller, callerRoles, purpose);
    for (int i = 0; refusal == null && i < functions.size(); i++) {
      AccessPolicy fn = functionAccess.get(functions.get(i));
      if (fn != null) {
        refusal = fn.refusal("function '" + functions.get(i) + "' of graph '" + graph + "'", caller, callerRoles,
            purpose);
      }
    }
    return refusal;
  }

  /**
   * {@link #refusal(String, AccessPolicy, List, Map, String, Set, String)} for a graph as {@value SystemSchema#GRAPHS}
   * stores it (the frontend's {@code RegisteredGraph} as JSON: {@code name}, {@code nodes[].function}, and
   * {@code access} and {@code functionAccess} where they are not open).
   *
   * @throws IllegalArgumentException if {@code definition} is not such a graph
   */
  public static String refusal(byte[] definition, String caller, Set<String> callerRoles, String purpose) {
    JsonNode graph = Json.parse(definition);
    JsonNode name = graph.get("name");
    JsonNode nodes = graph.get("nodes");
    if (name == null || !name.isTextual() || nodes == null || !nodes.isArray()) {
      throw new IllegalArgumentException("not a stored graph: it needs a name and nodes");
    }
    List<String> functions = new ArrayList<>();
    for (JsonNode node : nodes) {
      functions.add(Json.convert(node.get("function"), String.class, "a node's function"));
    }
    AccessPolicy policy = graph.hasNonNull("access")
        ? Json.convert(graph.get("access"), AccessPolicy.class, "the graph's access policy") : AccessPolicy.OPEN;
    Map<String, AccessPolicy> functionAccess = new TreeMap<>();
    JsonNode byFunction = graph.get("functionAccess");
    if (byFunction != null && byFunction.isObject()) {
      byFunction.fields().forEachRemaining(e -> functionAccess.put(e.getKey(),
          Json.convert(e.getValue(), AccessPolicy.class, "function '" + e.getKey() + "''s access policy")));
    }
    return refusal(name.asText(), policy, functions, functionAccess, caller, callerRoles, purpose);
  }
}

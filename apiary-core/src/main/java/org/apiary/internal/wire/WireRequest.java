package org.apiary.internal.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * A request from a client to a frontend: one JSON document in one ZeroMQ frame.
 *
 * <ul>
 *   <li>{@code {"type":"invoke","id":ID,"graph":NAME,"key":KEY,"args":[...]}} runs a graph (or, with the same ID,
 *       re-attaches to the execution already started under that ID);</li>
 *   <li>{@code {"type":"result","id":ID}} asks for the outcome of an earlier invocation.</li>
 * </ul>
 *
 * @param type {@link #INVOKE} or {@link #RESULT}
 * @param id the client-generated invocation ID
 * @param graph the graph to run (invoke only)
 * @param key the partition key for the graph's first local functions, or {@code null}
 * @param args the arguments, sent along every edge out of the graph's source
 * @param caller who is calling, as the client says (recorded in provenance), or {@code null}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WireRequest(String type, String id, String graph, JsonNode key, List<JsonNode> args, String caller) {
  public static final String INVOKE = "invoke";
  public static final String RESULT = "result";

  /** The longest invocation ID a frontend accepts. */
  public static final int MAX_ID_LENGTH = 64;

  public static WireRequest invoke(String id, String graph, JsonNode key, List<JsonNode> args, String caller) {
    return new WireRequest(INVOKE, id, graph, key, args, caller);
  }

  public static WireRequest result(String id) {
    return new WireRequest(RESULT, id, null, null, null, null);
  }
}

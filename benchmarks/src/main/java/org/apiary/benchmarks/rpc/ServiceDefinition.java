package org.apiary.benchmarks.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * One microservice of the RPC-servers baseline: a name and its methods. Each service runs as its own long-running
 * server process (see {@link RpcService}).
 *
 * @param name the service's name, which other services call it by; {@code frontend} receives the clients' requests,
 *     one method per operation, with the request's partition key as the first argument
 * @param methods the methods, by name
 */
public record ServiceDefinition(String name, Map<String, Method> methods) {
  /** The service clients talk to. */
  public static final String FRONTEND = "frontend";

  /** One method: business logic that queries the database and calls other services through the context. */
  @FunctionalInterface
  public interface Method {
    Object handle(ServiceContext context, List<JsonNode> args) throws Exception;
  }
}

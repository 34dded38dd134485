package org.apiary.benchmarks.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.voltdb.VoltTable;

/** What a service method of the RPC-servers baseline can do: query the database and call other services. */
public interface ServiceContext {
  /** Runs one one-statement procedure: one database round trip. */
  VoltTable query(String procedure, Object... params);

  /** Runs several queries concurrently (each its own round trip) and waits for all; results in order. */
  List<VoltTable> queryAll(List<Object[]> calls);

  /** Calls a method of another service and waits for its answer. */
  JsonNode call(String service, String method, Object... args);
}

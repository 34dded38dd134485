package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import org.apiary.ProvenanceLevel;
import org.apiary.QueryResult;
import org.apiary.Statement;

/** What a running function's SDK calls delegate to: implemented by the stored procedure that hosts it. */
public interface FunctionRuntime {
  String functionName();

  List<JsonNode> inputs(String edge);

  void queue(Statement statement, Object[] args, ProvenanceLevel level);

  List<QueryResult> execute();

  void output(String edge, Object value, Object partitionKey);

  Object partitionKey();

  Instant transactionTime();

  long uniqueId();

  Random random();
}

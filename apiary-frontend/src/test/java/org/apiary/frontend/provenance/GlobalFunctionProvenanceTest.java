package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * A global (multi-partition) function's writes are attributed to its execution, and its reads and writes take their
 * place in each record's order among single-partition ones (issue 41, item 3), against the embedded database (two
 * partitions). The expected attribution and order are the calls this test made, one after another.
 */
@DatabaseTest
class GlobalFunctionProvenanceTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void everyWriteOfAGlobalFunctionJoinsItsExecution(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    ItemsApp.registerOnce(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    long[] keys = keysOnTwoPartitions(invoker, db, 8100);
    for (int run = 0; run < 5; run++) {
      callGlobal(invoker, "setTwo", "inv-global-set-" + run, keys[0], keys[1], 100L + run);
    }
    String url = db.config().provenance().sinkUrl();
    String updates = "SELECT COUNT(*) FROM itemsEvents WHERE id IN (" + keys[0] + ", " + keys[1]
        + ") AND event_type = 'update' AND qty >= 100";
    assertEquals(10L, SinkRows.awaitCount(url, updates, 10, WAIT), "five runs, two updates each");
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM FunctionInvocations WHERE execution_id LIKE 'inv-global-set-%'", 5, WAIT);
    List<String> joined = SinkRows.rows(url, "SELECT f.execution_id, e.id, e.qty FROM itemsEvents e "
        + "JOIN FunctionInvocations f ON f.exec_id = " + ProvenanceSchema.writerExecId("e") + " WHERE e.id IN (" + keys[0] + ", " + keys[1]
        + ") AND e.event_type = 'update' AND e.qty >= 100 ORDER BY f.execution_id, e.id");
    List<String> expected = new ArrayList<>();
    for (int run = 0; run < 5; run++) {
      expected.add("inv-global-set-" + run + "|" + keys[0] + "|" + (100 + run));
      expected.add("inv-global-set-" + run + "|" + keys[1] + "|" + (100 + run));
    }
    assertEquals(expected, joined, "each update event joins the execution that made it");
  }

  @Test
  void singleAndMultiPartitionWritesAndReadsOfOneRecordKeepTheirOrder(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    ItemsApp.registerOnce(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    long[] keys = keysOnTwoPartitions(invoker, db, 8200); // stock: insert qty 1, update qty 5
    long a = keys[0];
    long b = keys[1];
    callGlobal(invoker, "readTwo", "inv-order-g-read-1", a, b);            // sees 5
    callGlobal(invoker, "setTwo", "inv-order-g-set-1", a, b, 200L);
    call(invoker, "readItem", a, "inv-order-l-read-1", "x");               // sees 200
    callGlobal(invoker, "readTwo", "inv-order-g-read-2", a, b);            // sees 200
    call(invoker, "setQty", a, "inv-order-l-set-1", 7L);
    callGlobal(invoker, "readTwo", "inv-order-g-read-3", a, b);            // sees 7
    callGlobal(invoker, "readThenSetTwo", "inv-order-g-rset-1", a, b, 300L); // sees 7, then writes 300
    call(invoker, "readItem", a, "inv-order-l-read-2", "x");               // sees 300
    call(invoker, "setQty", a, "inv-order-l-set-2", 8L);
    callGlobal(invoker, "readTwo", "inv-order-g-read-4", a, b);            // sees 8

    String url = db.config().provenance().sinkUrl();
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM itemsEvents WHERE id = " + a + " AND event_type <> 'read'", 6, WAIT);
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM itemsEvents WHERE id = " + a + " AND event_type = 'read'", 7, WAIT);
    List<String> history = SinkRows.rows(url, "SELECT f.execution_id, e.event_type, e.qty FROM itemsEvents e "
        + "JOIN FunctionInvocations f ON f.exec_id = " + ProvenanceSchema.writerExecId("e") + " WHERE e.id = " + a
        + " ORDER BY " + ProvenanceSchema.eventOrder("e"));
    String stock = "inv-order-stock-" + a;
    assertEquals(List.of(stock + "|insert|1", stock + "|update|5", "inv-order-g-read-1|read|null",
        "inv-order-g-set-1|update|200", "inv-order-l-read-1|read|null", "inv-order-g-read-2|read|null",
        "inv-order-l-set-1|update|7", "inv-order-g-read-3|read|null", "inv-order-g-rset-1|read|null",
        "inv-order-g-rset-1|update|300", "inv-order-l-read-2|read|null", "inv-order-l-set-2|update|8",
        "inv-order-g-read-4|read|null"), history, "record " + a + "'s events in the order they were made");
    try (Connection c = DriverManager.getConnection(url)) {
      ProvenanceQueries queries = new ProvenanceQueries(c);
      ProvenanceTable items = queries.describeEventsTable("items", List.of("id"));
      Map<String, Long> seen = Map.of("inv-order-g-read-1", 5L, "inv-order-l-read-1", 200L, "inv-order-g-read-2", 200L,
          "inv-order-g-read-3", 7L, "inv-order-g-rset-1", 7L, "inv-order-l-read-2", 300L, "inv-order-g-read-4", 8L);
      for (var read : seen.entrySet()) {
        var state = queries.stateWhenRead(items, Map.of("id", a), read.getKey());
        assertEquals(read.getValue(), state.orElseThrow().get("qty"), "the state " + read.getKey() + " read");
      }
      // Downstream of what readTwo read first: the record the global function that read it wrote afterwards.
      var written = queries.writtenByExecutionsThatRead(List.of(items), items, Map.of("id", a));
      List<String> writers = written.stream().filter(w -> w.executionId().startsWith("inv-order-g-rset"))
          .map(w -> w.executionId() + "|" + w.functionName() + "|" + w.eventType()).distinct().sorted().toList();
      assertEquals(List.of("inv-order-g-rset-1|readThenSetTwo|update"), writers,
          "downstream of the record: the global function's writes, attributed to it: " + written);
    }
  }

  /**
   * Stocks ten items from {@code from} on (hashing puts some on each of the two partitions) and returns {@code from}
   * and the first of them on the other partition.
   */
  private static long[] keysOnTwoPartitions(FunctionInvoker invoker, ApiaryDatabase db, long from) throws Exception {
    String url = db.config().provenance().sinkUrl();
    List<String> ids = new ArrayList<>();
    for (long k = from; k < from + 10; k++) {
      call(invoker, "stock", k, "inv-order-stock-" + k, "item");
      ids.add("'inv-order-stock-" + k + "'");
    }
    String stocked = "FROM FunctionInvocations WHERE execution_id IN (" + String.join(", ", ids) + ")";
    SinkRows.awaitCount(url, "SELECT COUNT(*) " + stocked, 10, WAIT);
    List<String> other = SinkRows.rows(url, "SELECT CAST(partition_key AS BIGINT) " + stocked + " AND partition_id <> "
        + "(SELECT partition_id " + stocked + " AND partition_key = '" + from + "') ORDER BY 1 LIMIT 1");
    if (other.isEmpty()) {
      throw new AssertionError("none of ten keys from " + from + " on hashes to a second partition");
    }
    return new long[] {from, Long.parseLong(other.get(0))};
  }

  private static void callGlobal(FunctionInvoker invoker, String function, String invocationId, Object... args)
      throws Exception {
    Invocation invocation = new Invocation(Map.of("source", List.of(Json.tree(Arrays.asList(args)))),
        invocationId, false);
    invoker.callAsync(function, null, invocation).get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private static void call(FunctionInvoker invoker, String function, long key, String invocationId, Object argument)
      throws Exception {
    Invocation invocation = new Invocation(Map.of("source", List.of(Json.tree(argument))), invocationId, false);
    invoker.callAsync(function, key, invocation).get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

}

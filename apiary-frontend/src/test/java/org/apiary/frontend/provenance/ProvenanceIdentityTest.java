package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * Who did what, and in which order, against the embedded database: read-only executions are executions of their own
 * (VoltDB gives a read-only single-partition transaction the partition's last transaction ID), a multi-partition
 * write's events on different partitions are all kept, and the state a read saw is the last write before it, whether
 * single- or multi-partition transactions wrote it.
 */
@DatabaseTest
class ProvenanceIdentityTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void readOnlyExecutionsAfterAWriteAreEachTheirOwnExecution(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    ItemsApp.registerOnce(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    call(invoker, "stock", 61L, "inv-identity-stock-61", "sixty-one");
    // Right after the write, on the same partition: VoltDB hands both reads the writer's transaction ID.
    assertEquals(5L, call(invoker, "readItem", 61L, "inv-identity-read-61-a", "x"));
    assertEquals(5L, call(invoker, "readItem", 61L, "inv-identity-read-61-b", "x"));

    String url = db.config().provenance().sinkUrl();
    String readsOf61 = "SELECT COUNT(*) FROM itemsEvents WHERE id = 61 AND event_type = 'read'";
    assertEquals(2L, SinkRows.awaitCount(url, readsOf61, 2, WAIT), "two reads, two read events");
    String executions = "SELECT COUNT(*) FROM FunctionInvocations WHERE execution_id LIKE 'inv-identity-%-61%'";
    assertEquals(3L, SinkRows.awaitCount(url, executions, 3, WAIT), "one write and two read-only executions");
    List<String> reads = SinkRows.rows(url, "SELECT f.execution_id, f.function_name FROM itemsEvents e "
        + "JOIN FunctionInvocations f ON f.exec_id = e.exec_id WHERE e.id = 61 AND e.event_type = 'read' "
        + "ORDER BY f.execution_id");
    assertEquals(List.of("inv-identity-read-61-a|readItem", "inv-identity-read-61-b|readItem"), reads,
        "each read is attributed to its own execution, none to the writer");
    // Writes arrive through VoltDB's export stream, on their own schedule: wait for them too.
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM itemsEvents WHERE id = 61 AND event_type <> 'read'", 2, WAIT);
    List<String> writes = SinkRows.rows(url, "SELECT e.event_type, f.execution_id FROM itemsEvents e "
        + "JOIN FunctionInvocations f ON f.exec_id = e.exec_id WHERE e.id = 61 AND e.event_type <> 'read' "
        + "ORDER BY e.event_seq");
    assertEquals(List.of("insert|inv-identity-stock-61", "update|inv-identity-stock-61"), writes);
    List<String> ids = SinkRows.rows(url, "SELECT exec_id FROM FunctionInvocations "
        + "WHERE execution_id LIKE 'inv-identity-%-61%' ORDER BY execution_id");
    assertEquals(3, ids.stream().distinct().count(), "three executions, three identities: " + ids);
  }

  @Test
  void aMultiPartitionWriteKeepsTheEventsOfEveryPartition(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    ItemsApp.registerOnce(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    // Both partitions' export streams count from where they are; 300 inserts each make their sequence numbers meet.
    long from = 20_000;
    long to = from + 600;
    invoker.callGlobal("stockRange", from, to);
    String url = db.config().provenance().sinkUrl();
    String inserted = "SELECT COUNT(*) FROM itemsEvents WHERE id >= " + from + " AND id < " + to
        + " AND event_type = 'insert'";
    assertEquals(to - from, SinkRows.awaitCount(url, inserted, to - from, WAIT), "every inserted row has its event");
    assertEquals(List.of("2"), SinkRows.rows(url, "SELECT COUNT(DISTINCT partition_id) FROM itemsEvents WHERE id >= " + from
        + " AND id < " + to), "the write spans both partitions");
    assertEquals(List.of(Long.toString(to - from)), SinkRows.rows(url, "SELECT COUNT(*) FROM (SELECT DISTINCT exec_id, "
        + "partition_id, event_type, event_seq FROM itemsEvents WHERE id >= " + from + " AND id < " + to + ") k"),
        "the event key tells the partitions' events apart");
  }

  @Test
  void theStateAReadSawIsTheLastWriteBeforeItAcrossSingleAndMultiPartitionWrites(TestDatabase database)
      throws Exception {
    ApiaryDatabase db = database.database();
    ItemsApp.registerOnce(db);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    // A multi-partition write last, after single-partition ones ...
    call(invoker, "stock", 71L, "inv-order-stock-71", "seventy-one");
    invoker.callGlobal("setQtyEverywhere", 71L, 72L, 100L);
    assertEquals(100L, call(invoker, "readItem", 71L, "inv-order-read-71", "x"));
    // ... and a single-partition write last, after a multi-partition one.
    call(invoker, "stock", 73L, "inv-order-stock-73", "seventy-three");
    invoker.callGlobal("setQtyEverywhere", 73L, 74L, 100L);
    call(invoker, "setQty", 73L, "inv-order-set-73", 7L);
    assertEquals(7L, call(invoker, "readItem", 73L, "inv-order-read-73", "x"));

    String url = db.config().provenance().sinkUrl();
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM itemsEvents WHERE id IN (71, 73) AND event_type <> 'read'", 7, WAIT);
    SinkRows.awaitCount(url, "SELECT COUNT(*) FROM itemsEvents WHERE id IN (71, 73) AND event_type = 'read'", 2, WAIT);
    try (Connection c = DriverManager.getConnection(url)) {
      ProvenanceQueries queries = new ProvenanceQueries(c);
      ProvenanceTable items = queries.describeEventsTable("items", List.of("id"));
      Optional<Map<String, Object>> at71 = queries.stateWhenRead(items, Map.of("id", 71L), "inv-order-read-71");
      assertEquals(100L, at71.orElseThrow().get("qty"), "the multi-partition write came last: " + at71);
      Optional<Map<String, Object>> at73 = queries.stateWhenRead(items, Map.of("id", 73L), "inv-order-read-73");
      assertEquals(7L, at73.orElseThrow().get("qty"), "the single-partition write came last: " + at73);
    }
    List<String> history = SinkRows.rows(url, "SELECT event_type, qty FROM itemsEvents WHERE id = 73 "
        + "ORDER BY " + ProvenanceQueries.EVENT_ORDER);
    assertEquals(List.of("insert|1", "update|5", "update|100", "update|7", "read|null"), history,
        "the documented order of a record's events");
  }

  /** Calls a local function for an invocation (not recorded) and returns its first output as a long, if any. */
  private static Long call(FunctionInvoker invoker, String function, long key, String invocationId, Object argument) throws Exception {
    Invocation invocation = new Invocation(Map.of("source", List.of(Json.tree(argument))), invocationId, false);
    var result = invoker.callAsync(function, key, invocation).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    var outputs = result.outputs();
    return outputs.isEmpty() || outputs.get(0).value().isNull() ? null : outputs.get(0).value().asLong();
  }

}

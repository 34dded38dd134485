package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryFunction;
import org.apiary.FunctionFailedException;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.testapp.Transfer;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Recorded outputs (paper section 5.4): a recorded execution runs once per invocation ID, whatever resends it. */
@DatabaseTest
class RecordedOutputsTest {
  private TestDatabase db;
  private FunctionInvoker invoker;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database;
    db.clear();
    invoker = db.invoker();
  }

  private static Invocation recorded(String invocationId, Object arg) {
    return new Invocation(Map.of(ApiaryFunction.SOURCE, List.of(Json.tree(arg))), invocationId, true);
  }

  private FunctionResult call(String function, Object key, Invocation invocation) throws Exception {
    return invoker.callAsync(function, key, invocation).get(30, TimeUnit.SECONDS);
  }

  @Test
  void aResentLocalExecutionReplaysItsFirstOutputsAndWritesOnce() throws Exception {
    FunctionResult first = call("increment", 7L, recorded("inv-a", 5L));
    FunctionResult again = call("increment", 7L, recorded("inv-a", 5L));
    assertFalse(first.replayed());
    assertTrue(again.replayed());
    assertEquals(5L, first.value(Long.class));
    assertEquals(5L, again.value(Long.class));
    assertEquals(5L, invoker.call("readCounter", 7L).value(Long.class));

    FunctionResult other = call("increment", 7L, recorded("inv-b", 5L));
    assertFalse(other.replayed());
    assertEquals(10L, other.value(Long.class));
  }

  @Test
  void theSameInvocationOnAnotherKeyIsAnotherInstance() throws Exception {
    assertEquals(1L, call("increment", 1L, recorded("inv-fan", 1L)).value(Long.class));
    assertEquals(1L, call("increment", 2L, recorded("inv-fan", 1L)).value(Long.class));
    assertTrue(call("increment", 2L, recorded("inv-fan", 1L)).replayed());
    assertEquals(1L, invoker.call("readCounter", 1L).value(Long.class));
    assertEquals(1L, invoker.call("readCounter", 2L).value(Long.class));
  }

  @Test
  void concurrentResendsOfOneInstanceCommitOneWrite() throws Exception {
    List<CompletableFuture<FunctionResult>> calls = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      calls.add(invoker.callAsync("increment", 9L, recorded("inv-race", 3L)));
    }
    int replayed = 0;
    for (CompletableFuture<FunctionResult> c : calls) {
      FunctionResult r = c.get(30, TimeUnit.SECONDS);
      assertEquals(3L, r.value(Long.class));
      replayed += r.replayed() ? 1 : 0;
    }
    assertEquals(49, replayed);
    assertEquals(3L, invoker.call("readCounter", 9L).value(Long.class));
  }

  @Test
  void aRecordedGlobalFunctionReplaysToo() throws Exception {
    invoker.call("deposit", 1L, 100L);
    invoker.call("deposit", 2L, 0L);
    Invocation t = recorded("inv-transfer", new Transfer.Request(1, 2, 30));
    assertFalse(call("transfer", null, t).replayed());
    assertTrue(call("transfer", null, t).replayed());
    assertEquals(List.of(70L, 30L), invoker.callGlobal("balances").value(List.class).stream()
        .map(v -> ((Number) v).longValue()).toList());
  }

  @Test
  void aFirstRunSkipsTheLookupAndStillRecords() throws Exception {
    Invocation first = new Invocation(Map.of(ApiaryFunction.SOURCE, List.of(Json.tree(4L))), "inv-first", true, null,
        null, true, false, null);
    assertEquals(4L, call("increment", 12L, first).value(Long.class));
    FunctionResult replay = call("increment", 12L, recorded("inv-first", 4L));
    assertTrue(replay.replayed(), "the first run's outputs were recorded");
    assertEquals(4L, replay.value(Long.class));
    assertEquals(4L, invoker.call("readCounter", 12L).value(Long.class));
  }

  @Test
  void aFirstRunThatLostTheRaceRollsBackAndSaysSo() throws Exception {
    call("increment", 13L, recorded("inv-raced", 2L)); // a concurrent retry recorded first
    Invocation late = new Invocation(Map.of(ApiaryFunction.SOURCE, List.of(Json.tree(2L))), "inv-raced", true, null,
        null, true, false, null);
    var e = assertThrows(java.util.concurrent.ExecutionException.class, () -> call("increment", 13L, late));
    var f = (org.apiary.internal.ExecutionRefusedException) e.getCause();
    assertEquals(org.apiary.internal.ExecutionRefusedException.Reason.RECORDED_ELSEWHERE, f.reason());
    assertEquals(2L, invoker.call("readCounter", 13L).value(Long.class), "the late first run's write was rolled back");
  }

  @Test
  void aFunctionNotBuiltToRecordRefusesToPretend() {
    var e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> call("readCounter", 1L, recorded("inv-x", 0L)));
    FunctionFailedException f = (FunctionFailedException) e.getCause();
    assertEquals("readCounter", f.functionName());
    assertTrue(f.errorMessage().contains("not registered as recordable"), f.errorMessage());
  }

  @Test
  void statementsLeftQueuedRunWhenTheFunctionReturnsAndTheirFailureIsTheFunctions() throws Exception {
    FunctionResult created = call("createCounter", 20L, recorded("inv-create-1", 5L));
    assertEquals(5L, created.value(Long.class));
    assertTrue(call("createCounter", 20L, recorded("inv-create-1", 5L)).replayed());
    assertEquals(5L, invoker.call("readCounter", 20L).value(Long.class), "the queued insert ran once");

    // Another invocation's insert of the same counter fails in the batch that also records: that failure is the
    // function's own (final), not a concurrent execution's record (which the frontend would retry).
    var e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> call("createCounter", 20L, recorded("inv-create-2", 6L)));
    FunctionFailedException f = (FunctionFailedException) e.getCause();
    assertEquals("createCounter", f.functionName());
    assertFalse(Invocation.RECORDED_ELSEWHERE.equals(f.errorType()), f.errorType() + ": " + f.errorMessage());
    assertEquals(org.apiary.runtime.procedure.FunctionProcedure.CONSTRAINT_VIOLATION, f.errorType(), f.errorMessage());
    assertTrue(f.errorMessage().contains("unique key") && f.errorMessage().contains("COUNTERS"), f.errorMessage());
    assertEquals(5L, invoker.call("readCounter", 20L).value(Long.class));
  }

  @Test
  void statementsLeftQueuedRunWithoutRecordingToo() throws Exception {
    assertEquals(7L, invoker.call("createCounter", 21L, 7L).value(Long.class));
    assertEquals(7L, invoker.call("readCounter", 21L).value(Long.class), "the queued insert ran");
    FunctionFailedException f = assertThrows(FunctionFailedException.class,
        () -> invoker.call("createCounter", 21L, 8L));
    assertEquals(org.apiary.runtime.procedure.FunctionProcedure.CONSTRAINT_VIOLATION, f.errorType(), f.errorMessage());
    assertTrue(f.errorMessage().contains("unique key") && f.errorMessage().contains("COUNTERS"), f.errorMessage());
    assertEquals(7L, invoker.call("readCounter", 21L).value(Long.class));
  }
}

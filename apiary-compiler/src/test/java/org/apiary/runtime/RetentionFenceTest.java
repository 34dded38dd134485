package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryFunction;
import org.apiary.FunctionFailedException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * The fences inside the database that keep a late execution (a frontend paused for longer than the retention) from
 * running, or recording a failure, where retention may have deleted the records that would have stopped it: the
 * retention fence against an invocation's start, and a one-transaction invocation's deadline.
 */
@DatabaseTest
class RetentionFenceTest {
  private TestDatabase db;
  private ApiaryDatabase database;
  private FunctionInvoker invoker;

  @BeforeEach
  void setUp(TestDatabase test) {
    db = test;
    db.clear();
    database = test.database();
    invoker = test.invoker();
    database.callAdmin("resetting the fence", "@AdHoc", "DELETE FROM " + SystemSchema.RETENTION);
  }

  @AfterEach
  void resetFence() {
    database.callAdmin("resetting the fence", "@AdHoc", "DELETE FROM " + SystemSchema.RETENTION);
  }

  private static Invocation fenced(String id, Object arg, Long notBefore, Long deadline) {
    return new Invocation(Map.of(ApiaryFunction.SOURCE, List.of(Json.tree(arg))), id, true, null, null, false,
        false, null, null, null, null, notBefore, deadline);
  }

  private long advance(long cutoffMillis) {
    return database.callAdmin("advancing the fence", SystemSchema.ADVANCE_RETENTION,
        new TimestampType(cutoffMillis * 1000L)).getResults()[0].asScalarLong() / 1000L;
  }

  private long count(String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    VoltTable t = database.callAdmin("reading", "@AdHoc", all).getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  private org.apiary.internal.ExecutionRefusedException refused(String function, Object key, Invocation call) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> invoker.callAsync(function, key, call).get(30, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof org.apiary.internal.ExecutionRefusedException, String.valueOf(e.getCause()));
    return (org.apiary.internal.ExecutionRefusedException) e.getCause();
  }

  @Test
  void theFenceMovesForwardOnly() {
    long now = System.currentTimeMillis();
    assertEquals(now - 5_000, advance(now - 5_000));
    assertEquals(now - 5_000, advance(now - 60_000), "a pass with an earlier cutoff moved the fence back");
    assertEquals(now - 1_000, advance(now - 1_000));
  }

  @Test
  void aRecordedExecutionOfAnInvocationThatStartedBeforeTheFenceRollsBackEverythingItDid() throws Exception {
    long fence = advance(System.currentTimeMillis() - 10_000);
    org.apiary.internal.ExecutionRefusedException f = refused("increment", 31L, fenced("fenced-old", 5L, fence - 1,
        null));
    assertEquals(org.apiary.internal.ExecutionRefusedException.Reason.PAST_RETENTION, f.reason());
    assertTrue(f.getMessage().contains("started before retention's cutoff"), f.getMessage());
    assertEquals(0L, count("SELECT COUNT(*) FROM counters WHERE k = 31"), "the refused execution's write stayed");
    assertEquals(0L, count("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE invocation_id = ?",
        "fenced-old"));

    // Started at the fence (a running invocation's start less the margin never lies before it): runs.
    assertEquals(5L, invoker.callAsync("increment", 31L, fenced("fenced-new", 5L, fence, null))
        .get(30, TimeUnit.SECONDS).value(Long.class));
    assertEquals(1L, count("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE invocation_id = ?",
        "fenced-new"));
  }

  @Test
  void aRecordedExecutionAfterItsDeadlineDoesNotRunAndOneBeforeItDoes() throws Exception {
    long now = System.currentTimeMillis();
    org.apiary.internal.ExecutionRefusedException f = refused("increment", 32L, fenced("late", 5L, null, now - 1_000));
    assertEquals(org.apiary.internal.ExecutionRefusedException.Reason.EXPIRED, f.reason());
    assertTrue(f.getMessage().contains("after its deadline"), f.getMessage());
    assertEquals(0L, count("SELECT COUNT(*) FROM counters WHERE k = 32"));
    assertEquals(5L, invoker.callAsync("increment", 32L, fenced("in-time", 5L, null, now + 60_000))
        .get(30, TimeUnit.SECONDS).value(Long.class));
  }

  @Test
  void aFailureIsRecordedOnceAndNotPastTheDeadlineOrForAnInvocationThatStartedBeforeTheFence() {
    long now = System.currentTimeMillis();
    long fence = advance(now - 10_000);
    String procedure = SystemSchema.recordFailureFencedProcedure(SystemSchema.RECORDED_INTEGER);
    byte[] failure = "[]".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    RuntimeException late = assertThrows(RuntimeException.class, () -> database.callAdmin("recording",
        procedure, 33L, "f-late", "increment", failure, 7L, "alice", 0L, now - 1_000));
    assertTrue(late.getMessage().contains("after the invocation's deadline"), late.getMessage());
    RuntimeException old = assertThrows(RuntimeException.class, () -> database.callAdmin("recording",
        procedure, 33L, "f-old", "increment", failure, null, null, fence - 1, 0L));
    assertTrue(old.getMessage().contains("started before retention's cutoff"), old.getMessage());
    assertEquals(0L, count("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE pkey = 33"));

    database.callAdmin("recording", procedure, 33L, "f-ok", "increment", failure, 7L, "alice", fence, now + 60_000);
    assertEquals(1L, count("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE pkey = 33 AND "
        + "request_hash = 7 AND caller = 'alice'"));
    database.callAdmin("recording", procedure, 33L, "f-null", "increment", failure, null, null, 0L, 0L);
    assertEquals(1L, count("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE pkey = 33 AND "
        + "invocation_id = 'f-null' AND request_hash IS NULL AND caller IS NULL"));
    long twice = database.callAdmin("recording", procedure, 33L, "f-ok", "increment", failure, 7L, "alice", 0L, 0L)
        .getResults()[0].asScalarLong();
    assertEquals(org.apiary.runtime.procedure.RecordFailure.ALREADY_RECORDED, twice, "the first record stands");
    database.callAdmin("cleaning up", "@AdHoc", "DELETE FROM " + SystemSchema.RECORDED_INTEGER + " WHERE pkey = 33");
  }
}

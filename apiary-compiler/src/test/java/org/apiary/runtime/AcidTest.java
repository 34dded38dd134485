package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.FunctionFailedException;
import org.apiary.testapp.Transfer;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@DatabaseTest
class AcidTest {
  private TestDatabase db;
  private FunctionInvoker invoker;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database;
    db.clear();
    invoker = db.invoker();
  }

  @Test
  void functionThatWritesThenThrowsLeavesNoTraceAndReportsItsMessage() {
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> invoker.call("writeThenFail", 5L));
    assertEquals("writeThenFail", e.functionName());
    assertEquals("java.lang.IllegalStateException", e.errorType());
    assertEquals("refusing counter 5 after writing it", e.errorMessage());
    long rows = db.database().callAdmin("count", "@AdHoc", "SELECT COUNT(*) FROM counters WHERE k = 5")
        .getResults()[0].asScalarLong();
    assertEquals(0, rows);
  }

  @Test
  void eightThreadsIncrementingOneKeyEndAtExactlyEightThousand() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        done.add(pool.submit(() -> {
          for (int i = 0; i < 1_000; i++) {
            invoker.call("increment", 77L, 1L);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(8_000L, invoker.call("readCounter", 77L).value(Long.class));
  }

  @Test
  void globalTransferBetweenPartitionsIsNeverSeenHalfDone() throws Exception {
    long[] keys = keysOnDifferentPartitions();
    long a = keys[0];
    long b = keys[1];
    invoker.call("deposit", a, 1_000L);
    invoker.call("deposit", b, 1_000L);

    AtomicBoolean stop = new AtomicBoolean();
    List<String> violations = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(1);
    try {
      Future<Integer> reader = pool.submit(() -> {
        int reads = 0;
        while (!stop.get()) {
          List<Long> balances = balances();
          if (balances.size() != 2 || balances.get(0) + balances.get(1) != 2_000) {
            synchronized (violations) {
              violations.add("saw balances " + balances);
            }
          }
          reads++;
        }
        return reads;
      });
      for (int i = 0; i < 300; i++) {
        long amount = 1 + (i % 7);
        invoker.callGlobal("transfer", i % 2 == 0 ? new Transfer.Request(a, b, amount) : new Transfer.Request(b, a, amount));
      }
      stop.set(true);
      assertTrue(reader.get(60, TimeUnit.SECONDS) > 0, "the reader never ran");
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
    assertEquals(List.of(), violations);
    assertEquals(2_000L, balances().stream().mapToLong(Long::longValue).sum());
  }

  @Test
  void failedGlobalFunctionRollsBackEveryPartition() {
    long[] keys = keysOnDifferentPartitions();
    invoker.call("deposit", keys[0], 10L);
    invoker.call("deposit", keys[1], 10L);
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> invoker.callGlobal("transfer", new Transfer.Request(keys[0], keys[1], 11)));
    assertEquals("insufficient funds in account " + keys[0], e.errorMessage());
    assertEquals(List.of(10L, 10L), balances());
  }

  private List<Long> balances() {
    List<?> raw = invoker.callGlobal("balances").value(List.class);
    return raw.stream().map(n -> ((Number) n).longValue()).toList();
  }

  /** Two keys that VoltDB places on different partitions (it hashes every integer type alike). */
  private long[] keysOnDifferentPartitions() {
    var t = db.database().callAdmin("partition keys", "@GetPartitionKeys", "INTEGER").getResults()[0];
    List<Long> keys = new ArrayList<>();
    while (t.advanceRow()) {
      keys.add(t.getLong("PARTITION_KEY"));
    }
    assertTrue(keys.size() >= 2, "the test database must have at least 2 partitions, has " + keys.size());
    return new long[] {keys.get(0), keys.get(1)};
  }
}

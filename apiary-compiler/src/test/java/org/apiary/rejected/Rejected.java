package org.apiary.rejected;

import org.apiary.GlobalFunction;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Functions the compiler must reject, one reason each. */
public final class Rejected {
  private Rejected() {}

  /** A local function writing a replicated table. */
  public static class WritesReplicated extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");
    static final Statement SET_RATE = Statement.of("INSERT INTO rates (currency, rate) VALUES (?, ?)");

    @Override
    protected void run() {}
  }

  /** A local function reaching a partitioned table through a column that is not its partition column. */
  public static class OtherColumn extends LocalFunction<Long> {
    static final Statement BY_CUSTOMER = Statement.of("SELECT order_id FROM orders WHERE customer = ?");

    @Override
    protected void run() {}
  }

  /** SQL that does not parse. */
  public static class SyntaxError extends LocalFunction<Long> {
    static final Statement BAD = Statement.of("SELEC v FROM counters WHERE k = ?");

    @Override
    protected void run() {}
  }

  /** An unknown table. */
  public static class UnknownTable extends LocalFunction<Long> {
    static final Statement BAD = Statement.of("SELECT v FROM no_such_table WHERE k = ?");

    @Override
    protected void run() {}
  }

  /** An unknown column. */
  public static class UnknownColumn extends LocalFunction<Long> {
    static final Statement BAD = Statement.of("SELECT no_such_column FROM counters WHERE k = ?");

    @Override
    protected void run() {}
  }

  /** A String partition key for a BIGINT partition column. */
  public static class WrongKeyType extends LocalFunction<String> {
    static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");

    @Override
    protected void run() {}
  }

  /** A partition column compared to a constant instead of the key. */
  public static class ConstantKey extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = 7");

    @Override
    protected void run() {}
  }

  /** A statement field that is not static. */
  public static class NotStatic extends LocalFunction<Long> {
    final Statement get = Statement.of("SELECT v FROM counters WHERE k = ?");

    @Override
    protected void run() {}
  }

  /** No public constructor. */
  public static class NoConstructor extends GlobalFunction {
    private NoConstructor() {}

    @Override
    protected void run() {}
  }

  /** A local function reaching no partitioned table. */
  /** Reads only a replicated table, keyed by a type no partitioned table is partitioned by. */
  public static class OnlyReplicated extends LocalFunction<Short> {
    static final Statement RATES = Statement.of("SELECT rate FROM rates WHERE currency = ?");

    @Override
    protected void run() {}
  }
}

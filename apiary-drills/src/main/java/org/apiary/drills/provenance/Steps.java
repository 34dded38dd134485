package org.apiary.drills.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;

/** Runs one segment of a {@link Plan} as one batch of statements; shared by the drill's functions. */
final class Steps {
  /** The statements of the function running the segment; a read-only function passes {@code null} writes. */
  record Statements(Statement select, Statement insert, Statement update, Statement delete) {}

  private Steps() {}

  /** The plan a function received, on the source edge if it runs first, else on {@code next}. */
  static String plan(List<String> fromSource, List<String> fromNext) {
    List<String> all = new ArrayList<>(fromSource);
    all.addAll(fromNext);
    if (all.size() != 1) {
      throw new IllegalArgumentException("expected one plan, received " + all.size());
    }
    return all.get(0);
  }

  /**
   * Runs the operations of {@code segment} in one batch, in order, through the function's {@code queueSQL} and
   * {@code executeSQL}.
   *
   * @return the rows read, as {@link Plan#readToken} joined by commas
   * @throws IllegalStateException if a write changed other than exactly one row: the caller's idea of the data is
   *     wrong (the drill then reports it), so the transaction is rolled back
   */
  static String run(Plan.Segment segment, BiConsumer<Statement, Object[]> queueSql,
                    Supplier<List<QueryResult>> executeSql, Statements s) {
    for (Plan.Op op : segment.ops()) {
      switch (op.kind()) {
        case READ -> queueSql.accept(s.select(), new Object[] {op.p(), op.k()});
        case INSERT -> queueSql.accept(need(s.insert()), new Object[] {op.p(), op.k(), segment.tag(), op.v()});
        case UPDATE -> queueSql.accept(need(s.update()), new Object[] {segment.tag(), op.v(), op.p(), op.k()});
        case DELETE -> queueSql.accept(need(s.delete()), new Object[] {op.p(), op.k()});
      }
    }
    if (segment.ops().isEmpty()) {
      return "";
    }
    List<QueryResult> results = executeSql.get();
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < results.size(); i++) {
      Plan.Op op = segment.ops().get(i);
      QueryResult r = results.get(i);
      if (op.kind() == Plan.Kind.READ) {
        Row row = r.firstRow().orElse(null);
        tokens.add(Plan.readToken(op.p(), op.k(), row == null ? null : row.getString("tag"),
            row == null ? null : row.getLong("v")));
      } else if (r.modifiedRowCount() != 1) {
        throw new IllegalStateException("model mismatch: " + op + " changed " + r.modifiedRowCount()
            + " rows where the plan expects exactly 1");
      }
    }
    return String.join(",", tokens);
  }

  private static Statement need(Statement s) {
    if (s == null) {
      throw new IllegalArgumentException("this function only reads; its plan may hold R operations only");
    }
    return s;
  }
}

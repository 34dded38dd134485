package org.apiary.frontend.provenance;

import java.util.List;
import org.apiary.Application;
import org.apiary.GlobalFunction;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The provenance scenario: {@code stock} inserts an item and updates its quantity; {@code audit} reads the item
 * and deletes it. {@code stockThenFail} inserts, reads, then throws. For the identity and order of events:
 * {@code readItem} only reads an item (a read-only single-partition transaction), {@code setQty} updates one item
 * (single-partition), {@code setQtyEverywhere} updates items on every partition and {@code stockRange} inserts a
 * range of items (both multi-partition); {@code setTwo}, {@code readTwo} and {@code readThenSetTwo} update, read, or
 * read and then update two named items, given as one list (multi-partition).
 */
public final class ItemsApp {
  public static final String SCHEMA = """
      CREATE TABLE items (id BIGINT NOT NULL, name VARCHAR(32) NOT NULL, qty BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE items ON COLUMN id;
      """;

  public static final Graph LIFECYCLE = Graph.named("itemLifecycle")
      .addLocalFunction("stock", Stock.class)
      .addLocalFunction("audit", Audit.class)
      .addEdge(Graph.SOURCE, "stock", "source", String.class)
      .addEdge("stock", "audit", "stocked")
      .addEdge("audit", Graph.SINK, "sink");

  public static final Graph FAILING = Graph.named("stockThenFail")
      .addLocalFunction("stockThenFail", StockThenFail.class)
      .addEdge(Graph.SOURCE, "stockThenFail", "source", String.class);

  public static final Graph READ = Graph.named("readItem")
      .addLocalFunction("readItem", ReadItem.class)
      .addEdge(Graph.SOURCE, "readItem", "source", String.class)
      .addEdge("readItem", Graph.SINK, "sink");

  public static final Graph SET_QTY = Graph.named("setQty")
      .addLocalFunction("setQty", SetQty.class)
      .addEdge(Graph.SOURCE, "setQty", "source", Long.class);

  public static final Graph SET_QTY_EVERYWHERE = Graph.named("setQtyEverywhere")
      .addGlobalFunction("setQtyEverywhere", SetQtyEverywhere.class)
      .addEdge(Graph.SOURCE, "setQtyEverywhere", "source", List.class);

  public static final Graph STOCK_RANGE = Graph.named("stockRange")
      .addGlobalFunction("stockRange", StockRange.class)
      .addEdge(Graph.SOURCE, "stockRange", "source", List.class);

  public static final Graph SET_TWO = Graph.named("setTwo")
      .addGlobalFunction("setTwo", SetTwo.class)
      .addEdge(Graph.SOURCE, "setTwo", "source", List.class);

  public static final Graph READ_TWO = Graph.named("readTwo")
      .addGlobalFunction("readTwo", ReadTwo.class)
      .addEdge(Graph.SOURCE, "readTwo", "source", List.class)
      .addEdge("readTwo", Graph.SINK, "sink");

  public static final Graph READ_THEN_SET_TWO = Graph.named("readThenSetTwo")
      .addGlobalFunction("readThenSetTwo", ReadThenSetTwo.class)
      .addEdge(Graph.SOURCE, "readThenSetTwo", "source", List.class);

  public static final Application APP = Application.of(SCHEMA, LIFECYCLE, FAILING, READ, SET_QTY,
      SET_QTY_EVERYWHERE, STOCK_RANGE, SET_TWO, READ_TWO, READ_THEN_SET_TWO);

  private static boolean registered;

  private ItemsApp() {}

  /** Registers {@link #APP} once per test JVM (test classes share the database). */
  public static synchronized void registerOnce(org.apiary.database.ApiaryDatabase db) {
    if (!registered) {
      org.apiary.frontend.Registrar.register(db, APP);
      registered = true;
    }
  }

  /** Inserts item k named by the argument with quantity 1, then sets the quantity to 5. */
  public static class Stock extends LocalFunction<Long> {
    static final Statement INSERT = Statement.of("INSERT INTO items (id, name, qty) VALUES (?, ?, ?)");
    static final Statement SET_QTY = Statement.of("UPDATE items SET qty = ? WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(INSERT, partitionKey(), retrieveInput(SOURCE, String.class), 1L);
      executeSQL();
      queueSQL(SET_QTY, 5L, partitionKey());
      executeSQL();
      returnOutput(partitionKey(), "stocked", partitionKey());
    }
  }

  /** Reads item k, deletes it, returns what it read. */
  public static class Audit extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT name, qty FROM items WHERE id = ?");
    static final Statement DELETE = Statement.of("DELETE FROM items WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(GET, partitionKey());
      var row = executeSQL().get(0).rows().get(0);
      queueSQL(DELETE, partitionKey());
      executeSQL();
      returnOutput(List.of(row.getString("name"), row.getLong("qty")));
    }
  }

  /** Inserts item k, reads it back, then fails: nothing of it may appear in provenance. */
  public static class StockThenFail extends LocalFunction<Long> {
    static final Statement INSERT = Statement.of("INSERT INTO items (id, name, qty) VALUES (?, ?, ?)");
    static final Statement GET = Statement.of("SELECT name, qty FROM items WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(INSERT, partitionKey(), retrieveInput(SOURCE, String.class), 1L);
      queueSQL(GET, partitionKey());
      executeSQL();
      throw new IllegalStateException("stockThenFail fails after writing and reading item " + partitionKey());
    }
  }

  /** Reads item k and returns its quantity; only reads, so VoltDB runs it as a read-only transaction. */
  public static class ReadItem extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT name, qty FROM items WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(GET, partitionKey());
      returnOutput(executeSQL().get(0).rows().get(0).getLong("qty"));
    }
  }

  /** Sets the quantity of item k to the argument. */
  public static class SetQty extends LocalFunction<Long> {
    static final Statement SET = Statement.of("UPDATE items SET qty = ? WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(SET, retrieveInput(SOURCE, Long.class), partitionKey());
      executeSQL();
    }
  }

  /** Sets the quantity of the items with IDs from the first to the second argument (exclusive) to the third. */
  public static class SetQtyEverywhere extends GlobalFunction {
    static final Statement SET = Statement.of("UPDATE items SET qty = ? WHERE id >= ? AND id < ?");

    @Override
    protected void run() {
      List<Long> args = retrieveInputs(SOURCE, Long.class);
      queueSQL(SET, args.get(2), args.get(0), args.get(1));
      executeSQL();
    }
  }

  /** Inserts the items with IDs from the first to the second argument (exclusive), quantity 1. */
  public static class StockRange extends GlobalFunction {
    static final Statement INSERT = Statement.of("INSERT INTO items (id, name, qty) VALUES (?, ?, ?)");

    @Override
    protected void run() {
      List<Long> args = retrieveInputs(SOURCE, Long.class);
      for (long id = args.get(0); id < args.get(1); id++) {
        queueSQL(INSERT, id, "item" + id, 1L);
      }
      executeSQL();
    }
  }

  /** Sets the quantity of the two items named by the first two arguments to the third, one statement each. */
  public static class SetTwo extends GlobalFunction {
    static final Statement SET = Statement.of("UPDATE items SET qty = ? WHERE id = ?");

    @Override
    protected void run() {
      List<Long> args = longs(retrieveInput(SOURCE, List.class));
      queueSQL(SET, args.get(2), args.get(0));
      queueSQL(SET, args.get(2), args.get(1));
      executeSQL();
    }
  }

  /** Reads the two items named by the arguments and returns the first one's quantity. */
  public static class ReadTwo extends GlobalFunction {
    static final Statement GET = Statement.of("SELECT qty FROM items WHERE id = ?");

    @Override
    protected void run() {
      List<Long> args = longs(retrieveInput(SOURCE, List.class));
      queueSQL(GET, args.get(0));
      queueSQL(GET, args.get(1));
      returnOutput(executeSQL().get(0).rows().get(0).getLong("qty"));
    }
  }

  /** Reads the two items named by the first two arguments, then sets their quantity to the third. */
  public static class ReadThenSetTwo extends GlobalFunction {
    static final Statement GET = Statement.of("SELECT qty FROM items WHERE id = ?");
    static final Statement SET = Statement.of("UPDATE items SET qty = ? WHERE id = ?");

    @Override
    protected void run() {
      List<Long> args = longs(retrieveInput(SOURCE, List.class));
      queueSQL(GET, args.get(0));
      queueSQL(GET, args.get(1));
      executeSQL();
      queueSQL(SET, args.get(2), args.get(0));
      queueSQL(SET, args.get(2), args.get(1));
      executeSQL();
    }
  }

  /** The numbers of a list input (JSON gives integers or longs). */
  private static List<Long> longs(List<?> values) {
    return values.stream().map(v -> ((Number) v).longValue()).toList();
  }
}

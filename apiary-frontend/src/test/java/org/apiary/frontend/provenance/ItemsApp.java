package org.apiary.frontend.provenance;

import java.util.List;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The provenance scenario: {@code stock} inserts an item and updates its quantity; {@code audit} reads the item
 * and deletes it. {@code stockThenFail} inserts, reads, then throws.
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

  public static final Application APP = Application.of(SCHEMA, LIFECYCLE, FAILING);

  private ItemsApp() {}

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
}

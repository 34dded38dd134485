package org.apiary.cli.edges;

import org.apiary.AccessPolicy;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** The application of {@code InvokeRoughEdgesTest}: a record argument, a plain insert, a policy, no argument. */
public final class EdgesApp {
  /** Its table. */
  public static final String SCHEMA = """
      CREATE TABLE edge_items (owner BIGINT NOT NULL, product BIGINT NOT NULL, quantity BIGINT NOT NULL,
        PRIMARY KEY (owner, product));
      PARTITION TABLE edge_items ON COLUMN owner;
      """;

  /** A nested record. */
  public record Note(String text, long priority) {}

  /** The record argument of {@code edge_add}. */
  public record Item(long product, long quantity, Note note) {}

  /** Inserts an item for the key (a second insert of the same product is a constraint violation). */
  public static class AddItem extends LocalFunction<Long> {
    static final Statement INSERT = Statement.of("INSERT INTO edge_items (owner, product, quantity) VALUES (?, ?, ?)");

    @Override
    protected void run() {
      Item item = retrieveInput(SOURCE, Item.class);
      queueSQL(INSERT, partitionKey(), item.product(), item.quantity());
      executeSQL();
      returnOutput(item.quantity());
    }
  }

  /** Counts the key's items; takes no argument. */
  public static class CountItems extends LocalFunction<Long> {
    static final Statement COUNT = Statement.of("SELECT COUNT(*) AS n FROM edge_items WHERE owner = ?");

    @Override
    protected void run() {
      queueSQL(COUNT, partitionKey());
      returnOutput(executeSQL().get(0).rows().get(0).getLong("n"));
    }
  }

  /** The application. */
  public static final Application APP = Application.of(SCHEMA,
      Graph.named("edge_add").addLocalFunction("addItem", AddItem.class)
          .addEdge(Graph.SOURCE, "addItem", "source", Item.class).addEdge("addItem", Graph.SINK, "sink"),
      Graph.ofFunction("edge_count", CountItems.class),
      Graph.named("edge_audited").addLocalFunction("countAudited", CountItems.class)
          .addEdge(Graph.SOURCE, "countAudited", "source").addEdge("countAudited", Graph.SINK, "sink")
          .withAccess(AccessPolicy.purposes("audit")));

  private EdgesApp() {}
}

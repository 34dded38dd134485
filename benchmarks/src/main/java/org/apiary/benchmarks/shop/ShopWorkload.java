package org.apiary.benchmarks.shop;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.benchmarks.rpc.ServiceDefinition;
import org.apiary.benchmarks.workload.DataLoader;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/**
 * Shop (after Google's Online Boutique; paper Table 1): browse a catalog page 80% (1 function, 1 query, 8 rows),
 * update a cart 10% (1 function, 2 queries), check out 10% (3 functions: cart contents, place order, ship; 5
 * queries). Checkouts mostly come from customers who recently updated their cart, as shoppers do.
 */
public final class ShopWorkload implements Workload {
  static final int CATEGORIES = 100;
  static final int ITEMS_PER_CATEGORY = 100;
  static final int PAGE = 8;

  static final String SCHEMA = """
      CREATE TABLE shop_items (item_id BIGINT NOT NULL, category BIGINT NOT NULL, name VARCHAR(64) NOT NULL,
        description VARCHAR(256) NOT NULL, price_cents BIGINT NOT NULL, PRIMARY KEY (item_id));
      CREATE INDEX shop_items_by_category ON shop_items (category, item_id);
      CREATE TABLE shop_carts (customer_id BIGINT NOT NULL, item_id BIGINT NOT NULL, quantity BIGINT NOT NULL,
        PRIMARY KEY (customer_id, item_id));
      PARTITION TABLE shop_carts ON COLUMN customer_id;
      CREATE TABLE shop_orders (customer_id BIGINT NOT NULL, order_id BIGINT NOT NULL, total_cents BIGINT NOT NULL,
        items BIGINT NOT NULL, status VARCHAR(16) NOT NULL, tracking VARCHAR(32), PRIMARY KEY (customer_id, order_id));
      PARTITION TABLE shop_orders ON COLUMN customer_id;
      """;

  public static final Graph BROWSE = Graph.named("browse").addLocalFunction("browse", Browse.class)
      .addEdge(Graph.SOURCE, "browse", ApiaryFunction.SOURCE, Long.class)
      .addEdge("browse", Graph.SINK, ApiaryFunction.SINK);

  public static final Graph CART_UPDATE = Graph.named("cartUpdate").addLocalFunction("cartUpdate", CartUpdate.class)
      .addEdge(Graph.SOURCE, "cartUpdate", ApiaryFunction.SOURCE, Long.class)
      .addEdge("cartUpdate", Graph.SINK, ApiaryFunction.SINK);

  /** source -> cartContents -> placeOrder -> shipOrder -> sink (an empty cart goes straight to the sink). */
  public static final Graph CHECKOUT = Graph.named("checkout")
      .addLocalFunction("cartContents", CartContents.class)
      .addLocalFunction("placeOrder", PlaceOrder.class)
      .addLocalFunction("shipOrder", ShipOrder.class)
      .addEdge(Graph.SOURCE, "cartContents", ApiaryFunction.SOURCE, Long.class)
      .addEdge("cartContents", "placeOrder", "cart")
      .addEdge("cartContents", Graph.SINK, ApiaryFunction.SINK)
      .addEdge("placeOrder", "shipOrder", "order", Long.class)
      .addEdge("shipOrder", Graph.SINK, "receipt");

  private volatile int customers = 100_000;
  private final ConcurrentLinkedQueue<Long> recentCarts = new ConcurrentLinkedQueue<>();

  @Override
  public String name() {
    return "shop";
  }

  @Override
  public Application application() {
    return Application.of(SCHEMA, BROWSE, CART_UPDATE, CHECKOUT);
  }

  @Override
  public List<String> operations() {
    return List.of("browse", "cartUpdate", "checkout");
  }

  @Override
  public List<String> writtenTables() {
    return List.of("shop_carts", "shop_orders");
  }

  @Override
  public void load(ApiaryDatabase db, Scale scale) throws InterruptedException {
    customers = scale == Scale.QUICK ? 5_000 : 100_000;
    DataLoader loader = new DataLoader(db);
    SplittableRandom random = new SplittableRandom(7);
    for (long c = 0; c < CATEGORIES; c++) {
      for (long i = 0; i < ITEMS_PER_CATEGORY; i++) {
        long item = c * ITEMS_PER_CATEGORY + i;
        loader.insert("shop_items", item, c, "item " + item, "a fine item of category " + c,
            100L + random.nextInt(10_000));
      }
    }
    for (long c = 0; c < customers; c++) {
      loader.insert("shop_carts", c, (long) random.nextInt(CATEGORIES * ITEMS_PER_CATEGORY), 1L);
    }
    loader.finish();
  }

  @Override
  public Request next(RandomGenerator random) {
    int op = random.nextInt(100);
    long customer = random.nextInt(customers);
    if (op < 80) {
      long category = random.nextInt(CATEGORIES);
      long from = category * ITEMS_PER_CATEGORY + (long) random.nextInt(ITEMS_PER_CATEGORY / PAGE) * PAGE;
      return new Request(0, "browse", customer, category, from);
    }
    if (op < 90) {
      if (recentCarts.size() < 10_000) {
        recentCarts.add(customer);
      }
      return new Request(1, "cartUpdate", customer, (long) random.nextInt(CATEGORIES * ITEMS_PER_CATEGORY),
          1L + random.nextInt(3));
    }
    Long recent = recentCarts.poll();
    return new Request(2, "checkout", recent != null ? recent : customer, recent != null ? recent : customer);
  }

  @Override
  public List<Double> fixedLoads(Scale scale) {
    return scale == Scale.QUICK ? List.of(500.0) : List.of(1_000.0, 5_000.0);
  }

  @Override
  public String rpcProcedures() {
    return """
        CREATE PROCEDURE rpc_shop_browse AS SELECT item_id, name, description, price_cents FROM shop_items
          WHERE category = ? AND item_id >= ? ORDER BY item_id LIMIT 8;
        CREATE PROCEDURE rpc_shop_item AS SELECT item_id, price_cents FROM shop_items WHERE item_id = ?;
        CREATE PROCEDURE rpc_shop_cart_put PARTITION ON TABLE shop_carts COLUMN customer_id PARAMETER 0
          AS UPSERT INTO shop_carts (customer_id, item_id, quantity) VALUES (?, ?, ?);
        CREATE PROCEDURE rpc_shop_cart_get PARTITION ON TABLE shop_carts COLUMN customer_id PARAMETER 0
          AS SELECT c.customer_id, c.item_id, c.quantity, i.price_cents FROM shop_carts c, shop_items i
             WHERE c.customer_id = ? AND i.item_id = c.item_id;
        CREATE PROCEDURE rpc_shop_cart_empty PARTITION ON TABLE shop_carts COLUMN customer_id PARAMETER 0
          AS DELETE FROM shop_carts WHERE customer_id = ?;
        CREATE PROCEDURE rpc_shop_order_put PARTITION ON TABLE shop_orders COLUMN customer_id PARAMETER 0
          AS INSERT INTO shop_orders (customer_id, order_id, total_cents, items, status) VALUES (?, ?, ?, ?, 'PLACED');
        CREATE PROCEDURE rpc_shop_ship PARTITION ON TABLE shop_orders COLUMN customer_id PARAMETER 1
          AS UPDATE shop_orders SET status = 'SHIPPED', tracking = ? WHERE customer_id = ? AND order_id = ?;
        CREATE PROCEDURE rpc_shop_order_get PARTITION ON TABLE shop_orders COLUMN customer_id PARAMETER 0
          AS SELECT customer_id, order_id, total_cents, items, status, tracking FROM shop_orders
             WHERE customer_id = ? AND order_id = ?;
        """;
  }

  /** Online Boutique's services that these operations touch: frontend, catalog, cart, checkout, payment, shipping. */
  @Override
  public List<ServiceDefinition> rpcServices() {
    return List.of(
        new ServiceDefinition(ServiceDefinition.FRONTEND, Map.of(
            "browse", (ctx, a) -> ctx.call("catalog", "page", a.get(1).asLong(), a.get(2).asLong()),
            "cartUpdate", (ctx, a) -> ctx.call("cart", "update", a.get(0).asLong(), a.get(1).asLong(), a.get(2).asLong()),
            "checkout", (ctx, a) -> ctx.call("checkout", "checkout", a.get(0).asLong()))),
        new ServiceDefinition("catalog", Map.of("page", (ctx, a) -> {
          VoltTable t = ctx.query("rpc_shop_browse", a.get(0).asLong(), a.get(1).asLong());
          List<Browse.Item> page = new ArrayList<>();
          while (t.advanceRow()) {
            page.add(new Browse.Item(t.getLong("item_id"), t.getString("name"), t.getString("description"),
                t.getLong("price_cents")));
          }
          return page;
        })),
        new ServiceDefinition("cart", Map.of(
            "update", (ctx, a) -> {
              if (ctx.query("rpc_shop_item", a.get(1).asLong()).getRowCount() == 0) {
                throw new IllegalArgumentException("no item " + a.get(1).asLong());
              }
              ctx.query("rpc_shop_cart_put", a.get(0).asLong(), a.get(1).asLong(), a.get(2).asLong());
              return a.get(2).asLong();
            },
            "get", (ctx, a) -> {
              VoltTable t = ctx.query("rpc_shop_cart_get", a.get(0).asLong());
              List<CartContents.CartLine> lines = new ArrayList<>();
              while (t.advanceRow()) {
                lines.add(new CartContents.CartLine(t.getLong("item_id"), t.getLong("quantity"),
                    t.getLong("price_cents")));
              }
              return lines;
            },
            "empty", (ctx, a) -> ctx.query("rpc_shop_cart_empty", a.get(0).asLong()).asScalarLong())),
        new ServiceDefinition("checkout", Map.of("checkout", (ctx, a) -> {
          long customer = a.get(0).asLong();
          JsonNode lines = ctx.call("cart", "get", customer);
          if (lines.isEmpty()) {
            return "empty cart";
          }
          long order = ctx.call("payment", "charge", customer, lines).asLong();
          ctx.call("cart", "empty", customer);
          return ctx.call("shipping", "ship", customer, order);
        })),
        new ServiceDefinition("payment", Map.of("charge", (ctx, a) -> {
          long total = 0;
          long items = 0;
          for (JsonNode l : a.get(1)) {
            total += l.get("quantity").asLong() * l.get("priceCents").asLong();
            items += l.get("quantity").asLong();
          }
          long order = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
          ctx.query("rpc_shop_order_put", a.get(0).asLong(), order, total, items);
          return order;
        })),
        new ServiceDefinition("shipping", Map.of("ship", (ctx, a) -> {
          long customer = a.get(0).asLong();
          long order = a.get(1).asLong();
          String tracking = "TRK-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
          ctx.query("rpc_shop_ship", tracking, customer, order);
          VoltTable t = ctx.query("rpc_shop_order_get", customer, order);
          if (!t.advanceRow()) {
            throw new IllegalStateException("order " + order + " vanished");
          }
          return new ShipOrder.Receipt(order, t.getLong("total_cents"), t.getLong("items"), t.getString("status"),
              t.getString("tracking"));
        })));
  }
}

package com.example.shop;

import org.apiary.Application;
import java.time.Duration;
import org.apiary.Graph;
import org.apiary.Queue;
import org.apiary.Schedule;
import org.apiary.StepPolicy;

/**
 * A small shop, declared for {@code apiary deploy} by the jar's manifest ({@code Apiary-Application:
 * com.example.shop.ShopApp}): products partitioned by ID, carts partitioned by customer, six graphs, a queue and a
 * schedule.
 *
 * <ul>
 *   <li>{@code add_product} (key: product ID, argument: {@link NewProduct}) adds or replaces a product; returns it.</li>
 *   <li>{@code add_to_cart} (key: customer, argument: {@link CartItem}) puts a product into the cart; returns the
 *       quantity now in the cart.</li>
 *   <li>{@code checkout} (key: customer, argument: an order reference the client chooses): {@link Checkout} empties the cart and sends each line to its product's
 *       partition, where {@link Reserve} runs once per product, in parallel (a fan-out), taking the items from stock
 *       and returning the line's price; the client gets one {@link Line} per product. A product short of stock fails
 *       its {@code reserve} (rolled back) and the invocation, with "out of stock" in the message; lines reserved
 *       before that stay reserved (each function is its own transaction).</li>
 *   <li>{@code pay} (no key, argument: {@link Payment}): {@link Charge}, an external step, takes the payment from a
 *       payment service over HTTP (in the frontend, with its idempotency key); {@link RecordPayment} settles the
 *       customer's cart (its lines are paid for, so it is emptied) and returns the receipt. The step's answer is
 *       recorded before {@code recordPayment} runs, so no recovery charges twice. (Two tables only: VoltDB Community
 *       Edition captures the writes of at most two tables for provenance.) {@code recordPayment} also puts the
 *       receipt email on the {@link #RECEIPTS} queue in its transaction.</li>
 *   <li>{@code send_receipt} (no key, argument: the paid {@link Payment}), run from the {@link #RECEIPTS}
 *       queue: {@link SendReceipt}, an external step, emails the receipt.</li>
 *   <li>{@code restock} (no key, argument: the tick's time), run by the {@link #NIGHTLY_RESTOCK} schedule:
 *       {@link Restock}, a global function, restocks every product low on stock.</li>
 * </ul>
 */
public final class ShopApp {
  /** The tables. */
  public static final String SCHEMA = """
      CREATE TABLE products (id BIGINT NOT NULL, name VARCHAR(64) NOT NULL, price BIGINT NOT NULL,
        stock BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE products ON COLUMN id;
      CREATE TABLE carts (customer BIGINT NOT NULL, product BIGINT NOT NULL, quantity BIGINT NOT NULL,
        PRIMARY KEY (customer, product));
      PARTITION TABLE carts ON COLUMN customer;
      """;

  /** Receipt emails: at most 4 sent at once, 50 a second, across every frontend. */
  public static final Queue RECEIPTS = Queue.named("receipts").concurrency(4).rate(50, Duration.ofSeconds(1));

  /** Every night at 02:00 UTC, {@code restock}; after an outage, only the latest missed night runs. */
  public static final Schedule NIGHTLY_RESTOCK = Schedule.cron("nightly_restock", "0 2 * * *", "restock");

  private ShopApp() {}

  /** The application: the schema and its graphs. */
  public static Application application() {
    Graph addProduct = Graph.named("add_product")
        .addLocalFunction("addProduct", AddProduct.class)
        .addEdge(Graph.SOURCE, "addProduct", "source", NewProduct.class)
        .addEdge("addProduct", Graph.SINK, "sink");
    Graph addToCart = Graph.named("add_to_cart")
        .addLocalFunction("addToCart", AddToCart.class)
        .addEdge(Graph.SOURCE, "addToCart", "source", CartItem.class)
        .addEdge("addToCart", Graph.SINK, "sink");
    Graph checkout = Graph.named("checkout")
        .addLocalFunction("checkout", Checkout.class)
        .addLocalFunction("reserve", Reserve.class)
        .addEdge(Graph.SOURCE, "checkout", "source", String.class)
        .addEdge("checkout", "reserve", "lines")
        .addEdge("reserve", Graph.SINK, "sink");
    Graph pay = Graph.named("pay")
        .addExternalFunction("charge", Charge.class, StepPolicy.defaults().withTimeout(Duration.ofSeconds(10)))
        .addLocalFunction("recordPayment", RecordPayment.class)
        .addEdge(Graph.SOURCE, "charge", "source", Payment.class)
        .addEdge("charge", "recordPayment", "paid")
        .addEdge("recordPayment", Graph.SINK, "sink");
    Graph sendReceipt = Graph.named("send_receipt")
        .addExternalFunction("sendReceipt", SendReceipt.class, StepPolicy.defaults().withTimeout(Duration.ofSeconds(10)))
        .addEdge(Graph.SOURCE, "sendReceipt", "source", Payment.class)
        .addEdge("sendReceipt", Graph.SINK, "sink");
    Graph restock = Graph.named("restock")
        .addGlobalFunction("restock", Restock.class)
        .addEdge(Graph.SOURCE, "restock", "source", String.class)
        .addEdge("restock", Graph.SINK, "sink");
    return Application.of(SCHEMA, addProduct, addToCart, checkout, pay, sendReceipt, restock)
        .withQueues(RECEIPTS).withSchedules(NIGHTLY_RESTOCK);
  }
}

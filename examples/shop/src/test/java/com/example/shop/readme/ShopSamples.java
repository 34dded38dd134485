package com.example.shop.readme;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.shop.AddToCart;
import com.example.shop.CartItem;
import com.example.shop.Checkout;
import com.example.shop.Line;
import com.example.shop.Reserve;
import java.util.List;
import org.apiary.Application;
import com.example.shop.Payment;
import java.time.Duration;
import org.apiary.Graph;
import org.apiary.Queue;
import org.apiary.Schedule;
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.client.ApiaryClient;
import org.apiary.testing.ApiaryExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/programming-guide.md, "Your own application", against this project's own functions. The sample's classes
 * are inner classes here, so that Surefire (which skips nested classes) never runs this ShopTest: it is compiled,
 * not run (the project's own ShopTest runs). apiary-testing's DocSamplesTest finds that section's text in this file.
 */
@SuppressWarnings("unused")
final class ShopSamples {
  static final String SCHEMA = """
      CREATE TABLE products (id BIGINT NOT NULL, name VARCHAR(64) NOT NULL, price BIGINT NOT NULL,
        stock BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE products ON COLUMN id;
      CREATE TABLE carts (customer BIGINT NOT NULL, product BIGINT NOT NULL, quantity BIGINT NOT NULL,
        PRIMARY KEY (customer, product));
      PARTITION TABLE carts ON COLUMN customer;
      """;

  private ShopSamples() {}

  /** README.md, the lines on work that starts itself (compiled, never run). */
  static InvocationHandle workThatStartsItself(Graph pay, Graph sendReceipt, Graph restock, ApiaryClient client,
                                               Payment payment) {
Queue receipts = Queue.named("receipts").concurrency(4).rate(50, Duration.ofSeconds(1));  // across every frontend
Schedule nightly = Schedule.cron("nightly_restock", "0 2 * * *", "restock");          // each tick runs once, UTC
Application app = Application.of(SCHEMA, pay, sendReceipt, restock).withQueues(receipts).withSchedules(nightly);
// in recordPayment, atomically with its writes: enqueue("receipts", "receipt-" + order, "send_receipt", null, p);
InvocationHandle h = client.enqueue("receipts", "receipt-7", InvocationRequest.of("send_receipt", null, payment));
    return h;
  }

public final class ShopApp {
  public static Application application() {
    Graph addToCart = Graph.named("add_to_cart")            // and add_product: see examples/shop
        .addLocalFunction("addToCart", AddToCart.class)
        .addEdge(Graph.SOURCE, "addToCart", "source", CartItem.class)
        .addEdge("addToCart", Graph.SINK, "sink");
    return Application.of(SCHEMA, addToCart, Graph.named("checkout")
        .addLocalFunction("checkout", Checkout.class)       // empties the cart, one output per line, keyed by product
        .addLocalFunction("reserve", Reserve.class)         // runs once per product, on its partition
        .addEdge(Graph.SOURCE, "checkout", "source", String.class)
        .addEdge("checkout", "reserve", "lines")
        .addEdge("reserve", Graph.SINK, "sink"));
  }
}

class ShopTest {
  @RegisterExtension
  static final ApiaryExtension apiary = ApiaryExtension.forApplication(ShopApp.class);

  @Test
  void checkout(ApiaryClient client) {                      // or apiary.client(), apiary.invoke(...)
    client.invoke("add_to_cart", 42L, new CartItem(1, 2));
    List<Line> lines = client.invoke("checkout", 42L, "order-1").values(Line.class);
    assertTrue(apiary.query("SELECT * FROM carts WHERE customer = ?", 42L).isEmpty());
  }
}
}

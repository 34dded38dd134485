package com.example.shop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.testing.ApiaryExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The shop in an embedded Apiary: one VoltDB for the class, so each test uses its own customers and products. */
class ShopTest {
  @RegisterExtension
  static final ApiaryExtension apiary = ApiaryExtension.forApplication(ShopApp.class);

  @Test
  void checkoutFansOutToEachProductAndEmptiesTheCart(ApiaryClient client) {
    client.invoke("add_product", 1L, new NewProduct("tea", 300, 10));
    client.invoke("add_product", 2L, new NewProduct("mug", 850, 5));
    client.invoke("add_product", 3L, new NewProduct("spoon", 120, 50));
    assertEquals(2L, client.invoke("add_to_cart", 42L, new CartItem(1, 2)).value(Long.class));
    assertEquals(3L, client.invoke("add_to_cart", 42L, new CartItem(1, 1)).value(Long.class), "quantities add up");
    client.invoke("add_to_cart", 42L, new CartItem(2, 1));
    client.invoke("add_to_cart", 42L, new CartItem(3, 4));

    List<Line> lines = client.invoke("checkout", 42L, "order-1").values(Line.class);

    assertEquals(3, lines.size(), "one line per product, from each product's partition: " + lines);
    assertEquals(900 + 850 + 480, lines.stream().mapToLong(Line::total).sum());
    assertTrue(lines.stream().allMatch(l -> l.order().equals("order-1") && l.customer() == 42L), lines.toString());
    assertEquals(7L, stock(1L));
    assertEquals(4L, stock(2L));
    assertEquals(46L, stock(3L));
    assertTrue(apiary.query("SELECT * FROM carts WHERE customer = ?", 42L).isEmpty(), "the cart is empty");
  }

  @Test
  void aProductShortOfStockFailsTheCheckoutAndKeepsItsStock() {
    apiary.invoke("add_product", 10L, new NewProduct("rare tea", 5000, 1));
    apiary.invoke("add_to_cart", 43L, new CartItem(10, 2));

    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> apiary.invoke("checkout", 43L, "order-2"));

    assertTrue(e.getMessage().contains("out of stock: product 10"), e.getMessage());
    assertEquals(1L, stock(10L), "the failed reserve rolled back");
  }

  @Test
  void anEmptyCartCannotCheckOut() {
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> apiary.invoke("checkout", 44L, "order-3"));
    assertTrue(e.getMessage().contains("is empty"), e.getMessage());
  }

  /** Reads the database directly, outside any function. */
  private static long stock(long product) {
    return apiary.query("SELECT stock FROM products WHERE id = ?", product).rows().get(0).getLong("stock");
  }

  @Test
  void payChargesThePaymentServiceOnceAndRecordsTheReceipt() throws Exception {
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    java.util.List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.sun.net.httpserver.HttpServer service = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 8);
    java.util.List<String> mails = new java.util.concurrent.CopyOnWriteArrayList<>();
    service.createContext("/mail", exchange -> {
      mails.add(exchange.getRequestHeaders().getFirst("Idempotency-Key") + " "
          + new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    service.createContext("/pay", exchange -> {
      int n = calls.incrementAndGet();
      keys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
      exchange.getRequestBody().readAllBytes();
      byte[] receipt = ("receipt-" + n).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, receipt.length);
      exchange.getResponseBody().write(receipt);
      exchange.close();
    });
    service.start();
    try {
      apiary.invoke("add_to_cart", 45L, new CartItem(10, 2));
      assertFalse(apiary.query("SELECT * FROM carts WHERE customer = ?", 45L).isEmpty());
      String url = "http://127.0.0.1:" + service.getAddress().getPort() + "/pay";
      org.apiary.client.InvocationRequest request = org.apiary.client.InvocationRequest.of("pay", null,
          new Payment(url, 45L, "order-4", 1_250, null));

      assertEquals("receipt-1", apiary.client().invoke(request).value(String.class));
      assertEquals("receipt-1", apiary.client().invoke(request).value(String.class), "the same ID, the same answer");

      assertEquals(1, calls.get(), "the payment service was charged once");
      assertEquals(List.of(request.id() + "#charge"), keys);
      assertTrue(apiary.query("SELECT * FROM carts WHERE customer = ?", 45L).isEmpty(), "the paid cart is settled");

      // recordPayment enqueued the receipt email in its transaction; the receipts queue sends it once.
      long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
      while (mails.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      Thread.sleep(300); // a second email, if any, would come within the queue's next claims
      assertEquals(1, mails.size(), "one receipt email: " + mails);
      assertTrue(mails.get(0).endsWith("customer 45: order order-4 paid, receipt receipt-1"), mails.get(0));
    } finally {
      service.stop(0);
    }
  }

  @Test
  void theNightlyRestockScheduleRestocksLowProductsWhenItTicks() {
    apiary.invoke("add_product", 20L, new NewProduct("kettle", 4000, 3));
    apiary.invoke("add_product", 21L, new NewProduct("filter", 90, 40));
    assertEquals("0 2 * * *", apiary.query("SELECT cron FROM APIARY_SCHEDULES WHERE name = 'nightly_restock'")
        .rows().get(0).getString("cron"), "declared with the application");

    long restocked = apiary.apiary().trigger("nightly_restock").await(java.time.Duration.ofSeconds(30)).value(Long.class);

    assertTrue(restocked >= 1, "at least the kettle: " + restocked);
    assertEquals(Restock.LEVEL, stock(20L));
    assertEquals(40L, stock(21L), "well stocked, untouched");
  }
}

package com.example.shop;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}

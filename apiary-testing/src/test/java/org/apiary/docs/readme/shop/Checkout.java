package org.apiary.docs.readme.shop;

import org.apiary.LocalFunction;
import org.apiary.Row;
import org.apiary.Statement;

/**
 * Empties a customer's cart and sends each line to the partition of its product, where {@link Reserve} takes it out
 * of stock: the fan-out. An empty cart is refused.
 */
public class Checkout extends LocalFunction<Long> {
  static final Statement CART = Statement.of(
      "SELECT product, quantity FROM carts WHERE customer = ? ORDER BY product");
  static final Statement EMPTY = Statement.of("DELETE FROM carts WHERE customer = ?");

  @Override
  protected void run() {
    String order = retrieveInput(SOURCE, String.class);
    queueSQL(CART, partitionKey());
    queueSQL(EMPTY, partitionKey());
    var cart = executeSQL().get(0);
    if (cart.isEmpty()) {
      throw new IllegalStateException("the cart of customer " + partitionKey() + " is empty");
    }
    for (Row r : cart) {
      long product = r.getLong("product");
      returnOutput(new Line(order, partitionKey(), product, r.getLong("quantity"), 0), "lines", product);
    }
  }
}

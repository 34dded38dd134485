package org.apiary.docs.readme.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds items to a customer's cart (the customer is the partition key); returns the quantity now in the cart. */
public class AddToCart extends LocalFunction<Long> {
  static final Statement ADD = Statement.of(
      "UPDATE carts SET quantity = quantity + ? WHERE customer = ? AND product = ?");
  static final Statement INSERT = Statement.of("INSERT INTO carts (customer, product, quantity) VALUES (?, ?, ?)");
  static final Statement GET = Statement.of("SELECT quantity FROM carts WHERE customer = ? AND product = ?");

  @Override
  protected void run() {
    CartItem item = retrieveInput(SOURCE, CartItem.class);
    if (item.quantity() <= 0) {
      throw new IllegalArgumentException("a quantity must be positive, got " + item.quantity());
    }
    queueSQL(ADD, item.quantity(), partitionKey(), item.product());
    if (executeSQL().get(0).modifiedRowCount() == 0) {
      queueSQL(INSERT, partitionKey(), item.product(), item.quantity());
      executeSQL();
    }
    queueSQL(GET, partitionKey(), item.product());
    returnOutput(executeSQL().get(0).rows().get(0).getLong("quantity"));
  }
}

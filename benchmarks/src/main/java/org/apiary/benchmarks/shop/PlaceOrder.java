package org.apiary.benchmarks.shop;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Checkout, step 2: records the order (the payment) and empties the cart. */
public class PlaceOrder extends LocalFunction<Long> {
  static final Statement INSERT = Statement.of("INSERT INTO shop_orders (customer_id, order_id, total_cents, items, "
      + "status) VALUES (?, ?, ?, ?, 'PLACED')");
  static final Statement EMPTY = Statement.of("DELETE FROM shop_carts WHERE customer_id = ?");

  @Override
  protected void run() {
    List<CartContents.CartLine> lines = List.of(retrieveInput("cart", CartContents.CartLine[].class));
    long total = 0;
    long items = 0;
    for (CartContents.CartLine l : lines) {
      total += l.quantity() * l.priceCents();
      items += l.quantity();
    }
    long order = uniqueId();
    queueSQL(INSERT, partitionKey(), order, total, items);
    queueSQL(EMPTY, partitionKey());
    // left queued: runs when run() returns, in the transaction's last batch
    if (ManualLog.enabled()) {
      ManualLog.event(functionName(), order, "insert", "shop_orders", List.of(partitionKey(), order), total);
      for (CartContents.CartLine l : lines) {
        ManualLog.event(functionName(), order, "delete", "shop_carts", List.of(partitionKey(), l.itemId()), null);
      }
    }
    returnOutput(order, "order", partitionKey());
  }
}

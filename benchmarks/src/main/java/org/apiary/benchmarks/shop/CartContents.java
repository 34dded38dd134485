package org.apiary.benchmarks.shop;

import java.util.ArrayList;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Checkout, step 1: the customer's cart with current prices; an empty cart ends the checkout. */
public class CartContents extends LocalFunction<Long> {
  static final Statement CART = Statement.of("SELECT c.customer_id, c.item_id, c.quantity, i.price_cents "
      + "FROM shop_carts c, shop_items i WHERE c.customer_id = ? AND i.item_id = c.item_id");

  /** One line of a cart. */
  public record CartLine(long itemId, long quantity, long priceCents) {}

  @Override
  protected void run() {
    queueSQL(CART, partitionKey());
    QueryResult r = executeSQL().get(0);
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "shop_carts", "ITEM_ID", r);
    }
    List<CartLine> lines = new ArrayList<>();
    for (Row row : r) {
      lines.add(new CartLine(row.getLong("item_id"), row.getLong("quantity"), row.getLong("price_cents")));
    }
    if (lines.isEmpty()) {
      returnOutput("empty cart", SINK);
      return;
    }
    returnOutput(lines, "cart", partitionKey());
  }
}

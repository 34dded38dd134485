package org.apiary.benchmarks.shop;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Sets the quantity of an item in the customer's cart; the item must exist. Returns the quantity. */
public class CartUpdate extends LocalFunction<Long> {
  static final Statement ITEM = Statement.of("SELECT item_id, price_cents FROM shop_items WHERE item_id = ?");
  static final Statement PUT = Statement.of(
      "UPSERT INTO shop_carts (customer_id, item_id, quantity) VALUES (?, ?, ?)");

  @Override
  protected void run() {
    List<Long> args = retrieveInputs(SOURCE, Long.class);
    long item = args.get(0);
    long quantity = args.get(1);
    queueSQL(ITEM, item);
    QueryResult found = executeSQL().get(0);
    if (found.isEmpty()) {
      throw new IllegalArgumentException("no item " + item);
    }
    queueSQL(PUT, partitionKey(), item, quantity);
    // left queued: runs when run() returns, in the transaction's last batch
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "shop_items", "ITEM_ID", found);
      ManualLog.event(functionName(), uniqueId(), "upsert", "shop_carts", List.of(partitionKey(), item), quantity);
    }
    returnOutput(quantity);
  }
}

package org.apiary.benchmarks.shop;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Checkout, step 3: ships the order and returns the receipt. */
public class ShipOrder extends LocalFunction<Long> {
  static final Statement SHIP = Statement.of(
      "UPDATE shop_orders SET status = 'SHIPPED', tracking = ? WHERE customer_id = ? AND order_id = ?");
  static final Statement GET = Statement.of("SELECT customer_id, order_id, total_cents, items, status, tracking "
      + "FROM shop_orders WHERE customer_id = ? AND order_id = ?");

  /** What the customer gets back. */
  public record Receipt(long orderId, long totalCents, long items, String status, String tracking) {}

  @Override
  protected void run() {
    long order = retrieveInput("order", Long.class);
    String tracking = "TRK-" + Long.toHexString(uniqueId());
    queueSQL(SHIP, tracking, partitionKey(), order);
    queueSQL(GET, partitionKey(), order);
    QueryResult r = executeSQL().get(1);
    Row row = r.firstRow().orElseThrow(() -> new IllegalStateException("order " + order + " vanished"));
    if (ManualLog.enabled()) {
      ManualLog.event(functionName(), uniqueId(), "update", "shop_orders", List.of(partitionKey(), order), tracking);
      ManualLog.reads(functionName(), uniqueId(), "shop_orders", "ORDER_ID", r);
    }
    returnOutput(new Receipt(order, row.getLong("total_cents"), row.getLong("items"), row.getString("status"),
        row.getString("tracking")), "receipt");
  }
}

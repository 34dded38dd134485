package com.example.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Settles the customer's cart once its payment is taken (its lines are paid for: emptied) and, in the same
 * transaction, puts the receipt email on the {@code receipts} queue ({@code send_receipt}, deduplicated by order):
 * if the settling rolls back nothing is enqueued, and once it commits the email is sent exactly once. Returns the
 * receipt.
 */
public class RecordPayment extends LocalFunction<Long> {
  static final Statement SETTLE = Statement.of("DELETE FROM carts WHERE customer = ?");

  @Override
  protected void run() {
    Payment p = retrieveInput("paid", Payment.class);
    queueSQL(SETTLE, partitionKey());
    enqueue(ShopApp.RECEIPTS.name(), "receipt-" + p.order(), "send_receipt", null, p);
    returnOutput(p.receipt());
  }
}

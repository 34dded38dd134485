package com.example.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Settles the customer's cart once its payment is taken (its lines are paid for: emptied); returns the receipt. */
public class RecordPayment extends LocalFunction<Long> {
  static final Statement SETTLE = Statement.of("DELETE FROM carts WHERE customer = ?");

  @Override
  protected void run() {
    Payment p = retrieveInput("paid", Payment.class);
    queueSQL(SETTLE, partitionKey());
    returnOutput(p.receipt());
  }
}

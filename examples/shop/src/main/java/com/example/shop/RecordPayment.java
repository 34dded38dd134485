package com.example.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Stores a taken payment in the customer's partition; returns the receipt. */
public class RecordPayment extends LocalFunction<Long> {
  static final Statement INSERT = Statement.of(
      "INSERT INTO payments (customer, order_ref, amount, receipt) VALUES (?, ?, ?, ?)");

  @Override
  protected void run() {
    Payment p = retrieveInput("paid", Payment.class);
    queueSQL(INSERT, partitionKey(), p.order(), p.amount(), p.receipt());
    returnOutput(p.receipt());
  }
}

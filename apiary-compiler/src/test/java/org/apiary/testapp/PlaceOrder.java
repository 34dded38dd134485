package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Inserts an order; a second order with the same id violates the primary key. */
public class PlaceOrder extends LocalFunction<Long> {
  static final Statement INSERT = Statement.of("INSERT INTO orders (order_id, customer, amount) VALUES (?, ?, ?)");

  @Override
  protected void run() {
    queueSQL(INSERT, partitionKey(), retrieveInput(SOURCE, String.class), 1L);
    executeSQL();
  }
}

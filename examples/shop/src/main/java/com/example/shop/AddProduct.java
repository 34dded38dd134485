package com.example.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds or replaces a product, on the product's partition; returns the product as stored. */
public class AddProduct extends LocalFunction<Long> {
  static final Statement UPSERT = Statement.of("UPSERT INTO products (id, name, price, stock) VALUES (?, ?, ?, ?)");

  @Override
  protected void run() {
    NewProduct p = retrieveInput(SOURCE, NewProduct.class);
    if (p.price() < 0 || p.stock() < 0) {
      throw new IllegalArgumentException("price and stock must not be negative: " + p);
    }
    queueSQL(UPSERT, partitionKey(), p.name(), p.price(), p.stock());
    executeSQL();
    returnOutput(p);
  }
}

package com.example.shop;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/**
 * Run by the {@code nightly_restock} schedule (argument: the tick's time): every product with fewer than
 * {@link #LEVEL} in stock is restocked to {@link #LEVEL}, on every partition (a global function); returns how many
 * products it restocked.
 */
public class Restock extends GlobalFunction {
  /** The stock a restock brings a product back to. */
  public static final long LEVEL = 10;
  static final Statement LOW = Statement.of("SELECT COUNT(*) AS n FROM products WHERE stock < ?");
  static final Statement FILL = Statement.of("UPDATE products SET stock = ? WHERE stock < ?");

  @Override
  protected void run() {
    retrieveInput(SOURCE, String.class); // the tick's time, ISO-8601
    queueSQL(LOW, LEVEL);
    queueSQL(FILL, LEVEL, LEVEL);
    returnOutput(executeSQL().get(0).rows().get(0).getLong("n"));
  }
}

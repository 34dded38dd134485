package org.apiary.testapp;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/** Writes the replicated rates table: only a global function may. */
public class SetRate extends GlobalFunction {
  static final Statement PUT = Statement.of("UPSERT INTO rates (currency, rate) VALUES (?, ?)");

  /** The request. */
  public record Rate(String currency, double rate) {}

  @Override
  protected void run() {
    Rate r = retrieveInput(SOURCE, Rate.class);
    queueSQL(PUT, r.currency(), r.rate());
    returnOutput(executeSQL().get(0).modifiedRowCount());
  }
}

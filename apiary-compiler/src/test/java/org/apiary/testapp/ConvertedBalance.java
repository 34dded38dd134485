package org.apiary.testapp;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.ProvenanceLevel;
import org.apiary.QueryResult;
import org.apiary.Statement;

/** A local function that also reads the replicated rates table. */
public class ConvertedBalance extends LocalFunction<Long> {
  static final Statement BALANCE = Statement.of("SELECT balance FROM accounts WHERE id = ?");
  static final Statement RATE = Statement.of("SELECT rate FROM rates WHERE currency = ?");

  @Override
  protected void run() {
    String currency = retrieveInput(SOURCE, String.class);
    queueSQL(BALANCE, List.of(partitionKey()), ProvenanceLevel.READS_AND_WRITES);
    queueSQL(RATE, List.of(currency), ProvenanceLevel.NONE);
    List<QueryResult> r = executeSQL();
    double rate = r.get(1).firstRow().orElseThrow(() -> new IllegalArgumentException("no rate for " + currency))
        .getDouble("rate");
    returnOutput(r.get(0).rows().get(0).getLong("balance") * rate);
  }
}

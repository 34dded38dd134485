package org.apiary.docs.readme;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;

// README.md, "One function", and docs/programming-guide.md, "Writing functions".
public class Deposit extends LocalFunction<Long> {            // runs on the partition of its Long key
  static final Statement ADD = Statement.of("UPDATE accounts SET balance = balance + ? WHERE id = ?");
  static final Statement GET = Statement.of("SELECT balance FROM accounts WHERE id = ?");

  @Override
  protected void run() {
    long amount = retrieveInput(SOURCE, Long.class);
    if (amount <= 0) throw new IllegalArgumentException("a deposit must be positive");  // aborts, rolls back
    queueSQL(ADD, amount, partitionKey());
    queueSQL(GET, partitionKey());
    List<QueryResult> r = executeSQL();                       // one batch, one round trip
    returnOutput(r.get(1).rows().get(0).getLong("balance"));  // to the caller (the sink edge)
  }
}

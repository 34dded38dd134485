package org.apiary.examples.bank;

import java.util.List;
import org.apiary.GlobalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;

/** Moves money between two accounts, wherever they live, as one transaction. */
public class Transfer extends GlobalFunction {
  static final Statement GET = Statement.of("SELECT balance FROM accounts WHERE id = ?");
  static final Statement ADD = Statement.of("UPDATE accounts SET balance = balance + ? WHERE id = ?");

  /** A transfer request. */
  public record Request(long from, long to, long amount) {}

  @Override
  protected void run() {
    Request r = retrieveInput(SOURCE, Request.class);
    queueSQL(ADD, -r.amount(), r.from());
    queueSQL(ADD, r.amount(), r.to());
    queueSQL(GET, r.from());
    List<QueryResult> results = executeSQL();
    if (results.get(0).modifiedRowCount() != 1 || results.get(1).modifiedRowCount() != 1) {
      throw new IllegalArgumentException("both accounts must exist");
    }
    long left = results.get(2).rows().get(0).getLong("balance");
    if (left < 0) {
      throw new IllegalStateException("insufficient funds: account " + r.from() + " would be at " + left);
    }
    returnOutput(left);
  }
}

package org.apiary.testapp;

import java.util.List;
import org.apiary.GlobalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;

/** Moves an amount from one account to another, which may live on another partition. */
public class Transfer extends GlobalFunction {
  static final Statement BALANCE = Statement.of("SELECT balance FROM accounts WHERE id = ?");
  static final Statement SET = Statement.of("UPDATE accounts SET balance = ? WHERE id = ?");

  /** The request. */
  public record Request(long from, long to, long amount) {}

  @Override
  protected void run() {
    Request r = retrieveInput(SOURCE, Request.class);
    queueSQL(BALANCE, r.from());
    queueSQL(BALANCE, r.to());
    List<QueryResult> balances = executeSQL();
    long from = balances.get(0).rows().get(0).getLong("balance");
    long to = balances.get(1).rows().get(0).getLong("balance");
    if (from < r.amount()) {
      throw new IllegalArgumentException("insufficient funds in account " + r.from());
    }
    queueSQL(SET, from - r.amount(), r.from());
    queueSQL(SET, to + r.amount(), r.to());
    executeSQL();
    returnOutput(r.amount());
  }
}

package org.apiary.examples.bank;

import java.util.List;
import org.apiary.ApiaryFunction;
import org.apiary.Graph;
import org.apiary.compiler.FunctionDefinition;

/** A small bank: accounts partitioned by id, deposits as local functions, transfers as a global function. */
public final class BankApp {
  /** The application schema. */
  public static final String SCHEMA = """
      CREATE TABLE accounts (id BIGINT NOT NULL, owner VARCHAR(64) NOT NULL, balance BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE accounts ON COLUMN id;
      CREATE TABLE branches (code VARCHAR(8) NOT NULL, name VARCHAR(64) NOT NULL, PRIMARY KEY (code));
      """;

  /** The application's functions. */
  public static final List<FunctionDefinition> FUNCTIONS = List.of(
      FunctionDefinition.of("openAccount", OpenAccount.class),
      FunctionDefinition.of("deposit", Deposit.class),
      FunctionDefinition.of("balance", Balance.class),
      FunctionDefinition.of("transfer", Transfer.class),
      FunctionDefinition.of("totalDeposits", TotalDeposits.class));

  /**
   * Payday, a graph: {@code payroll} (global) reads every account and sends the amount to each account's partition,
   * where {@code deposit} runs once per account, in parallel; the new balances return to the client.
   */
  public static final Graph PAYDAY = Graph.named("payday")
      .addGlobalFunction("payroll", Payroll.class)
      .addLocalFunction("deposit", Deposit.class)
      .addEdge(Graph.SOURCE, "payroll", "amount", Long.class)
      .addEdge("payroll", "deposit", ApiaryFunction.SOURCE)
      .addEdge("deposit", Graph.SINK, ApiaryFunction.SINK);

  private BankApp() {}
}

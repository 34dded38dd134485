package org.apiary.testapp;

import java.util.List;
import org.apiary.compiler.FunctionDefinition;

/** The application the compiler and runtime tests deploy: its schema and functions. */
public final class TestApp {
  public static final String SCHEMA = """
      CREATE TABLE counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE counters ON COLUMN k;
      CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE accounts ON COLUMN id;
      CREATE TABLE orders (order_id BIGINT NOT NULL, customer VARCHAR(32) NOT NULL, amount BIGINT, PRIMARY KEY (order_id));
      PARTITION TABLE orders ON COLUMN order_id;
      CREATE TABLE rates (currency VARCHAR(8) NOT NULL, rate FLOAT NOT NULL, PRIMARY KEY (currency));
      CREATE INDEX orders_by_customer ON orders (customer);
      """;

  public static final List<FunctionDefinition> FUNCTIONS = List.of(
      FunctionDefinition.of("increment", Increment.class),
      FunctionDefinition.of("readCounter", ReadCounter.class),
      FunctionDefinition.of("writeThenFail", WriteThenFail.class),
      FunctionDefinition.of("deposit", Deposit.class),
      FunctionDefinition.of("transfer", Transfer.class),
      FunctionDefinition.of("balances", Balances.class),
      FunctionDefinition.of("setRate", SetRate.class),
      FunctionDefinition.of("convertedBalance", ConvertedBalance.class),
      FunctionDefinition.of("undeclaredStatement", UndeclaredStatement.class),
      FunctionDefinition.of("readScaled", ReadScaledV1.class),
      FunctionDefinition.of("placeOrder", PlaceOrder.class),
      FunctionDefinition.of("createCounter", CreateCounter.class));

  /** The functions built to record their outputs (exactly-once), as a graph registration would decide. */
  public static final java.util.Set<String> RECORDABLE = java.util.Set.of("increment", "transfer", "createCounter");

  private TestApp() {}
}

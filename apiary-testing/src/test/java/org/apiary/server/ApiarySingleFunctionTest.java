package org.apiary.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apiary.Application;
import org.apiary.FunctionFailedException;
import org.apiary.Graph;
import org.apiary.database.DatabaseConfig;
import org.apiary.examples.bank.BankApp;
import org.apiary.examples.bank.Deposit;
import org.apiary.examples.bank.Transfer;
import org.junit.jupiter.api.Test;

/** A single function deployed and called as a graph of its own through the front door ({@link ApiaryTest}'s twin). */
class ApiarySingleFunctionTest {
  @Test
  void aSingleFunctionIsDeployedAndCalledAsAGraphOfItsOwn() {
    try (Apiary apiary = Apiary.start(DatabaseConfig.embedded(2))) {
      apiary.deploy(Application.of(BankApp.SCHEMA, Graph.ofFunction("deposit", Deposit.class),
          Graph.ofFunction("transfer", Transfer.class)));
      apiary.query("INSERT INTO accounts VALUES (?, ?, ?)", 7L, "eve", 10L);
      assertEquals(15L, apiary.invoke("deposit", 7L, 5L).value(Long.class));
      FunctionFailedException refused = assertThrows(FunctionFailedException.class,
          () -> apiary.invoke("deposit", 7L, -1L));
      assertEquals("deposit", refused.functionName());
      assertEquals(15L, apiary.query("SELECT balance FROM accounts WHERE id = ?", 7L).rows().get(0).getLong("balance"));
    }
  }
}

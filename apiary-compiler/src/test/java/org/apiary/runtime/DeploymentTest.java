package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.testapp.ReadScaledV1;
import org.apiary.testapp.ReadScaledV2;
import org.apiary.testapp.SetRate;
import org.apiary.testapp.TestApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@DatabaseTest
class DeploymentTest {
  private TestDatabase db;
  private FunctionInvoker invoker;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database;
    db.clear();
    invoker = db.invoker();
  }

  @Test
  void redeployedFunctionRunsItsNewSqlWithoutRestart() {
    invoker.call("increment", 3L, 4L);
    assertEquals(4L, invoker.call("readScaled", 3L).value(Long.class));
    try {
      Deployer.deploy(db.database(), FunctionCompiler.compile(TestApp.SCHEMA,
          List.of(FunctionDefinition.of("readScaled", ReadScaledV2.class))));
      assertEquals(40L, invoker.call("readScaled", 3L).value(Long.class));
    } finally {
      Deployer.deploy(db.database(), FunctionCompiler.compile(TestApp.SCHEMA,
          List.of(FunctionDefinition.of("readScaled", ReadScaledV1.class))));
    }
    assertEquals(4L, invoker.call("readScaled", 3L).value(Long.class));
  }

  @Test
  void localFunctionReadsReplicatedTable() {
    assertEquals(1L, invoker.callGlobal("setRate", new SetRate.Rate("EUR", 0.5)).value(Long.class));
    invoker.call("deposit", 9L, 300L);
    assertEquals(150.0, invoker.call("convertedBalance", 9L, "EUR").value(Double.class));
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> invoker.call("convertedBalance", 9L, "XXX"));
    assertEquals("no rate for XXX", e.errorMessage());
  }

  @Test
  void functionCatalogIsReadBackFromTheDatabase() {
    FunctionCatalog catalog = FunctionCatalog.load(db.database());
    assertEquals(TestApp.FUNCTIONS.size(), catalog.entries().size());
    FunctionCatalog.Entry inc = catalog.get("increment").orElseThrow();
    assertEquals("COUNTERS", inc.partitionTable());
    assertTrue(inc.hasWrites());
  }

  @Test
  void unknownFunctionIsRefusedByName() {
    InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> invoker.call("noSuchFunction", 1L));
    assertTrue(e.getMessage().contains("unknown function 'noSuchFunction'"), e.getMessage());
  }

  @Test
  void partitionKeyOfWrongTypeIsRefused() {
    InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> invoker.call("increment", "seven", 1L));
    assertTrue(e.getMessage().contains("has type String") && e.getMessage().contains("Long"), e.getMessage());
    InvalidRequestException g = assertThrows(InvalidRequestException.class, () -> invoker.call("transfer", 1L));
    assertTrue(g.getMessage().contains("global"), g.getMessage());
  }

  @Test
  void argumentOfWrongTypeFailsNamingTheEdgeAndType() {
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> invoker.call("increment", 1L, "lots"));
    assertTrue(e.errorMessage().contains("input on edge 'source' of function 'increment'")
        && e.errorMessage().contains("must be an integer"), e.errorMessage());
    assertEquals(0L, invoker.call("readCounter", 1L).value(Long.class));
  }

  @Test
  void statementNotDeclaredStaticallyFailsClearly() {
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> invoker.call("undeclaredStatement", 1L));
    assertTrue(e.errorMessage().contains("is not declared as a static Statement field"), e.errorMessage());
  }

  @Test
  void aBrokenConstraintAbortsWithOneLineNamingTheTableAndConstraint() {
    invoker.call("placeOrder", 12L, "ada");
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> invoker.call("placeOrder", 12L, "bob"));
    assertEquals("ConstraintViolation", e.errorType());
    assertTrue(e.errorMessage().contains("unique key (the primary key or a unique index) of table ORDERS") && !e.errorMessage().contains("\n"), e.errorMessage());
    long orders = db.database().callAdmin("count", "@AdHoc", "SELECT COUNT(*) FROM orders WHERE customer = 'bob'")
        .getResults()[0].asScalarLong();
    assertEquals(0L, orders);
  }
}

package org.apiary.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import org.apiary.ApiaryFunction;
import org.apiary.RegistrationException;
import org.apiary.internal.PartitionKeyType;
import org.apiary.rejected.Rejected;
import org.apiary.testapp.ExchangeRate;
import org.apiary.testapp.TestApp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FunctionCompilerTest {
  private static CompiledApplication app;

  @BeforeAll
  static void compileTestApp() {
    app = FunctionCompiler.compile(TestApp.SCHEMA, TestApp.FUNCTIONS);
  }

  private static String rejection(Class<? extends ApiaryFunction> cls) {
    RegistrationException e = assertThrows(RegistrationException.class,
        () -> FunctionCompiler.compile(TestApp.SCHEMA, List.of(FunctionDefinition.of("bad", cls))));
    assertEquals(1, e.problems().size(), e.getMessage());
    String problem = e.problems().get(0);
    assertTrue(problem.startsWith("function 'bad'"), problem);
    return problem;
  }

  @Test
  void localFunctionIsBoundToItsPartitionedTableAndColumn() {
    CompiledFunction inc = app.function("increment").orElseThrow();
    assertEquals(FunctionKind.LOCAL, inc.kind());
    assertEquals("COUNTERS", inc.partitionTable());
    assertEquals("K", inc.partitionColumn());
    assertEquals(PartitionKeyType.BIGINT, inc.keyType());
    assertEquals("CREATE PROCEDURE ALLOW apiary_frontend PARTITION ON TABLE COUNTERS COLUMN K PARAMETER 0 FROM CLASS "
        + "apiary.generated.increment",
        inc.createProcedureDdl());
  }

  @Test
  void statementsAreClassifiedAsReadsOrWrites() {
    CompiledFunction inc = app.function("increment").orElseThrow();
    assertEquals(List.of("GET", "PUT"), inc.statements().stream().map(CompiledStatement::field).toList());
    assertTrue(inc.statements().get(0).readOnly());
    assertFalse(inc.statements().get(1).readOnly());
    assertTrue(inc.hasWrites());
    assertFalse(app.function("readCounter").orElseThrow().hasWrites());
    assertFalse(app.function("balances").orElseThrow().hasWrites());
    assertTrue(app.function("transfer").orElseThrow().hasWrites());
  }

  @Test
  void globalFunctionHasNoPartitionBinding() {
    CompiledFunction transfer = app.function("transfer").orElseThrow();
    assertEquals(FunctionKind.GLOBAL, transfer.kind());
    assertNull(transfer.partitionTable());
    assertNull(transfer.keyType());
    assertEquals("CREATE PROCEDURE ALLOW apiary_frontend FROM CLASS apiary.generated.transfer",
        transfer.createProcedureDdl());
  }

  @Test
  void localFunctionMayReadReplicatedTable() {
    CompiledFunction f = app.function("convertedBalance").orElseThrow();
    assertEquals("ACCOUNTS", f.partitionTable());
    CompiledStatement rate = f.statements().stream().filter(s -> s.field().equals("RATE")).findFirst().orElseThrow();
    assertEquals(-1, rate.partitionParameter());
  }

  @Test
  void jarHoldsGeneratedProceduresAndFunctionClasses() throws IOException {
    Set<String> names = new HashSet<>();
    try (JarInputStream jar = new JarInputStream(new ByteArrayInputStream(app.jar()))) {
      for (JarEntry e = jar.getNextJarEntry(); e != null; e = jar.getNextJarEntry()) {
        names.add(e.getName());
      }
    }
    assertTrue(names.contains("apiary/generated/increment.class"), names.toString());
    assertTrue(names.contains("org/apiary/testapp/Increment.class"), names.toString());
    assertTrue(names.contains("org/apiary/testapp/Transfer$Request.class"), names.toString());
    assertFalse(names.stream().anyMatch(n -> n.startsWith("org/apiary/rejected/")), names.toString());
  }

  @Test
  void rejectsLocalWriteToReplicatedTable() {
    String p = rejection(Rejected.WritesReplicated.class);
    assertTrue(p.contains("statement SET_RATE") && p.contains("writes a replicated table"), p);
  }

  @Test
  void rejectsPartitionedTableReachedThroughAnotherColumn() {
    String p = rejection(Rejected.OtherColumn.class);
    assertTrue(p.contains("statement BY_CUSTOMER") && p.contains("without an equality on its partition column"), p);
  }

  @Test
  void rejectsSyntaxError() {
    String p = rejection(Rejected.SyntaxError.class);
    assertTrue(p.contains("statement BAD") && p.contains("unexpected token: SELEC"), p);
  }

  @Test
  void rejectsUnknownTable() {
    String p = rejection(Rejected.UnknownTable.class);
    assertTrue(p.contains("statement BAD") && p.contains("object not found: NO_SUCH_TABLE"), p);
  }

  @Test
  void rejectsUnknownColumn() {
    String p = rejection(Rejected.UnknownColumn.class);
    assertTrue(p.contains("statement BAD") && p.contains("object not found: NO_SUCH_COLUMN"), p);
  }

  @Test
  void rejectsPartitionKeyOfWrongType() {
    String p = rejection(Rejected.WrongKeyType.class);
    assertTrue(p.contains("partition key type String") && p.contains("COUNTERS.K, a BIGINT column")
        && p.contains("LocalFunction<Long>"), p);
  }

  @Test
  void rejectsPartitionColumnComparedToConstant() {
    String p = rejection(Rejected.ConstantKey.class);
    assertTrue(p.contains("compared to the constant 7"), p);
  }

  @Test
  void rejectsNonStaticStatement() {
    String p = rejection(Rejected.NotStatic.class);
    assertTrue(p.contains("statement get") && p.contains("static final"), p);
  }

  @Test
  void rejectsClassWithoutPublicConstructor() {
    String p = rejection(Rejected.NoConstructor.class);
    assertTrue(p.contains("public no-argument constructor"), p);
  }

  @Test
  void rejectsLocalFunctionOnReplicatedTablesWhoseKeyTypeNoTableIsPartitionedBy() {
    String p = rejection(Rejected.OnlyReplicated.class);
    assertTrue(p.contains("reads only replicated tables") && p.contains("SMALLINT"), p);
  }

  @Test
  void routesLocalFunctionOnReplicatedTablesByAPartitionColumnOfItsKeyType() {
    CompiledApplication app = FunctionCompiler.compile(TestApp.SCHEMA,
        List.of(FunctionDefinition.of("rate", ExchangeRate.class)));
    CompiledFunction f = app.functions().get(0);
    assertEquals(FunctionKind.LOCAL, f.kind());
    assertEquals("ACCOUNTS", f.partitionTable());
    assertEquals("ID", f.partitionColumn());
  }

  @Test
  void reportsEveryProblemAtOnceAndRejectsDuplicatesAndBadNames() {
    RegistrationException e = assertThrows(RegistrationException.class, () -> FunctionCompiler.compile(TestApp.SCHEMA,
        List.of(FunctionDefinition.of("a", Rejected.SyntaxError.class), FunctionDefinition.of("b", Rejected.UnknownTable.class),
            FunctionDefinition.of("A", Rejected.UnknownTable.class), FunctionDefinition.of("class", Rejected.SyntaxError.class),
            FunctionDefinition.of("has space", Rejected.SyntaxError.class))));
    assertEquals(5, e.problems().size(), e.getMessage());
    assertTrue(e.problems().get(2).contains("registered twice"), e.getMessage());
    assertTrue(e.problems().get(3).contains("Java keyword"), e.getMessage());
  }

  @Test
  void rejectsSchemaThatDoesNotCompile() {
    RegistrationException e = assertThrows(RegistrationException.class,
        () -> FunctionCompiler.compile("CREATE TABLE t (a BIGINT NOT NULL); PARTITION TABLE no_such ON COLUMN a;",
            TestApp.FUNCTIONS));
    assertTrue(e.problems().get(0).startsWith("schema: Invalid PARTITION statement"), e.getMessage());
    assertTrue(e.getMessage().toUpperCase().contains("NO_SUCH"), e.getMessage());
  }
}

package org.apiary.compiler;

import java.util.List;
import org.apiary.internal.PartitionKeyType;

/**
 * A function that passed every check, with what the compiler learned about it.
 *
 * @param name the function's (and its stored procedure's) name
 * @param functionClass the user's class name
 * @param kind local or global
 * @param partitionTable for a local function, the partitioned table it is bound to; else {@code null}
 * @param partitionColumn for a local function, that table's partition column; else {@code null}
 * @param keyType for a local function, its partition key type; else {@code null}
 * @param statements every statement, in field-name order
 * @param procedureClass the generated procedure's class name
 * @param recordable whether the procedure was built to record its outputs for exactly-once (paper section 5.4)
 */
public record CompiledFunction(
    String name,
    String functionClass,
    FunctionKind kind,
    String partitionTable,
    String partitionColumn,
    PartitionKeyType keyType,
    List<CompiledStatement> statements,
    String procedureClass,
    boolean recordable) {

  public CompiledFunction {
    statements = List.copyOf(statements);
  }

  /** Whether any statement writes: such a function must be recorded for exactly-once (paper, Algorithm 1). */
  public boolean hasWrites() {
    return statements.stream().anyMatch(s -> !s.readOnly());
  }

  /** The same function, built to record its outputs or not. */
  public CompiledFunction withRecordable(boolean value) {
    return new CompiledFunction(name, functionClass, kind, partitionTable, partitionColumn, keyType, statements,
        procedureClass, value);
  }

  /**
   * The DDL that declares this function's stored procedure, callable by the frontends' VoltDB role
   * ({@code ALLOW} {@value org.apiary.database.DatabaseUsers#FRONTEND_ROLE}; the administrator may call every
   * procedure).
   */
  public String createProcedureDdl() {
    return createProcedureDdl(procedureClass);
  }

  /** {@link #createProcedureDdl()} with the procedure's code in class {@code cls} (a generated variant of its own). */
  String createProcedureDdl(String cls) {
    String allow = "CREATE PROCEDURE ALLOW " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE;
    return kind == FunctionKind.LOCAL
        ? allow + " PARTITION ON TABLE " + partitionTable + " COLUMN " + partitionColumn
            + " PARAMETER 0 FROM CLASS " + cls
        : allow + " FROM CLASS " + cls;
  }
}

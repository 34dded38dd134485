package org.apiary.compiler;

/**
 * What the planner established about one statement of a function.
 *
 * @param field the name of the static field that declares it
 * @param sql the SQL text
 * @param readOnly whether the statement only reads
 * @param partitionParameter the zero-based parameter that selects the partition of the partitioned table the
 *     statement touches, or -1 if it touches only replicated tables (or, in a global function, none is inferred)
 * @param partitionColumn {@code TABLE.COLUMN} of that partition column, or {@code null}
 * @param captureSql for a read whose result rows are table rows: the statement that also returns their primary
 *     keys (for read provenance); else {@code null}
 * @param captureKeys for {@code captureSql}: the added result columns, each {@code QUALIFIER.TABLE.COLUMN}, in order
 */
public record CompiledStatement(String field, String sql, boolean readOnly, int partitionParameter,
                                String partitionColumn, String captureSql, java.util.List<String> captureKeys) {
  public CompiledStatement {
    captureKeys = captureKeys == null ? java.util.List.of() : java.util.List.copyOf(captureKeys);
  }
}

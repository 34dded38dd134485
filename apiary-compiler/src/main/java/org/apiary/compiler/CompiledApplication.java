package org.apiary.compiler;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The output of {@link FunctionCompiler}: every function's facts and the jar of classes to load into VoltDB.
 *
 * @param functions the compiled functions, in registration order
 * @param jar the jar with the generated procedures and the application's function classes
 * @param schemaColumns the tables and views the application's schema defines, each with its columns, upper-case
 */
public record CompiledApplication(List<CompiledFunction> functions, byte[] jar,
                                  Map<String, java.util.Set<String>> schemaColumns) {
  public CompiledApplication {
    functions = List.copyOf(functions);
    Map<String, java.util.Set<String>> copy = new LinkedHashMap<>();
    schemaColumns.forEach((t, c) -> copy.put(t, java.util.Set.copyOf(c)));
    schemaColumns = java.util.Collections.unmodifiableMap(copy);
  }

  /** The tables and views the application's schema defines, upper-case. */
  public java.util.Set<String> schemaTables() {
    return schemaColumns.keySet();
  }

  /** The compiled function with this name, if there is one. */
  public Optional<CompiledFunction> function(String name) {
    return functions.stream().filter(f -> f.name().equals(name)).findFirst();
  }

  /** The functions by name. */
  public Map<String, CompiledFunction> byName() {
    Map<String, CompiledFunction> m = new LinkedHashMap<>();
    functions.forEach(f -> m.put(f.name(), f));
    return m;
  }
}

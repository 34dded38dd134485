package org.apiary.compiler;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import javax.lang.model.SourceVersion;
import org.apiary.ApiaryFunction;
import org.apiary.GlobalFunction;
import org.apiary.LocalFunction;
import org.apiary.RegistrationException;
import org.apiary.Statement;
import org.apiary.internal.PartitionKeyType;
import org.apiary.runtime.procedure.FunctionProcedure;
import org.voltdb.VoltProcedure;

/**
 * Turns function classes into VoltDB stored procedures (paper section 5.2).
 *
 * <p>For each function it collects the {@link Statement} fields, plans every statement against the schema with
 * VoltDB's planner, classifies it as read or write, and for a local function finds the partitioned table and
 * column it is bound to, checks that every statement stays on that one partition and that the declared partition
 * key type matches the column. Then it generates one procedure class per function and packages the jar.
 *
 * <p>All problems of all functions are reported together, each naming the function, the statement and the reason;
 * if there is any, nothing is produced.
 */
public final class FunctionCompiler {
  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,62}");

  private FunctionCompiler() {}

  /**
   * Compiles functions against an application schema.
   *
   * @param schemaDdl the application's DDL (tables, partitioning, indexes, views)
   * @param functions the functions to compile, names unique
   * @throws RegistrationException listing every problem found, if any
   */
  public static CompiledApplication compile(String schemaDdl, List<FunctionDefinition> functions) {
    return compile(schemaDdl, functions, compiled -> Set.of());
  }

  /**
   * Compiles functions and builds the procedures of those {@code recordable} picks so they can record their
   * outputs for exactly-once execution. The choice is made after every function is planned, since it depends on
   * which functions write.
   *
   * @param recordable given every planned function, the names of those whose procedures must be able to record
   * @throws RegistrationException listing every problem found, if any
   */
  public static CompiledApplication compile(String schemaDdl, List<FunctionDefinition> functions,
                                            java.util.function.Function<List<CompiledFunction>, Set<String>> recordable) {
    SchemaPlanner planner = SchemaPlanner.forSchema(schemaDdl);
    List<String> problems = new ArrayList<>();
    Set<String> names = new HashSet<>();
    List<CompiledFunction> compiled = new ArrayList<>();
    for (FunctionDefinition def : functions) {
      if (!names.add(def.name().toLowerCase(java.util.Locale.ROOT))) {
        problems.add("function '" + def.name() + "': registered twice (names are case-insensitive)");
        continue;
      }
      int before = problems.size();
      CompiledFunction f = compileOne(planner, def, problems);
      if (problems.size() == before && f != null) {
        compiled.add(f);
      }
    }
    if (!problems.isEmpty()) {
      throw new RegistrationException(problems);
    }
    Set<String> recorded = recordable.apply(List.copyOf(compiled));
    compiled.replaceAll(f -> f.withRecordable(recorded.contains(f.name())));
    return new CompiledApplication(compiled, packageJar(compiled, functions), planner.tables());
  }

  private static CompiledFunction compileOne(SchemaPlanner planner, FunctionDefinition def, List<String> problems) {
    String fn = "function '" + def.name() + "'";
    Class<? extends ApiaryFunction> cls = def.functionClass();
    if (!NAME.matcher(def.name()).matches() || SourceVersion.isKeyword(def.name())) {
      problems.add(fn + ": a function name must be a letter followed by up to 62 letters, digits or underscores, "
          + "and not a Java keyword");
      return null;
    }
    checkInstantiable(fn, cls, problems);
    FunctionKind kind;
    PartitionKeyType keyType = null;
    if (LocalFunction.class.isAssignableFrom(cls)) {
      kind = FunctionKind.LOCAL;
      Optional<Class<?>> declared = partitionKeyClass(cls);
      if (declared.isEmpty()) {
        problems.add(fn + " (" + cls.getName() + "): cannot tell its partition key type; extend LocalFunction<K> "
            + "with a concrete K such as Long or String");
        return null;
      }
      keyType = PartitionKeyType.forJavaType(declared.get()).orElse(null);
      if (keyType == null) {
        problems.add(fn + ": partition key type " + declared.get().getSimpleName() + " is not supported; use Long, "
            + "Integer, Short, Byte, String or byte[]");
        return null;
      }
    } else if (GlobalFunction.class.isAssignableFrom(cls)) {
      kind = FunctionKind.GLOBAL;
    } else {
      problems.add(fn + ": " + cls.getName() + " must extend LocalFunction or GlobalFunction");
      return null;
    }

    List<CompiledStatement> statements = new ArrayList<>();
    String boundColumn = null;
    String boundColumnType = null;
    for (Map.Entry<String, Statement> e : statementFields(fn, cls, problems).entrySet()) {
      String where = fn + ", statement " + e.getKey() + " (\"" + e.getValue().sql() + "\")";
      SchemaPlanner.Plan plan;
      try {
        plan = planner.plan(e.getValue().sql());
      } catch (IllegalArgumentException ex) {
        problems.add(where + ": " + ex.getMessage());
        continue;
      }
      int partitionParameter = -1;
      String partitionColumn = null;
      if (kind == FunctionKind.LOCAL) {
        if (plan.replicatedWrite()) {
          problems.add(where + ": writes a replicated table, which only a global function may do");
          continue;
        }
        if (plan.partitionedTables() > 0) {
          if (!plan.singlePartition() || plan.partitionColumn() == null) {
            problems.add(where + ": reaches a partitioned table without an equality on its partition column, so it "
                + "would see other partitions' rows; a local function must select its partition with "
                + "'<partition column> = ?'");
            continue;
          }
          if (plan.partitionParameter() < 0) {
            problems.add(where + ": its partition column " + plan.partitionColumn() + " is compared to the constant "
                + plan.constantPartitionValue() + ", not to a parameter carrying the partition key");
            continue;
          }
          partitionParameter = plan.partitionParameter();
          partitionColumn = plan.partitionColumn();
          if (boundColumn == null) {
            boundColumn = partitionColumn;
            boundColumnType = plan.partitionColumnType();
          } else if (!java.util.Objects.equals(boundColumnType, plan.partitionColumnType())) {
            problems.add(where + ": its partition column " + partitionColumn + " is " + plan.partitionColumnType()
                + " but the function is bound to " + boundColumn + " (" + boundColumnType + "); one partition key "
                + "cannot select both");
            continue;
          }
        }
      } else if (plan.singlePartition() && plan.partitionParameter() >= 0) {
        partitionColumn = plan.partitionColumn();
      }
      String captureSql = null;
      List<String> captureKeys = List.of();
      if (plan.readOnly()
          && ReadCapture.augment(e.getValue().sql(), planner.primaryKeys(), planner::plan) instanceof ReadCapture.Augmented a) {
        // (a read that cannot be captured, such as an aggregate, returns no table rows: nothing to record)
        captureSql = a.augmentedSql();
        captureKeys = a.keyColumns().stream().map(k -> k.qualifier() + "." + k.table() + "." + k.column()).toList();
      }
      statements.add(new CompiledStatement(e.getKey(), e.getValue().sql(), plan.readOnly(), partitionParameter,
          partitionColumn, captureSql, captureKeys));
    }

    String table = null;
    String column = null;
    if (kind == FunctionKind.LOCAL) {
      if (boundColumn == null) {
        // Only replicated tables: any partition can serve it, so it runs on its key's partition, routed by a
        // partitioned table whose partition column has the key's type.
        Optional<String> route = planner.partitionColumnOfType(keyType.columnType());
        if (route.isEmpty()) {
          if (problems.stream().noneMatch(p -> p.startsWith(fn))) {
            problems.add(fn + ": it reads only replicated tables and the schema has no partitioned table with a "
                + keyType.columnType() + " partition column to route its " + keyType.javaType().getSimpleName()
                + " key by; declare it a GlobalFunction");
          }
          return null;
        }
        boundColumn = route.get();
        boundColumnType = keyType.columnType();
      }
      int dot = boundColumn.indexOf('.');
      table = boundColumn.substring(0, dot);
      column = boundColumn.substring(dot + 1);
      if (!keyType.columnType().equals(boundColumnType)) {
        String expected = PartitionKeyType.forColumnType(boundColumnType).map(t -> t.javaType().getSimpleName())
            .orElse("(no supported Java type)");
        problems.add(fn + ": declares partition key type " + keyType.javaType().getSimpleName() + " but it is bound to "
            + boundColumn + ", a " + boundColumnType + " column; declare LocalFunction<" + expected + ">");
        return null;
      }
    }
    return new CompiledFunction(def.name(), cls.getName(), kind, table, column, keyType, statements,
        ProcedureSource.className(def.name()), false);
  }

  private static void checkInstantiable(String fn, Class<?> cls, List<String> problems) {
    if (Modifier.isAbstract(cls.getModifiers())) {
      problems.add(fn + ": " + cls.getName() + " is abstract");
    }
    for (Class<?> c = cls; c != null; c = c.getEnclosingClass()) {
      boolean innerClass = c.isMemberClass() && !Modifier.isStatic(c.getModifiers());
      if (!Modifier.isPublic(c.getModifiers()) || innerClass || c.isLocalClass() || c.isAnonymousClass()) {
        problems.add(fn + ": " + cls.getName() + " must be a public top-level or public static nested class");
        return;
      }
    }
    try {
      if (!Modifier.isPublic(cls.getConstructor().getModifiers())) {
        throw new NoSuchMethodException();
      }
    } catch (NoSuchMethodException e) {
      problems.add(fn + ": " + cls.getName() + " needs a public no-argument constructor");
    }
  }

  /** Static Statement fields of the class and its superclasses, by field name. */
  private static Map<String, Statement> statementFields(String fn, Class<?> cls, List<String> problems) {
    Map<String, Statement> byField = new LinkedHashMap<>();
    Set<String> seenSql = new HashSet<>();
    List<Field> fields = new ArrayList<>();
    for (Class<?> c = cls; c != null && c != LocalFunction.class && c != GlobalFunction.class; c = c.getSuperclass()) {
      fields.addAll(List.of(c.getDeclaredFields()));
    }
    fields.sort(Comparator.comparing(Field::getName));
    for (Field f : fields) {
      if (!Statement.class.isAssignableFrom(f.getType())) {
        continue;
      }
      if (!Modifier.isStatic(f.getModifiers()) || !Modifier.isFinal(f.getModifiers())) {
        problems.add(fn + ", statement " + f.getName() + ": must be declared static final, so it is fixed at compile time");
        continue;
      }
      try {
        f.setAccessible(true);
        Statement s = (Statement) f.get(null);
        if (s == null) {
          problems.add(fn + ", statement " + f.getName() + ": is null");
        } else if (seenSql.add(s.sql())) {
          byField.put(f.getName(), s);
        }
      } catch (IllegalAccessException | RuntimeException e) {
        problems.add(fn + ", statement " + f.getName() + ": cannot be read: " + e);
      }
    }
    return byField;
  }

  /** Resolves K of LocalFunction&lt;K&gt; through the class hierarchy. */
  static Optional<Class<?>> partitionKeyClass(Class<?> cls) {
    Map<TypeVariable<?>, Type> bindings = new HashMap<>();
    Class<?> c = cls;
    while (c != null && c != LocalFunction.class) {
      Type sup = c.getGenericSuperclass();
      if (sup instanceof ParameterizedType p) {
        Class<?> raw = (Class<?>) p.getRawType();
        TypeVariable<?>[] vars = raw.getTypeParameters();
        Type[] args = p.getActualTypeArguments();
        for (int i = 0; i < vars.length; i++) {
          Type a = args[i];
          while (a instanceof TypeVariable<?> v && bindings.containsKey(v)) {
            a = bindings.get(v);
          }
          bindings.put(vars[i], a);
        }
      }
      c = c.getSuperclass();
    }
    Type k = bindings.get(LocalFunction.class.getTypeParameters()[0]);
    return k instanceof Class<?> kc ? Optional.of(kc) : Optional.empty();
  }

  private static byte[] packageJar(List<CompiledFunction> compiled, List<FunctionDefinition> defs) {
    Map<String, String> sources = new LinkedHashMap<>();
    Map<String, Class<?>> classes = new HashMap<>();
    defs.forEach(d -> classes.put(d.name(), d.functionClass()));
    List<Class<?>> anchors = new ArrayList<>(List.of(FunctionProcedure.class, VoltProcedure.class, ApiaryFunction.class));
    for (CompiledFunction f : compiled) {
      Class<?> cls = classes.get(f.name());
      anchors.add(cls);
      String keyParam = f.keyType() == null ? null : f.keyType().procedureParameterType();
      sources.put(f.procedureClass(), ProcedureSource.generate(f, cls.getCanonicalName(), keyParam));
      if (f.kind() != FunctionKind.LOCAL) { // what a journaled cluster runs instead (ClusterJournal)
        sources.put(ProcedureSource.markedClassName(f.name()), ProcedureSource.generateMarked(f.name()));
      }
    }
    ProcedureJar jar = new ProcedureJar();
    if (!sources.isEmpty()) {
      InMemoryJavaCompiler.compile(sources, anchors).forEach(jar::addClass);
    }
    compiled.forEach(f -> jar.addPackageOf(classes.get(f.name())));
    return jar.toBytes();
  }
}

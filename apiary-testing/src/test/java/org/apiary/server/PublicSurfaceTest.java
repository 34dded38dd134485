package org.apiary.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The surface a user of Apiary meets: every public type of the API packages and every type their public and protected
 * members reach, transitively. None of it may be a VoltDB or Jackson type or one of Apiary's runtime classes, and it
 * is pinned here so that widening it is a decision, not an accident.
 */
class PublicSurfaceTest {
  /** The packages users import: the function SDK, the client, the front door, the test extension. */
  private static final List<String> API_PACKAGES = List.of("org.apiary", "org.apiary.client", "org.apiary.server",
      "org.apiary.testing");
  /**
   * Packages of a dependency in which a module replaces a class (apiary-core's {@code zmq.Signaler} and
   * {@code zmq.io.coder.v2.V2Decoder}, {@code zmq.io.mechanism.NullMechanism}, see their
   * Javadoc): the package is the dependency's, and so is its documentation.
   */
  private static final List<String> DEPENDENCY_PACKAGES = List.of("zmq", "zmq.io.coder.v2", "zmq.io.mechanism");

  /**
   * Types outside the API packages that the API hands out: configuration records, and provenance queries with the
   * description of an events table they take.
   */
  private static final Set<String> ALSO_PUBLIC = Set.of(
      "org.apiary.database.DatabaseConfig", "org.apiary.database.ProvenanceConfig",
      "org.apiary.database.DatabaseLogin", "org.apiary.database.DatabaseUsers", "org.apiary.frontend.FrontendConfig",
      "org.apiary.provenance.ProvenanceQueries", "org.apiary.provenance.ProvenanceTable",
      "org.apiary.provenance.ProvenanceColumn", "org.apiary.provenance.ColumnType", "org.apiary.journal.JournalMode");

  @Test
  void theApiReachesNoVoltDbJacksonOrRuntimeType() {
    Map<String, Set<String>> reached = reachableFromApi();
    List<String> leaks = new ArrayList<>();
    reached.forEach((type, from) -> {
      boolean foreign = type.startsWith("org.voltdb.") || type.startsWith("com.fasterxml.");
      boolean runtime = type.startsWith("org.apiary.") && !API_PACKAGES.contains(packageOf(type))
          && !ALSO_PUBLIC.contains(type) && !ALSO_PUBLIC.contains(outermost(type));
      if (foreign || runtime) {
        leaks.add(type + " (reached from " + from + ")");
      }
    });
    assertTrue(leaks.isEmpty(), "the public API reaches types users should never need:\n  "
        + String.join("\n  ", leaks));
  }

  @Test
  void theApiIsTheseTypes() {
    Set<String> apiary = new TreeSet<>();
    for (String type : reachableFromApi().keySet()) {
      if (type.startsWith("org.apiary.")) {
        apiary.add(type);
      }
    }
    // Widening this list is a decision: each entry is documented API that later releases must keep.
    Set<String> expected = new TreeSet<>(List.of(
        "org.apiary.AccessDeniedException", "org.apiary.AccessPolicy", "org.apiary.ApiaryException",
        "org.apiary.ApiaryFunction", "org.apiary.Application", "org.apiary.DatabaseException",
        "org.apiary.ExternalFunction", "org.apiary.StepPolicy", "org.apiary.Graph$External", // issue 42: steps
        "org.apiary.FunctionFailedException", "org.apiary.GlobalFunction", "org.apiary.Graph",
        "org.apiary.Graph$Edge", "org.apiary.Graph$Function", "org.apiary.InvalidRequestException",
        "org.apiary.LocalFunction", "org.apiary.OutcomeUnknownException", "org.apiary.OverloadedException",
        "org.apiary.InvocationCancelledException", "org.apiary.InvocationFailedException", // issue 44: leaf errors
        "org.apiary.RequestExpiredException", "org.apiary.FrontendUnreachableException",
        "org.apiary.ProvenanceLevel", "org.apiary.QueryResult", "org.apiary.Queue", "org.apiary.RecordingMode",
        "org.apiary.RegistrationException", "org.apiary.Row", "org.apiary.Statement",
        "org.apiary.SchemaMigration", // issue 44: schema changes
        "org.apiary.Schedule", "org.apiary.Schedule$Missed", // issue 42: schedules
        "org.apiary.client.ApiaryClient", "org.apiary.client.ClientConfig", "org.apiary.client.GraphResult",
        "org.apiary.client.InvocationHandle", "org.apiary.client.InvocationStatus", // issue 42: start and handles
        "org.apiary.client.InvocationRequest", "org.apiary.server.Apiary", "org.apiary.testing.ApiaryExtension",
        "org.apiary.database.DatabaseConfig$Kind", "org.apiary.provenance.ProvenanceQueries$DeniedCall",
        "org.apiary.provenance.ProvenanceQueries$RecordRead", "org.apiary.provenance.ProvenanceQueries$WrittenRecord",
        "org.apiary.frontend.FrontendConfig$Wire", "org.apiary.journal.JournalMode",
        "org.apiary.frontend.FrontendConfig$Metrics")); // issue 43: the monitoring endpoint
    expected.addAll(ALSO_PUBLIC);
    assertEquals(expected, apiary, "the public API's types changed");
  }

  /** The modules whose packages users meet on their class path, or in the command line's stack traces. */
  private static final List<String> MODULES = List.of("apiary-core", "apiary-journal", "apiary-http", "apiary-provenance",
      "apiary-compiler", "apiary-frontend", "apiary-console", "apiary-cli", "apiary-drills", "apiary-testing");

  @Test
  void everyPackageSaysInItsDocumentationWhetherItIsAnApi() throws IOException {
    Path root = org.apiary.docs.ProjectRoot.find();
    List<String> undocumented = new ArrayList<>();
    for (String module : MODULES) {
      Path sources = root.resolve(module).resolve("src/main/java");
      try (Stream<Path> dirs = Files.walk(sources)) {
        for (Path dir : dirs.filter(Files::isDirectory).toList()) {
          boolean hasClasses;
          try (Stream<Path> files = Files.list(dir)) {
            hasClasses = files.anyMatch(f -> f.toString().endsWith(".java"));
          }
          String pkg = sources.relativize(dir).toString().replace(java.io.File.separatorChar, '.');
          if (!hasClasses || DEPENDENCY_PACKAGES.contains(pkg)) {
            continue;
          }
          Path info = dir.resolve("package-info.java");
          if (!Files.isRegularFile(info)) {
            undocumented.add(module + ": " + pkg + " has no package-info.java");
            continue;
          }
          String text = Files.readString(info).toLowerCase(java.util.Locale.ROOT).replaceAll("\\s*\\n\\s*\\*?\\s*", " ");
          boolean saysRuntime = text.contains("not an api") || text.contains("without notice");
          if (!API_PACKAGES.contains(pkg) && !saysRuntime) {
            undocumented.add(module + ": " + pkg + " is not an API package, but its package-info.java does not say "
                + "so (\"not an API\" or \"changes without notice\")");
          }
        }
      }
    }
    assertTrue(undocumented.isEmpty(), "packages that do not say whether users may rely on them:\n  "
        + String.join("\n  ", undocumented));
  }

  /** Every type reachable from the API packages' public types, with one type that reached it. */
  private static Map<String, Set<String>> reachableFromApi() {
    Map<String, Set<String>> reached = new TreeMap<>();
    Deque<Class<?>> todo = new ArrayDeque<>();
    for (String pkg : API_PACKAGES) {
      for (Class<?> c : publicClassesIn(pkg)) {
        reached.computeIfAbsent(c.getName(), k -> new TreeSet<>()).add("package " + pkg);
        todo.add(c);
      }
    }
    Set<Class<?>> seen = new java.util.HashSet<>(todo);
    while (!todo.isEmpty()) {
      Class<?> c = todo.poll();
      if (!c.getName().startsWith("org.apiary.")) {
        continue; // JDK types and foreign types are reported, not walked
      }
      for (Type t : signatureTypes(c)) {
        for (Class<?> r : classesOf(t)) {
          if (r.isPrimitive() || r.getName().startsWith("java.")) {
            continue;
          }
          Set<String> from = reached.computeIfAbsent(r.getName(), k -> new TreeSet<>());
          if (from.size() < 2) {
            from.add(c.getName());
          }
          if (seen.add(r)) {
            todo.add(r);
          }
        }
      }
    }
    return reached;
  }

  /** The types in {@code c}'s public contract: supertypes, and public or protected members' signatures. */
  private static List<Type> signatureTypes(Class<?> c) {
    List<Type> types = new ArrayList<>();
    if (c.getGenericSuperclass() != null) {
      types.add(c.getGenericSuperclass());
    }
    Collections.addAll(types, c.getGenericInterfaces());
    boolean extensible = !Modifier.isFinal(c.getModifiers());
    for (Method m : c.getDeclaredMethods()) {
      if (visible(m.getModifiers(), extensible) && !m.isSynthetic()) {
        types.add(m.getGenericReturnType());
        addExecutable(types, m);
      }
    }
    for (Constructor<?> k : c.getDeclaredConstructors()) {
      if (visible(k.getModifiers(), extensible)) {
        addExecutable(types, k);
      }
    }
    for (Field f : c.getDeclaredFields()) {
      if (visible(f.getModifiers(), extensible) && !f.isSynthetic()) {
        types.add(f.getGenericType());
      }
    }
    if (c.isRecord()) {
      for (RecordComponent rc : c.getRecordComponents()) {
        types.add(rc.getGenericType());
      }
    }
    for (Class<?> nested : c.getDeclaredClasses()) {
      if (visible(nested.getModifiers(), extensible)) {
        types.add(nested);
      }
    }
    return types;
  }

  private static void addExecutable(List<Type> types, Executable e) {
    Collections.addAll(types, e.getGenericParameterTypes());
    Collections.addAll(types, e.getGenericExceptionTypes());
  }

  private static boolean visible(int modifiers, boolean extensible) {
    return Modifier.isPublic(modifiers) || (extensible && Modifier.isProtected(modifiers));
  }

  private static List<Class<?>> classesOf(Type t) {
    List<Class<?>> out = new ArrayList<>();
    if (t instanceof Class<?> c) {
      if (c.isArray()) {
        return classesOf(c.getComponentType());
      }
      out.add(c);
    } else if (t instanceof ParameterizedType p) {
      out.addAll(classesOf(p.getRawType()));
      for (Type a : p.getActualTypeArguments()) {
        out.addAll(classesOf(a));
      }
    } else if (t instanceof GenericArrayType g) {
      out.addAll(classesOf(g.getGenericComponentType()));
    } else if (t instanceof WildcardType w) {
      for (Type b : w.getUpperBounds()) {
        out.addAll(classesOf(b));
      }
      for (Type b : w.getLowerBounds()) {
        out.addAll(classesOf(b));
      }
    }
    return out;
  }

  /** The public top-level and nested classes of one package, from class directories or jars on the class path. */
  private static List<Class<?>> publicClassesIn(String pkg) {
    String dir = pkg.replace('.', '/');
    Set<String> names = new TreeSet<>();
    try {
      Enumeration<URL> roots = PublicSurfaceTest.class.getClassLoader().getResources(dir);
      while (roots.hasMoreElements()) {
        URL url = roots.nextElement();
        if (url.getProtocol().equals("file")) {
          try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
            files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".class"))
                .forEach(n -> names.add(pkg + "." + n.substring(0, n.length() - ".class".length())));
          }
        } else if (url.getProtocol().equals("jar")) {
          try (JarFile jar = ((JarURLConnection) url.openConnection()).getJarFile()) {
            for (JarEntry e : Collections.list(jar.entries())) {
              String n = e.getName();
              if (n.startsWith(dir + "/") && n.endsWith(".class") && n.indexOf('/', dir.length() + 1) < 0) {
                names.add(n.substring(0, n.length() - ".class".length()).replace('/', '.'));
              }
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    List<Class<?>> classes = new ArrayList<>();
    for (String name : names) {
      if (name.endsWith("package-info")) {
        continue;
      }
      try {
        Class<?> c = Class.forName(name, false, PublicSurfaceTest.class.getClassLoader());
        if (Modifier.isPublic(c.getModifiers()) && !c.isSynthetic() && !c.isAnonymousClass()
            && (c.getEnclosingClass() == null || Modifier.isPublic(c.getEnclosingClass().getModifiers()))) {
          classes.add(c);
        }
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(e);
      }
    }
    return classes;
  }

  private static String packageOf(String type) {
    String outer = outermost(type);
    return outer.substring(0, outer.lastIndexOf('.'));
  }

  private static String outermost(String type) {
    int nested = type.indexOf('$');
    return nested < 0 ? type : type.substring(0, nested);
  }
}

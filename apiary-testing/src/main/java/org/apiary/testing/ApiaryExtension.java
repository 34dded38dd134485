package org.apiary.testing;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apiary.Application;
import org.apiary.QueryResult;
import org.apiary.client.ApiaryClient;
import org.apiary.client.GraphResult;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.LocalCluster;
import org.apiary.server.Apiary;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives a test class an embedded Apiary with one application registered: VoltDB running
 * in the test's JVM (a fresh, temporary database), the application's schema loaded and its functions and graphs
 * registered, a frontend on loopback and a client connected to it. It starts before the class's first test and
 * stops after its last (the database's stop is bounded: 20 s at most); data written by one test is seen by the
 * next, so give each test its own keys.
 *
 * <pre>{@code
 * class ShopTest {
 *   @RegisterExtension
 *   static final ApiaryExtension apiary = ApiaryExtension.forApplication(ShopApp.class);
 *
 *   @Test
 *   void checkout(ApiaryClient client) {                      // or apiary.client()
 *     client.invoke("add_to_cart", 42L, new CartItem(7, 2));
 *     assertEquals(2, apiary.query("SELECT quantity FROM carts WHERE customer = ?", 42L)
 *         .rows().get(0).getLong("quantity"));
 *   }
 * }
 * }</pre>
 *
 * <p>Register it in a {@code static} field with {@code @RegisterExtension}; a test method may also take an
 * {@link ApiaryClient} parameter. VoltDB runs at most one embedded server per JVM, so test classes using this
 * extension must not run in parallel in one JVM (JUnit's default is sequential). VoltDB needs the JVM flags in
 * {@link LocalCluster#VOLTDB_JVM_FLAGS} (Surefire's {@code argLine}); without them the extension fails at once,
 * naming them.
 */
public final class ApiaryExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
    ParameterResolver {
  private final Application application;
  private final String source;
  private final int partitions;

  private ExtensionContext owner;
  private Apiary apiary;

  private ApiaryExtension(Application application, String source, int partitions) {
    this.application = application;
    this.source = source;
    this.partitions = partitions;
  }

  /**
   * The application a class declares the way an application jar's {@code Apiary-Application} class does: through
   * one public static method without parameters returning {@link Application}, or one public static field of that
   * type.
   *
   * @throws IllegalArgumentException if the class declares no application or several, saying which
   */
  public static ApiaryExtension forApplication(Class<?> declaringClass) {
    Objects.requireNonNull(declaringClass, "declaringClass");
    List<Member> members = new ArrayList<>();
    for (Method m : declaringClass.getMethods()) {
      if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
          && Application.class.isAssignableFrom(m.getReturnType())) {
        members.add(m);
      }
    }
    for (Field f : declaringClass.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && Application.class.isAssignableFrom(f.getType())) {
        members.add(f);
      }
    }
    if (members.size() != 1) {
      throw new IllegalArgumentException(declaringClass.getName() + " must declare exactly one application (a public "
          + "static method without parameters returning org.apiary.Application, or a public static field of that "
          + "type); it declares " + members.size() + ": " + members.stream().map(Member::getName).toList());
    }
    Member m = members.get(0);
    String what = declaringClass.getName() + "." + m.getName() + (m instanceof Method ? "()" : "");
    Application app;
    try {
      app = (Application) (m instanceof Method method ? method.invoke(null) : ((Field) m).get(null));
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(what + " threw " + e.getCause(), e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalArgumentException("cannot read " + what + " (make it and its class public): " + e.getMessage(),
          e);
    }
    if (app == null) {
      throw new IllegalArgumentException(what + " is null: it must give the application");
    }
    return new ApiaryExtension(app, what, DatabaseConfig.DEFAULT_PARTITIONS);
  }

  /** An application given directly, for example {@code Application.of(SCHEMA, graph)}. */
  public static ApiaryExtension forApplication(Application application) {
    return new ApiaryExtension(Objects.requireNonNull(application, "application"), "the given application",
        DatabaseConfig.DEFAULT_PARTITIONS);
  }

  /** The same extension with another number of partitions (default {@value DatabaseConfig#DEFAULT_PARTITIONS}). */
  public ApiaryExtension withPartitions(int count) {
    if (count < 1) {
      throw new IllegalArgumentException("partitions must be at least 1, got " + count);
    }
    return new ApiaryExtension(application, source, count);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (owner != null) {
      return; // a @Nested class of the class that started it: share its Apiary
    }
    requireVoltDbFlags();
    owner = context;
    try {
      apiary = Apiary.start(DatabaseConfig.embedded(partitions));
    } catch (RuntimeException e) {
      owner = null;
      throw new IllegalStateException("starting an embedded Apiary for " + source + " failed: " + e.getMessage(), e);
    }
    try {
      apiary.deploy(application);
    } catch (RuntimeException e) {
      RuntimeException failure = new IllegalStateException("deploying " + source + " failed: " + e.getMessage(), e);
      stop(failure);
      throw failure;
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (context != owner) {
      return;
    }
    RuntimeException failure = stop(null);
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (apiary == null) {
      throw new IllegalStateException("the embedded Apiary is not running: register ApiaryExtension in a static "
          + "field (@RegisterExtension static final ApiaryExtension apiary = ...), so it starts before the class");
    }
  }

  /** Stops the embedded Apiary; returns {@code pending}, or the stop's failure, with a later one suppressed. */
  private RuntimeException stop(RuntimeException pending) {
    RuntimeException failure = pending;
    try {
      if (apiary != null) {
        apiary.close();
      }
    } catch (RuntimeException e) {
      if (failure == null) {
        failure = e;
      } else {
        failure.addSuppressed(e);
      }
    }
    apiary = null;
    owner = null;
    return failure;
  }

  private static void requireVoltDbFlags() {
    Module unnamed = ApiaryExtension.class.getClassLoader().getUnnamedModule();
    if (!Object.class.getModule().isOpen("sun.nio.ch", unnamed)) {
      throw new IllegalStateException("VoltDB needs JVM flags this test JVM lacks (java.base/sun.nio.ch is not open): "
          + "add to Surefire's <argLine>: " + String.join(" ", LocalCluster.VOLTDB_JVM_FLAGS));
    }
  }

  /** The embedded Apiary itself (the front door), for what this extension's shortcuts do not cover. */
  public Apiary apiary() {
    if (apiary == null) {
      throw new IllegalStateException("the embedded Apiary is not running (outside the test class's lifetime?)");
    }
    return apiary;
  }

  /** A client connected to the embedded frontend. Do not close it; the extension does. */
  public ApiaryClient client() {
    return apiary().client();
  }

  /** Invokes a graph through the frontend: {@code client().invoke(graph, partitionKey, arguments)}. */
  public GraphResult invoke(String graph, Object partitionKey, Object... arguments) {
    return apiary().invoke(graph, partitionKey, arguments);
  }

  /**
   * Runs SQL directly against the database, outside any function, for a test to look at (or set up) data:
   * {@code query("SELECT stock FROM products WHERE id = ?", 7L)}. Parameters bind to the {@code ?} in order.
   */
  public QueryResult query(String sql, Object... parameters) {
    return apiary().query(sql, parameters);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == ApiaryClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return client();
  }
}

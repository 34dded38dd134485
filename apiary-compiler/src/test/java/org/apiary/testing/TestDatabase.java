package org.apiary.testing;

import java.time.Duration;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.testapp.TestApp;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The database the tests of one JVM share, chosen by the system property {@code apiary.test.database}:
 * {@code embedded} (the default) starts VoltDB in this process; {@code server-process} starts a VoltDB server as a
 * separate process and connects to it over TCP. The test application is loaded and deployed once.
 */
public final class TestDatabase implements ExtensionContext.Store.CloseableResource {
  private static TestDatabase shared;
  private static RuntimeException startFailure;

  private final LocalCluster cluster;
  private final ApiaryDatabase database;
  private final FunctionInvoker invoker;

  private TestDatabase(LocalCluster cluster, ApiaryDatabase database, FunctionInvoker invoker) {
    this.cluster = cluster;
    this.database = database;
    this.invoker = invoker;
  }

  /** The shared database, started on first use and stopped when the test JVM's root context closes. */
  public static synchronized TestDatabase get(ExtensionContext context) {
    if (startFailure != null) {
      throw new IllegalStateException("the test database failed to start earlier in this JVM", startFailure);
    }
    if (shared == null) {
      try {
        shared = start(System.getProperty("apiary.test.database", "embedded"));
      } catch (RuntimeException e) {
        startFailure = e;
        throw e;
      }
      context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).put(TestDatabase.class, shared);
    }
    return shared;
  }

  private static TestDatabase start(String mode) {
    LocalCluster cluster = null;
    ApiaryDatabase db = null;
    try {
      DatabaseConfig config = switch (mode) {
        // Provenance on, into a DuckDB file, so the tests also exercise capture on every call.
        // Community Edition exports at most two tables, so only the provenance tests' table captures writes.
        case "embedded" -> DatabaseConfig.embedded(2).withProvenance(ProvenanceConfig.duckdb(temporaryDuckDbFile())
            .withWriteCaptureOnly("items"));
        case "server-process" -> {
          cluster = LocalCluster.start(1, 2, 0, Duration.ofSeconds(120));
          yield cluster.config();
        }
        default -> throw new IllegalArgumentException("apiary.test.database must be embedded or server-process, not " + mode);
      };
      db = ApiaryDatabase.open(config);
      db.loadSchema(TestApp.SCHEMA);
      CompiledApplication app = FunctionCompiler.compile(TestApp.SCHEMA, TestApp.FUNCTIONS, f -> TestApp.RECORDABLE);
      Deployer.deploy(db, app);
      return new TestDatabase(cluster, db, new FunctionInvoker(db, FunctionCatalog.load(db)));
    } catch (RuntimeException e) {
      if (db != null) {
        db.close();
      }
      if (cluster != null) {
        cluster.close();
      }
      throw e;
    }
  }

  private static java.nio.file.Path temporaryDuckDbFile() {
    try {
      return java.nio.file.Files.createTempDirectory("apiary-test-provenance-").resolve("provenance.duckdb");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot create a directory for the provenance sink", e);
    }
  }

  /** Injects the shared {@link TestDatabase} into test methods and lifecycle methods. */
  public static final class Resolver implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
      return parameter.getParameter().getType() == TestDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
      return get(context);
    }
  }

  public ApiaryDatabase database() {
    return database;
  }

  public FunctionInvoker invoker() {
    return invoker;
  }

  /** Empties the application tables. */
  public void clear() {
    for (String t : new String[] {"counters", "accounts", "orders", "rates"}) {
      database.callAdmin("clearing " + t, "@AdHoc", "DELETE FROM " + t);
    }
  }

  @Override
  public synchronized void close() {
    try {
      database.close();
    } finally {
      if (cluster != null) {
        cluster.close();
      }
      shared = null;
    }
  }
}

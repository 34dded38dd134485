package org.apiary.cli;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apiary.Graph;
import org.apiary.RegistrationException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.Registrar;
import org.apiary.runtime.SystemSchema;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Registers the application an application jar declares against a running database. */
@Command(name = "deploy", mixinStandardHelpOptions = true,
    description = {"Register the application an application jar declares (its schema, functions and graphs) with a "
        + "running Apiary: checks every function with VoltDB's planner, deploys them as stored procedures and stores "
        + "the graphs, which every frontend then serves.",
        "The jar's manifest names the declaring class: `" + ApplicationJar.ATTRIBUTE + ": com.example.ShopApp`, "
            + "a class with one public static method without parameters returning org.apiary.Application, or one "
            + "public static field of that type. The jar holds the application's classes, not Apiary's.",
        "Deploying a changed jar again upgrades it in place: functions are replaced, and a graph whose definition "
            + "changed becomes its next version (invocations already running finish under their own).",
        "The schema changes through the application's numbered migrations (Application.withMigrations): a deploy "
            + "applies those the database has not recorded, in one catalog update before the new functions. A "
            + "migration that drops data, or that VoltDB cannot make on a table with rows, is refused naming it "
            + "(nothing changes) unless --allow-data-loss is given."})
public final class DeployCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "APP.jar", description = "The application jar.")
  Path jar;

  @Option(names = "--allow-data-loss", description = "Make schema migrations that drop data (DROP TABLE, DROP COLUMN "
      + "of a table with rows), and those VoltDB cannot make on a table with rows after deleting its rows.")
  boolean allowDataLoss;

  @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
  ServiceTarget.Database target;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    try (ApplicationJar app = ApplicationJar.open(jar);
         ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
      Map<String, Integer> before = versions(db);
      List<RegisteredGraph> registered;
      Thread current = Thread.currentThread();
      ClassLoader previous = current.getContextClassLoader();
      current.setContextClassLoader(app.loader());
      try {
        warnIfNotFromJar(app);
        registered = Registrar.register(db, app.application(), org.apiary.RecordingMode.SELECTIVE, allowDataLoss);
      } catch (RegistrationException e) {
        throw new CliException(app.path() + " was not deployed; nothing changed:\n  "
            + String.join("\n  ", e.problems()), e);
      } finally {
        current.setContextClassLoader(previous);
      }
      Map<String, Integer> after = versions(db);
      System.out.println("deployed " + app.path().getFileName() + " (" + app.source() + ") to " + target.describe()
          + ": " + registered.size() + " graph(s)");
      for (RegisteredGraph g : registered) {
        Integer was = before.get(g.name());
        Integer now = after.get(g.name());
        String change = was == null ? "new" : was.equals(now) ? "unchanged" : "changed, was version " + was;
        System.out.println("  graph " + g.name() + ": version " + now + " (" + change + "); functions "
            + g.nodes().stream().map(DeployCommand::describe).collect(Collectors.joining(", ")));
        for (RegisteredGraph.Node n : g.nodes()) {
          if (n.external() != null) {
            System.err.println("apiary deploy: note: external step '" + n.function() + "' of graph " + g.name()
                + " runs in the frontends, not in the database: its class " + n.external().className()
                + " must be on every frontend's classpath");
          }
        }
      }
      return 0;
    }
  }

  private static String describe(RegisteredGraph.Node n) {
    if (n.external() != null) {
      return n.function() + " (external step" + (n.recorded() ? ", recorded" : "") + ")";
    }
    return n.function() + " (" + (n.local() ? "local" : "global") + (n.writes() ? ", writes" : ", reads")
        + (n.recorded() ? ", recorded" : "") + ")";
  }

  /** The newest version of every registered graph. */
  static Map<String, Integer> versions(ApiaryDatabase db) {
    Map<String, Integer> versions = new TreeMap<>();
    if (!SystemSchema.tables(db).contains(SystemSchema.GRAPHS)) {
      return versions;
    }
    Rows t = db.query("reading graph versions", "SELECT name, MAX(version) FROM " + SystemSchema.GRAPHS
        + " GROUP BY name");
    for (Rows.Row row : t) {
      versions.put(row.getString(0), (int) row.getLong(1));
    }
    return versions;
  }

  /**
   * Says so if a function class was not loaded from the jar: a class of the same name on Apiary's own classpath wins
   * (class loaders ask their parent first), so the jar's version of it would not be the one deployed.
   */
  private static void warnIfNotFromJar(ApplicationJar app) {
    for (Graph g : app.application().graphs()) {
      for (Graph.Function f : g.functions().values()) {
        Class<?> c = f.functionClass();
        if (c.getClassLoader() != app.loader()) {
          System.err.println("apiary deploy: warning: function '" + f.name() + "' (" + c.getName() + ") comes from "
              + location(c) + ", not from " + app.path() + ": a class on Apiary's own classpath hides the jar's");
        }
      }
    }
  }

  private static String location(Class<?> c) {
    var source = c.getProtectionDomain().getCodeSource();
    try {
      return source == null || source.getLocation() == null ? "Apiary's classpath"
          : new File(source.getLocation().toURI()).toString();
    } catch (URISyntaxException | IllegalArgumentException e) {
      return source.getLocation().toString();
    }
  }
}

package org.apiary.drills.provenance;

import java.util.List;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.GlobalFunction;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The application of {@code apiary drill provenance}: functions whose every read and write is spelled out by the
 * caller's {@link Plan}, so the drill knows, without asking Apiary, which execution read and wrote which row.
 *
 * <p>One table, {@code pd_items(p, k, tag, v)}, partitioned on {@code p}, keyed by {@code (p, k)}. Every row a
 * function writes carries the tag of the function's plan segment (unique per invocation and function), so a write
 * event names its writer by its content; a delete event carries the deleted row, so the tag of its last writer.
 * Reads are captured with the key only and are attributed by {@code exec_id} alone.
 *
 * <p>Functions: {@value #WRITE} (single-partition: inserts, updates, deletes and reads), {@value #READ} and
 * {@value #READ_FIRST} (single-partition, read-only; the second one is recorded for exactly-once because it feeds
 * a writer and the sink), {@value #GLOBAL_READ} (multi-partition, read-only), {@value #GLOBAL_WRITE}
 * (multi-partition, writes and reads), and {@value #ABORT} and {@value #GLOBAL_ABORT}, which make their writes and
 * reads and then throw {@link PlannedAbortException}, so their transactions roll back. A writer that finds the data
 * other than its plan expects (an update or delete that changes no row) fails with a "model mismatch" instead of
 * writing something the caller did not foresee.
 */
public final class ProvDrillApp {
  /** The application table; the only one, so its writes fit VoltDB Community Edition's export streams. */
  public static final String SCHEMA = """
      CREATE TABLE pd_items (p BIGINT NOT NULL, k BIGINT NOT NULL, tag VARCHAR(64) NOT NULL, v BIGINT NOT NULL,
        PRIMARY KEY (p, k));
      PARTITION TABLE pd_items ON COLUMN p;
      """;

  /** The application table's name. */
  public static final String TABLE = "pd_items";

  /** The function names. */
  public static final String WRITE = "pd_write";
  public static final String READ = "pd_read";
  public static final String READ_FIRST = "pd_read_first";
  public static final String ABORT = "pd_abort";
  public static final String GLOBAL_READ = "pd_global_read";
  public static final String GLOBAL_WRITE = "pd_global_write";
  public static final String GLOBAL_ABORT = "pd_global_abort";

  /** The edge along which a function hands the rest of the plan to the next one. */
  public static final String NEXT = "next";

  /** The graphs, each with the functions it runs in order (its plan has one segment per function). */
  public enum Shape {
    /** A single-partition writer. */
    WRITE_ONLY("pd_g_write", List.of(WRITE)),
    /** A single-partition read-only function. */
    READ_ONLY("pd_g_read", List.of(READ)),
    /** A writer, then a read-only function on the same partition right after it. */
    WRITE_THEN_READ("pd_g_write_read", List.of(WRITE, READ)),
    /** A recorded read-only function feeding the sink and a writer on the same partition. */
    READ_THEN_WRITE("pd_g_read_write", List.of(READ_FIRST, WRITE)),
    /** A multi-partition read-only function. */
    GLOBAL_READ_ONLY("pd_g_global_read", List.of(GLOBAL_READ)),
    /** A multi-partition writer. */
    GLOBAL_WRITE_ONLY("pd_g_global_write", List.of(GLOBAL_WRITE)),
    /** A multi-partition writer, then a read-only function on one of the partitions it wrote. */
    GLOBAL_WRITE_THEN_READ("pd_g_global_write_read", List.of(GLOBAL_WRITE, READ)),
    /** A single-partition function that writes, reads and aborts. */
    ABORT_ONLY("pd_g_abort", List.of(ABORT)),
    /** A writer that commits, then a function on the same partition that aborts. */
    WRITE_THEN_ABORT("pd_g_write_abort", List.of(WRITE, ABORT)),
    /** A multi-partition function that writes, reads and aborts. */
    GLOBAL_ABORT_ONLY("pd_g_global_abort", List.of(GLOBAL_ABORT));

    private final String graph;
    private final List<String> functions;

    Shape(String graph, List<String> functions) {
      this.graph = graph;
      this.functions = functions;
    }

    /** The graph's name. */
    public String graph() {
      return graph;
    }

    /** Its functions, in the order they run. */
    public List<String> functions() {
      return functions;
    }

    /** Whether its first function is global (the invocation then has no partition key). */
    public boolean startsGlobal() {
      return isGlobal(functions.get(0));
    }
  }

  /** Whether a function of this application is global. */
  public static boolean isGlobal(String function) {
    return function.startsWith("pd_global_");
  }

  /** Whether a function of this application declares no writes. */
  public static boolean isReadOnly(String function) {
    return function.equals(READ) || function.equals(READ_FIRST) || function.equals(GLOBAL_READ);
  }

  /** Whether a function of this application always aborts. */
  public static boolean aborts(String function) {
    return function.equals(ABORT) || function.equals(GLOBAL_ABORT);
  }

  public static final Application APP = Application.of(SCHEMA, graphs());

  private static Graph[] graphs() {
    return java.util.Arrays.stream(Shape.values()).map(ProvDrillApp::graph).toArray(Graph[]::new);
  }

  private static Graph graph(Shape shape) {
    Graph g = Graph.named(shape.graph());
    List<String> fns = shape.functions();
    for (String fn : fns) {
      if (isGlobal(fn)) {
        g.addGlobalFunction(fn, globalClass(fn));
      } else {
        g.addLocalFunction(fn, localClass(fn));
      }
    }
    g.addEdge(Graph.SOURCE, fns.get(0), ApiaryFunction.SOURCE, String.class);
    for (int i = 1; i < fns.size(); i++) {
      g.addEdge(fns.get(i - 1), fns.get(i), NEXT);
    }
    for (String fn : fns) {
      boolean last = fn.equals(fns.get(fns.size() - 1));
      // Readers always answer the caller; writers only when last; aborting functions never get that far.
      if (!aborts(fn) && (last || fn.equals(READ_FIRST))) {
        g.addEdge(fn, Graph.SINK, ApiaryFunction.SINK);
      }
    }
    return g;
  }

  private static Class<? extends LocalFunction<?>> localClass(String fn) {
    return switch (fn) {
      case WRITE -> Write.class;
      case READ -> Read.class;
      case READ_FIRST -> ReadFirst.class;
      case ABORT -> Abort.class;
      default -> throw new IllegalArgumentException(fn);
    };
  }

  private static Class<? extends GlobalFunction> globalClass(String fn) {
    return switch (fn) {
      case GLOBAL_READ -> GlobalRead.class;
      case GLOBAL_WRITE -> GlobalWrite.class;
      case GLOBAL_ABORT -> GlobalAbort.class;
      default -> throw new IllegalArgumentException(fn);
    };
  }

  private ProvDrillApp() {}

  /** Hands the rest of the plan on (to the next function's partition), or returns {@code result} to the caller. */
  private static void handOn(String plan, String result, Output out) {
    String rest = Plan.rest(plan);
    if (rest == null) {
      out.send(result, ApiaryFunction.SINK, null);
    } else {
      out.send(rest, NEXT, Plan.decode(rest).get(0).key());
    }
  }

  /** A function's {@code returnOutput}. */
  private interface Output {
    void send(Object value, String edge, Object key);
  }

  /** Statements of a single-partition function that only reads. */
  public abstract static class LocalReader extends LocalFunction<Long> {
    static final Statement SELECT = Statement.of("SELECT tag, v FROM pd_items WHERE p = ? AND k = ?");

    /** For subclasses. */
    protected LocalReader() {}

    String runSegment(String plan) {
      return Steps.run(Plan.decode(plan).get(0), this::queueSQL, this::executeSQL,
          new Steps.Statements(SELECT, null, null, null));
    }
  }

  /** Statements of a single-partition function that writes. */
  public abstract static class LocalWriter extends LocalFunction<Long> {
    static final Statement SELECT = Statement.of("SELECT tag, v FROM pd_items WHERE p = ? AND k = ?");
    static final Statement INSERT = Statement.of("INSERT INTO pd_items (p, k, tag, v) VALUES (?, ?, ?, ?)");
    static final Statement UPDATE = Statement.of("UPDATE pd_items SET tag = ?, v = ? WHERE p = ? AND k = ?");
    static final Statement DELETE = Statement.of("DELETE FROM pd_items WHERE p = ? AND k = ?");

    /** For subclasses. */
    protected LocalWriter() {}

    String runSegment(String plan) {
      return Steps.run(Plan.decode(plan).get(0), this::queueSQL, this::executeSQL,
          new Steps.Statements(SELECT, INSERT, UPDATE, DELETE));
    }
  }

  /** Statements of a multi-partition function that only reads. */
  public abstract static class GlobalReader extends GlobalFunction {
    static final Statement SELECT = Statement.of("SELECT tag, v FROM pd_items WHERE p = ? AND k = ?");

    /** For subclasses. */
    protected GlobalReader() {}

    String runSegment(String plan) {
      return Steps.run(Plan.decode(plan).get(0), this::queueSQL, this::executeSQL,
          new Steps.Statements(SELECT, null, null, null));
    }
  }

  /** Statements of a multi-partition function that writes. */
  public abstract static class GlobalWriter extends GlobalFunction {
    static final Statement SELECT = Statement.of("SELECT tag, v FROM pd_items WHERE p = ? AND k = ?");
    static final Statement INSERT = Statement.of("INSERT INTO pd_items (p, k, tag, v) VALUES (?, ?, ?, ?)");
    static final Statement UPDATE = Statement.of("UPDATE pd_items SET tag = ?, v = ? WHERE p = ? AND k = ?");
    static final Statement DELETE = Statement.of("DELETE FROM pd_items WHERE p = ? AND k = ?");

    /** For subclasses. */
    protected GlobalWriter() {}

    String runSegment(String plan) {
      return Steps.run(Plan.decode(plan).get(0), this::queueSQL, this::executeSQL,
          new Steps.Statements(SELECT, INSERT, UPDATE, DELETE));
    }
  }

  /** Writes and reads its segment; hands the rest of the plan on, or returns what it read. */
  public static class Write extends LocalWriter {
    @Override
    protected void run() {
      String plan = Steps.plan(retrieveInputs(SOURCE, String.class), retrieveInputs(NEXT, String.class));
      String read = runSegment(plan);
      handOn(plan, read, this::returnOutput);
    }
  }

  /** Reads its segment and returns what it read; hands the rest of the plan on, if any. */
  public static class Read extends LocalReader {
    @Override
    protected void run() {
      String plan = Steps.plan(retrieveInputs(SOURCE, String.class), retrieveInputs(NEXT, String.class));
      String read = runSegment(plan);
      returnOutput(read);
      String rest = Plan.rest(plan);
      if (rest != null) {
        returnOutput(rest, NEXT, Plan.decode(rest).get(0).key());
      }
    }
  }

  /** {@link Read} first in a graph whose writer follows it, so exactly-once records it. */
  public static class ReadFirst extends Read {}

  /** Writes and reads its segment, then throws: nothing of it commits. */
  public static class Abort extends LocalWriter {
    @Override
    protected void run() {
      String plan = Steps.plan(retrieveInputs(SOURCE, String.class), retrieveInputs(NEXT, String.class));
      runSegment(plan);
      throw new PlannedAbortException(Plan.decode(plan).get(0).tag());
    }
  }

  /** Reads rows of any partition and returns what it read. */
  public static class GlobalRead extends GlobalReader {
    @Override
    protected void run() {
      returnOutput(runSegment(retrieveInput(SOURCE, String.class)));
    }
  }

  /** Writes and reads rows of any partition; hands the rest of the plan on, or returns what it read. */
  public static class GlobalWrite extends GlobalWriter {
    @Override
    protected void run() {
      String plan = retrieveInput(SOURCE, String.class);
      String read = runSegment(plan);
      handOn(plan, read, (value, edge, key) -> {
        if (key == null) {
          returnOutput(value, edge);
        } else {
          returnOutput(value, edge, key);
        }
      });
    }
  }

  /** Writes and reads rows of any partition, then throws: nothing of it commits. */
  public static class GlobalAbort extends GlobalWriter {
    @Override
    protected void run() {
      String plan = retrieveInput(SOURCE, String.class);
      runSegment(plan);
      throw new PlannedAbortException(Plan.decode(plan).get(0).tag());
    }
  }
}

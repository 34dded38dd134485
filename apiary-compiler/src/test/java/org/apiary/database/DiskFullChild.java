package org.apiary.database;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.testapp.PutBlob;
import org.voltdb.VoltTable;

/**
 * The embedded side of {@link DiskFullTest}, in its own JVM: a VoltDB that exits takes its process with it. Opens a
 * journaled database with provenance in DuckDB, everything in DIR (a small volume), and writes 30 KB rows, one
 * transaction each, until the database refuses them; prints, flushed as they happen:
 *
 * <ul>
 *   <li>{@code READY}, then {@code ACK k} for every acknowledged write;</li>
 *   <li>{@code REFUSED k message} for the first refused write, then goes on trying for a few seconds;</li>
 *   <li>{@code READ n} once a read still works (the rows present), then {@code SURVIVED};</li>
 *   <li>then waits for the file RESUME (the test gives the volume more room and creates it), writes again until a
 *       write is acknowledged ({@code RESUMED k}), and closes the database ({@code CLOSED}).</li>
 * </ul>
 *
 * Arguments: DIR RESUME RESERVE_BYTES (-1: the default reserve) JOURNAL_MODE.
 */
public final class DiskFullChild {
  private DiskFullChild() {}

  public static void main(String[] args) {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try {
      run(Path.of(args[0]), Path.of(args[1]), Long.parseLong(args[2]), JournalMode.parse(args[3]), out);
      System.exit(0);
    } catch (Throwable t) {
      System.getLogger(DiskFullChild.class.getName()).log(System.Logger.Level.ERROR, "disk full child failed", t);
      System.exit(1);
    }
  }

  private static void run(Path dir, Path resume, long reserve, JournalMode journal, PrintStream out) throws Exception {
    ProvenanceConfig provenance = ProvenanceConfig.duckdb(dir.resolve("provenance.duckdb"));
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(dir.resolve("database"))
        .withSnapshotInterval(Duration.ofSeconds(600)).withJournal(journal)
        .withProvenance(reserve < 0 ? provenance : provenance.withDiskReserveBytes(reserve));
    java.util.Random random = new java.util.Random(45);
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      String schema = PutBlob.SCHEMA;
      db.loadSchema(schema);
      Deployer.deploy(db, FunctionCompiler.compile(schema, List.of(FunctionDefinition.of("putBlob", PutBlob.class))));
      SystemSchema.ensure(db);
      // What registering a graph does for every application table: its writes go to provenance through export.
      db.callAdmin("capturing writes", "@AdHoc", "ALTER TABLE blobs ALTER EXPORT TO TARGET "
          + ProvenanceConfig.EXPORT_TARGET + " ON INSERT, DELETE, UPDATE_NEW;");
      FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
      out.println("READY");
      long k = 0;
      long refusedAt = -1;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (System.nanoTime() < deadline) {
        k++;
        try {
          invoker.call("putBlob", k, blob(random));
          out.println("ACK " + k);
        } catch (RuntimeException e) {
          if (refusedAt < 0) {
            refusedAt = System.nanoTime();
            out.println("REFUSED " + k + " " + e.getMessage().replace('\n', ' '));
          }
          if (System.nanoTime() - refusedAt > TimeUnit.SECONDS.toNanos(3)) {
            break;
          }
          Thread.sleep(20);
        }
      }
      if (refusedAt < 0) {
        throw new AssertionError("no write was refused within 120 s");
      }
      out.println("READ " + scalar(db, "SELECT COUNT(*) FROM blobs"));
      out.println("SURVIVED");
      long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (!Files.exists(resume) && System.nanoTime() < waitUntil) {
        Thread.sleep(50);
      }
      if (!Files.exists(resume)) {
        throw new AssertionError("the test never said to resume");
      }
      long resumeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String last = null;
      while (System.nanoTime() < resumeDeadline) {
        k++;
        try {
          invoker.call("putBlob", k, blob(random));
          out.println("RESUMED " + k);
          last = null;
          break;
        } catch (RuntimeException e) {
          last = e.getMessage();
          Thread.sleep(100);
        }
      }
      if (last != null) {
        throw new AssertionError("writes did not resume within 60 s of the volume growing: " + last);
      }
    }
    out.println("CLOSED");
  }

  /** 30,000 random letters: neither DuckDB nor anything else can compress them away. */
  private static String blob(java.util.Random random) {
    char[] c = new char[30_000];
    for (int i = 0; i < c.length; i++) {
      c[i] = (char) ('a' + random.nextInt(26));
    }
    return new String(c);
  }

  private static long scalar(ApiaryDatabase db, String sql) {
    VoltTable t = db.callAdmin("reading", "@AdHoc", sql).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }
}

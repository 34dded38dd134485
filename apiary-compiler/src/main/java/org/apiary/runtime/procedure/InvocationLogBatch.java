package org.apiary.runtime.procedure;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * Many invocation-log writes of one partition in one single-partition transaction: invocations that begin (inserted
 * as RUNNING unless their ID is already logged) and outcomes to store (a compare-and-set from RUNNING). A frontend
 * batches the writes whose invocation IDs hash to the same partition, so under load the log costs a fraction of a
 * transaction per invocation instead of two. Routed by its first parameter, one of the batch's IDs.
 *
 * <p>Where the server captures provenance, each outcome the batch stores is captured as the invocation's
 * {@code Invocations} row ({@link InvocationEnds}), read back from the log in the batch's last round trip.
 */
public class InvocationLogBatch extends JournaledProcedure {
  /** One write of a batch. */
  public sealed interface Write permits Begin, Finish {
    String invocationId();
  }

  /**
   * Logs a new invocation as RUNNING, unless its transaction runs after {@code deadline} (milliseconds since the
   * epoch; 0: no deadline): a request a frontend checked and then held (paused) past its client's expiry plus the
   * clock skew allowed is not started, since retention may have deleted the log entry of an earlier run.
   */
  public record Begin(String invocationId, String graph, int graphVersion, byte[] request, String frontend,
                      long deadline) implements Write {
    /** A begin without a deadline. */
    public Begin(String invocationId, String graph, int graphVersion, byte[] request, String frontend) {
      this(invocationId, graph, graphVersion, request, frontend, 0L);
    }
  }

  /** Stores an invocation's outcome if it is still RUNNING. */
  public record Finish(String invocationId, String status, byte[] result) implements Write {}

  /** {@code APPLIED} of a write that did nothing. */
  public static final byte NOT_APPLIED = 0;
  /** {@code APPLIED} of a write that applied. */
  public static final byte APPLIED = 1;
  /** {@code APPLIED} of a begin refused because it came after its deadline. */
  public static final byte PAST_DEADLINE = 2;

  public final SQLStmt exists = new SQLStmt("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = ?;");
  public final SQLStmt begin = new SQLStmt("INSERT INTO APIARY_INVOCATIONS (invocation_id, graph, graph_version, "
      + "request, frontend, status, attempts, started_at) VALUES (?, ?, ?, ?, ?, 'RUNNING', 1, ?);");
  public final SQLStmt finish = new SQLStmt("UPDATE APIARY_INVOCATIONS SET status = ?, result = ?, finished_at = ? "
      + "WHERE invocation_id = ? AND status = 'RUNNING';");
  /** Reads the log entry of an invocation whose outcome the batch stored, for its provenance (schema version 17). */
  public final SQLStmt ended = new SQLStmt(InvocationEnds.ENTRY_SQL);

  /**
   * Applies a batch.
   *
   * @param route an invocation ID of the batch (all hash to this partition)
   * @param batch the writes, encoded by {@link #encode}
   * @return one row per write, in order: {@code APPLIED} {@value #APPLIED} if the invocation began (was not logged
   *     yet) or its outcome was stored (it was still running), {@value #PAST_DEADLINE} if a begin came after its
   *     deadline, else {@value #NOT_APPLIED}; {@code STARTED_AT}, for a begin that applied, its transaction's time
   *     (milliseconds since the epoch: the invocation's start as logged), else 0
   */
  public VoltTable run(String route, byte[] batch) {
    List<Write> writes = decode(batch);
    List<Object[]> lookups = new ArrayList<>();
    for (Write w : writes) {
      if (w instanceof Begin) {
        lookups.add(new Object[] {exists, w.invocationId()});
      }
    }
    VoltTable[] found = execute(lookups, false);
    VoltTable result = new VoltTable(new VoltTable.ColumnInfo("APPLIED", VoltType.TINYINT),
        new VoltTable.ColumnInfo("STARTED_AT", VoltType.BIGINT));
    byte[] applied = new byte[writes.size()];
    long now = getTransactionTime().getTime();
    java.util.Set<String> begun = new java.util.HashSet<>();
    int b = 0;
    int queued = 0;
    java.util.Map<Integer, Integer> finishes = new java.util.HashMap<>(); // write index -> statement index
    var capture = InvocationEnds.capture();
    List<Object[]> statements = new ArrayList<>();
    for (int i = 0; i < writes.size(); i++) {
      Write w = writes.get(i);
      if (w instanceof Begin begin) {
        boolean absent = found[b++].asScalarLong() == 0 && !begun.contains(begin.invocationId());
        if (absent && begin.deadline() > 0 && now > begin.deadline()) {
          applied[i] = PAST_DEADLINE;
        } else if (absent) {
          begun.add(begin.invocationId());
          statements.add(new Object[] {this.begin, begin.invocationId(), begin.graph(), begin.graphVersion(),
              begin.request(), begin.frontend(), getTransactionTime()});
          applied[i] = APPLIED;
          queued++;
        }
      } else {
        Finish f = (Finish) w;
        statements.add(new Object[] {finish, f.status(), f.result(), getTransactionTime(), f.invocationId()});
        finishes.put(i, queued++);
        if (capture.isPresent()) {
          statements.add(new Object[] {ended, f.invocationId()}); // right after its update: the entry as it left it
          queued++;
        }
      }
    }
    VoltTable[] done = execute(statements, true);
    finishes.forEach((write, statement) -> applied[write] = done[statement].asScalarLong() == 1 ? APPLIED
        : NOT_APPLIED);
    if (capture.isPresent()) {
      List<org.apiary.provenance.ProvenanceRow> rows = new ArrayList<>();
      finishes.forEach((write, statement) -> {
        if (applied[write] == APPLIED) {
          Finish f = (Finish) writes.get(write);
          InvocationEnds.row(f.invocationId(), f.status(), done[statement + 1]).ifPresent(rows::add);
        }
      });
      InvocationEnds.offer(capture.get(), rows);
    }
    for (int i = 0; i < writes.size(); i++) {
      result.addRow(applied[i], writes.get(i) instanceof Begin && applied[i] == APPLIED ? now : 0L);
    }
    return queued == 0 ? result : committed(result);
  }

  /**
   * Runs {@code statements} (each a statement and its parameters) in batches of at most
   * {@value #STATEMENTS_PER_BATCH}, the last one final if {@code last}, and returns every result in order, copied
   * where there were several batches. VoltDB splits a larger batch itself, but an outcome's update was then answered
   * with a table that was no longer one (CI: "table must contain exactly 1 integral value; column 1 is type =
   * INVALID"), once each outcome also read its entry back: a later batch's results reuse the earlier one's buffer.
   */
  private VoltTable[] execute(List<Object[]> statements, boolean last) {
    List<VoltTable> results = new ArrayList<>();
    boolean several = statements.size() > STATEMENTS_PER_BATCH;
    for (int from = 0; from < statements.size(); from += STATEMENTS_PER_BATCH) {
      int to = Math.min(statements.size(), from + STATEMENTS_PER_BATCH);
      for (Object[] s : statements.subList(from, to)) {
        voltQueueSQL((SQLStmt) s[0], java.util.Arrays.copyOfRange(s, 1, s.length));
      }
      for (VoltTable t : voltExecuteSQL(last && to == statements.size())) {
        results.add(several ? copy(t) : t); // a batch's results may share a buffer the next batch reuses
      }
    }
    return results.toArray(new VoltTable[0]);
  }

  private static VoltTable copy(VoltTable t) {
    VoltTable copy = t.clone(0);
    t.resetRowPosition();
    while (t.advanceRow()) {
      copy.add(t);
    }
    t.resetRowPosition();
    return copy;
  }

  /** VoltDB's most statements in one batch. */
  private static final int STATEMENTS_PER_BATCH = 200;

  /** The type byte of a begin as earlier releases encode it, without a deadline. */
  private static final byte BEGIN = 0;
  private static final byte BEGIN_WITH_DEADLINE = 2;

  /** Encodes a batch for {@link #run}. */
  public static byte[] encode(List<? extends Write> writes) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(writes.size());
      for (Write w : writes) {
        if (w instanceof Begin b) {
          out.writeByte(BEGIN_WITH_DEADLINE);
          out.writeUTF(b.invocationId());
          out.writeUTF(b.graph());
          out.writeInt(b.graphVersion());
          writeBytes(out, b.request());
          out.writeUTF(b.frontend());
          out.writeLong(b.deadline());
        } else {
          Finish f = (Finish) w;
          out.writeByte(1);
          out.writeUTF(f.invocationId());
          out.writeUTF(f.status());
          writeBytes(out, f.result());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode an invocation-log batch", e);
    }
    return bytes.toByteArray();
  }

  private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b.length);
    out.write(b);
  }

  static List<Write> decode(byte[] batch) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(batch))) {
      int n = in.readInt();
      List<Write> writes = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        byte type = in.readByte();
        if (type == BEGIN || type == BEGIN_WITH_DEADLINE) {
          Begin b = new Begin(in.readUTF(), in.readUTF(), in.readInt(), readBytes(in), in.readUTF());
          writes.add(type == BEGIN ? b : new Begin(b.invocationId(), b.graph(), b.graphVersion(), b.request(),
              b.frontend(), in.readLong()));
        } else {
          writes.add(new Finish(in.readUTF(), in.readUTF(), readBytes(in)));
        }
      }
      return writes;
    } catch (IOException e) {
      throw new VoltAbortException("malformed invocation-log batch: " + e.getMessage());
    }
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    byte[] b = new byte[in.readInt()];
    in.readFully(b);
    return b;
  }
}

package org.apiary.runtime.procedure;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.VoltProcedure.VoltAbortException;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * The provenance of ended invocations ({@value ProvenanceSchema#INVOCATIONS}, issue 43), captured by the
 * transactions that store an invocation's outcome ({@link InvocationLogBatch}'s compare-and-set from RUNNING, and
 * {@link CancelInvocation}): each reads the ended invocation's log entry in its last batch ({@link #ENTRY_SQL}) and
 * hands the row to this server's spooler, the path every function execution's row takes to the sink. An outcome
 * that was not stored (the invocation had ended already) captures nothing, so each ending is captured once; a
 * transaction the journal replays after a crash captured its rows when it first ran.
 *
 * <p>Its members are public because VoltDB loads the procedures with a class loader of its own, from which
 * package-private members of this class (loaded by the application's) cannot be reached.
 */
public final class InvocationEnds {
  private static final Logger LOG = System.getLogger(InvocationEnds.class.getName());

  /** The log entry of an invocation whose outcome this transaction stored: what its provenance row holds. */
  public static final String ENTRY_SQL = "SELECT graph, graph_version, frontend, attempts, started_at, finished_at, "
      + "request, result FROM " + SystemSchema.INVOCATIONS + " WHERE invocation_id = ?;";

  private InvocationEnds() {}

  /** The server's capture, if it captures provenance and this transaction is not a replay of the journal. */
  public static Optional<ServerProvenance> capture() {
    org.apiary.runtime.journal.ServerJournal journal = org.apiary.runtime.journal.ServerJournal.current();
    if (journal != null && journal.replaying()) {
      return Optional.empty();
    }
    return ServerProvenance.active();
  }

  /**
   * The {@value ProvenanceSchema#INVOCATIONS} row of an ended invocation, from its log entry as {@link #ENTRY_SQL}
   * read it after this transaction stored the outcome; empty if the entry is gone.
   *
   * @param status the status this transaction stored ({@code DONE}, {@code FAILED} or {@code CANCELED})
   */
  public static Optional<ProvenanceRow> row(String invocationId, String status, VoltTable entry) {
    entry.resetRowPosition();
    if (!entry.advanceRow()) {
      return Optional.empty();
    }
    String graph = entry.getString(0);
    int version = (int) entry.getLong(1);
    String frontend = entry.getString(2);
    long attemptsValue = entry.getLong(3);
    Integer attempts = entry.wasNull() ? null : (int) attemptsValue;
    Instant started = instant(entry.getTimestampAsTimestamp(4));
    Instant finished = instant(entry.getTimestampAsTimestamp(5));
    byte[] request = entry.getVarbinary(6);
    byte[] result = entry.getVarbinary(7);
    return Optional.of(new ProvenanceRow(ProvenanceSchema.INVOCATIONS, Arrays.asList(invocationId, graph, version,
        status, error(invocationId, status, result), started, finished, frontend, caller(invocationId, request),
        attempts, org.apiary.internal.wire.WireRequest.traceContext(request).validTraceparent())));
  }

  /**
   * Hands rows to the server's spooler; with durable capture a failure to make them durable aborts the transaction
   * (the outcomes are then not stored, and their frontends store them again later).
   */
  public static void offer(ServerProvenance provenance, List<ProvenanceRow> rows) {
    if (rows.isEmpty()) {
      return;
    }
    try {
      provenance.offer(rows);
    } catch (java.io.UncheckedIOException e) {
      throw new VoltAbortException("provenance capture of " + rows.size() + " ended invocation(s) failed, so their "
          + "outcomes were not stored (they are stored again later): " + e.getMessage());
    }
  }

  private static Instant instant(TimestampType t) {
    if (t == null) {
      return null;
    }
    long micros = t.getTime();
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  /**
   * The error of an outcome that is not a success, as {@code apiary executions show} prints it: its kind, the
   * function and its exception type if a function failed, and the message, cut to
   * {@value ProvenanceSchema#MAX_ERROR_CHARS} characters; {@code null} for a success.
   */
  public static String error(String invocationId, String status, byte[] result) {
    if (SystemSchema.STATUS_DONE.equals(status) || result == null) {
      return null;
    }
    WireReply r;
    try {
      r = WireReply.fromBytes(result);
    } catch (IllegalArgumentException e) {
      LOG.log(Level.WARNING, "the stored outcome of invocation " + invocationId + " cannot be decoded (" + e.getMessage()
          + "); its Invocations row says so as its error");
      return cut("(the stored outcome cannot be decoded: " + e.getMessage() + ")");
    }
    StringBuilder s = new StringBuilder(String.valueOf(r.error()));
    if (r.function() != null) {
      s.append(" in function '").append(r.function()).append('\'');
    }
    if (r.functionError() != null) {
      s.append(" (").append(r.functionError()).append(')');
    }
    return cut(s.append(": ").append(r.message()).toString());
  }

  private static String cut(String text) {
    return text.length() <= ProvenanceSchema.MAX_ERROR_CHARS ? text
        : text.substring(0, ProvenanceSchema.MAX_ERROR_CHARS - 3) + "...";
  }

  /**
   * The caller of a logged request (its top-level {@code caller} field: the frontend logs the established caller,
   * never a client's claim where keys are required, and never a secret), read without parsing the arguments;
   * {@code null} if it names none. A request that cannot be read is logged and gives {@code null}: the outcome is
   * stored all the same.
   */
  public static String caller(String invocationId, byte[] request) {
    if (request == null) {
      return null;
    }
    try (JsonParser p = Json.MAPPER.createParser(request)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("a request is a JSON object, not " + p.currentToken());
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("caller".equals(field)) {
          return value == JsonToken.VALUE_NULL ? null : p.getValueAsString();
        }
        p.skipChildren();
      }
      return null;
    } catch (IOException e) {
      LOG.log(Level.WARNING, "the logged request of invocation " + invocationId + " cannot be read for its caller ("
          + e.getMessage() + "); its Invocations row names no caller");
      return null;
    }
  }
}

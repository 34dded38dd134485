package org.apiary.runtime.procedure;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apiary.ApiaryFunction;
import org.apiary.FunctionFailedException;
import org.apiary.runtime.SystemSchema;
import org.apiary.internal.Output;
import org.apiary.ProvenanceLevel;
import org.apiary.QueryResult;
import org.apiary.Statement;
import org.apiary.internal.FunctionAccess;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.FunctionRuntime;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.internal.TabularResult;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.provenance.CapturedValues;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.exceptions.ConstraintFailureException;
import org.voltdb.exceptions.TransactionRestartException;
import org.apiary.internal.RecordedElsewhereException;
import org.voltdb.types.TimestampType;

/**
 * The VoltDB side of every compiled function: the generated stored procedure for a function extends this class,
 * declares the function's statements as {@link SQLStmt} fields and calls {@link #runFunction}. This is the only
 * place user functions meet VoltDB.
 *
 * <p>A recordable function (paper section 5.4) asked to record first looks up its outputs from an earlier
 * execution under (partition key, invocation ID, function); if found it returns them without running, otherwise it
 * runs and inserts its outputs in the same transaction. VoltDB runs one transaction at a time per partition (and
 * global ones alone), so two concurrent executions of the same instance cannot both miss the record.
 */
public abstract class FunctionProcedure extends JournaledProcedure {
  /** The column of the table a function returns that holds its encoded outputs. */
  public static final String OUTPUTS_COLUMN = "OUTPUTS";
  /** The column that says whether the outputs were replayed from a recorded earlier execution (1) or not (0). */
  public static final String REPLAYED_COLUMN = "REPLAYED";
  /** {@link #OUTPUTS_COLUMN}'s position in the result (reading by position skips a lookup by name per call). */
  public static final int OUTPUTS_INDEX = 0;
  /** {@link #REPLAYED_COLUMN}'s position in the result. */
  public static final int REPLAYED_INDEX = 1;

  private final String functionName;
  private final Map<String, StatementBinding> statements = new HashMap<>();
  private final Map<String, Capture> captures = new HashMap<>();
  private SQLStmt findRecorded;
  /** Whether any of the function's statements writes. */
  private boolean writes;
  private SQLStmt record;
  private boolean recordsCaller;
  /** Reads retention's fence ({@link SystemSchema#RETENTION_FENCE_SQL}); {@code null} if compiled before it existed. */
  private SQLStmt retentionFence;

  /** Facts the compiler established about one statement. */
  protected record StatementBinding(SQLStmt stmt, boolean readOnly, int partitionParameter, String partitionColumn) {}

  protected FunctionProcedure(String functionName) {
    this.functionName = functionName;
  }

  /** Called by the generated constructor once its statement fields are set. */
  protected final void bind(SQLStmt stmt, String sql, boolean readOnly, int partitionParameter, String partitionColumn) {
    statements.put(sql, new StatementBinding(stmt, readOnly, partitionParameter, partitionColumn));
    writes |= !readOnly;
  }

  /**
   * A read's capturing form: the same query returning, after its own columns, the primary key of every table row
   * in each result row ({@code keys}: one {@code QUALIFIER.TABLE.COLUMN} per added column).
   */
  private record Capture(SQLStmt stmt, String[] qualifiers, String[] tables, String[] columns) {}

  /** Called by the generated constructor for each read whose rows can be captured. */
  protected final void bindCapture(String sql, SQLStmt stmt, String[] keys) {
    String[] qualifiers = new String[keys.length];
    String[] tables = new String[keys.length];
    String[] columns = new String[keys.length];
    for (int i = 0; i < keys.length; i++) {
      String[] parts = keys[i].split("\\.", 3);
      qualifiers[i] = parts[0];
      tables[i] = parts[1];
      columns[i] = parts[2];
    }
    captures.put(sql, new Capture(stmt, qualifiers, tables, columns));
  }

  /** Called by the generated constructor of a recordable function. */
  protected final void bindRecording(SQLStmt find, SQLStmt insert) {
    this.findRecorded = find;
    this.record = insert;
  }

  /**
   * Called by the generated constructor of a recordable function compiled since schema version 7, whose insert also
   * stores the invocation's caller (procedures compiled before keep {@link #bindRecording} and store none).
   */
  protected final void bindRecordingWithCaller(SQLStmt find, SQLStmt insert) {
    bindRecording(find, insert);
    this.recordsCaller = true;
  }

  /**
   * Called by the generated constructor of a recordable function compiled since schema version 12: a recorded
   * execution whose invocation started before retention's cutoff ({@link Invocation#notBefore()}) then refuses to
   * commit.
   */
  protected final void bindRetentionFence(SQLStmt fence) {
    this.retentionFence = fence;
  }

  /** A fresh instance of the user's function. */
  protected abstract ApiaryFunction newFunction();

  /**
   * Runs the function once, as this procedure's transaction.
   *
   * @param partitionKey the partition key, or {@code null} for a global function
   * @param invocation the encoded {@link Invocation}
   * @return one table with one row holding the encoded outputs
   */
  /** Whether the running transaction will be journaled (it writes, or records its outputs). */
  private boolean journaling;
  /**
   * A global function's positions in the partitions' orders, for its provenance; {@code null} for a local one, or
   * when no provenance is captured.
   */
  private PartitionPositions positions;

  @Override
  protected boolean journalsThisTransaction() {
    return journaling;
  }

  protected final VoltTable[] runFunction(Object partitionKey, byte[] invocation) {
    long started = System.nanoTime();
    positions = partitionKey == null && ServerProvenance.active().isPresent() ? PartitionPositions.of(this) : null;
    Invocation call = Invocation.fromBytes(invocation);
    journaling = writes || call.record();
    // A global function's record lives in the partition its invocation ID hashes to.
    Object recordKey = partitionKey != null ? partitionKey : call.invocationId();
    if (call.exactlyOnce() && (call.record() ? findRecorded == null : writes)) {
      // The caller's graph version predates a redeployment that changed whether this function writes.
      throw new VoltAbortException(FunctionErrors.encode(functionName, Invocation.STALE_GRAPH, "function '"
          + functionName + "' " + (writes ? "writes, but was called unrecorded" : "no longer writes, but was asked to "
          + "record") + " by graph '" + call.graph() + "' as its caller knows it; the graph was registered again"));
    }
    if (call.record() && findRecorded == null) {
      throw new VoltAbortException(FunctionErrors.encode(functionName, new IllegalStateException(
          "function '" + functionName + "' was asked to record its outputs but was not registered as recordable; "
              + "register its graphs again")));
    }
    if (call.record() && recordKey instanceof String text
        && text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > SystemSchema.RECORDED_KEY_BYTES) {
      throw new VoltAbortException(FunctionErrors.encode(functionName, "KeyTooLong", "partition key of "
          + text.length() + " characters is longer than the " + SystemSchema.RECORDED_KEY_BYTES + " bytes under "
          + "which a recorded function's outputs can be stored"));
    }
    if (call.record() && recordKey instanceof byte[] bytes && bytes.length > SystemSchema.RECORDED_KEY_BYTES) {
      throw new VoltAbortException(FunctionErrors.encode(functionName, "KeyTooLong", "partition key of "
          + bytes.length + " bytes is longer than the " + SystemSchema.RECORDED_KEY_BYTES + " bytes under which a "
          + "recorded function's outputs can be stored"));
    }
    if (call.record() && !call.firstRun()) {
      voltQueueSQL(findRecorded, recordKey, call.invocationId(), functionName);
      VoltTable earlier = voltExecuteSQL()[0];
      if (earlier.advanceRow()) {
        byte[] recorded = earlier.getVarbinary(0);
        long recordedHash = earlier.getLong(1);
        if (call.requestHash() != null && !earlier.wasNull() && recordedHash != call.requestHash()) {
          throw new VoltAbortException(FunctionErrors.encode(functionName, Invocation.CONFLICTING_REQUEST,
              "invocation ID " + call.invocationId() + " was already used for a different request with this "
                  + "partition key; use a new ID"));
        }
        var failure = FunctionErrors.fromRecorded(recorded);
        if (failure.isPresent()) { // an earlier execution failed and recorded its failure: replay it
          FunctionFailedException f = failure.get();
          throw new VoltAbortException(FunctionErrors.encode(f.functionName(), f.errorType(), f.errorMessage()));
        }
        captureIfActive(call, partitionKey, null, started, ProvenanceSchema.MODE_RECORDED);
        return result(recorded, true);
      }
    }
    if (call.record() && call.deadline() != null && getTransactionTime().getTime() > call.deadline()) {
      throw new VoltAbortException(FunctionErrors.encode(functionName, Invocation.EXPIRED, "invocation "
          + call.invocationId() + " reached the database at " + getTransactionTime().getTime() + " ms since the epoch, "
          + (getTransactionTime().getTime() - call.deadline()) + " ms after its deadline (its client's expiry plus the "
          + "clock skew allowed); it was not started, since retention may have deleted the record of an earlier run"));
    }
    refuseIfDiskIsShort();
    Runtime runtime = new Runtime(partitionKey, call);
    try {
      FunctionAccess.run(newFunction(), runtime);
    } catch (TransactionRestartException e) {
      throw e; // VoltDB's own control flow for multi-partition transactions: let it restart us.
    } catch (Throwable e) {
      throw new VoltAbortException(failure(functionName, e));
    }
    byte[] outputs = FunctionOutputs.encode(runtime.outputs);
    if (outputs.length > SystemSchema.MAX_OUTPUTS_BYTES) {
      throw new VoltAbortException(FunctionErrors.encode(functionName, "OutputTooLarge", "function '" + functionName
          + "' returned " + outputs.length + " bytes of outputs; at most " + SystemSchema.MAX_OUTPUTS_BYTES
          + " bytes can be returned (and recorded) per execution"));
    }
    // Statements the function left queued run now, as the transaction's last batch, together with the record.
    int trailing = runtime.queued.size();
    if (call.record()) {
      if (recordsCaller) {
        voltQueueSQL(record, recordKey, call.invocationId(), functionName, outputs, getTransactionTime(),
            call.requestHash(), call.caller());
      } else {
        voltQueueSQL(record, recordKey, call.invocationId(), functionName, outputs, getTransactionTime(),
            call.requestHash());
      }
    }
    // The fence is read in the last batch, so checking it costs no extra round trip to the execution engine; a
    // refusal rolls back everything the function did.
    boolean fenced = call.record() && call.notBefore() != null && retentionFence != null;
    if (fenced) {
      voltQueueSQL(retentionFence);
    }
    if (call.record() || trailing > 0) {
      VoltTable[] tables;
      try {
        tables = voltExecuteSQL(true);
      } catch (ConstraintFailureException e) {
        if (call.record() && e.getTableName() != null
            && SystemSchema.recordedTables().contains(e.getTableName().toUpperCase(java.util.Locale.ROOT))) {
          // Only a first run skipped the lookup; a concurrent retry recorded this instance first. Roll back.
          throw new VoltAbortException(FunctionErrors.encode(functionName, new RecordedElsewhereException(
              "outputs of function '" + functionName + "' for invocation " + call.invocationId()
                  + " were recorded by a concurrent execution", e)));
        }
        throw new VoltAbortException(failure(functionName, e));
      } catch (TransactionRestartException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new VoltAbortException(failure(functionName, e));
      }
      runtime.readsOfTrailingBatch(tables);
      if (fenced) {
        VoltTable fence = tables[tables.length - 1];
        if (fence.advanceRow() && fence.getLong(0) > call.notBefore()) {
          throw new VoltAbortException(FunctionErrors.encode(functionName, Invocation.PAST_RETENTION, "invocation "
              + call.invocationId() + " started before retention's cutoff (" + fence.getLong(0) + " ms since the "
              + "epoch, its start less the clock skew between hosts " + call.notBefore() + " ms): its records may have "
              + "been deleted, so function '" + functionName + "' was not run again; its outcome is no longer kept"));
        }
      }
    }
    captureIfActive(call, partitionKey, runtime, started, ProvenanceSchema.MODE_RAN);
    if (writes || call.record()) {
      journal(call.invocationId(), call.graph(), call.graphVersion(), org.apiary.journal.JournalFormat.hash(outputs));
    }
    return result(outputs, false);
  }

  /** The error type of a statement that broke a constraint (a duplicate key, a NULL in a NOT NULL column, ...). */
  public static final String CONSTRAINT_VIOLATION = "ConstraintViolation";

  /**
   * A function's failure as the status text it aborts with. A broken constraint becomes one line naming the table, the
   * constraint and the row, typed {@link #CONSTRAINT_VIOLATION}, instead of VoltDB's exception with its multi-line
   * table dump.
   */
  static String failure(String functionName, Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ConstraintFailureException cfe) {
        return FunctionErrors.encode(functionName, CONSTRAINT_VIOLATION, describe(cfe));
      }
    }
    return FunctionErrors.encode(functionName, e);
  }

  private static String describe(ConstraintFailureException e) {
    String constraint = e.getType() == null ? "a constraint" : switch (e.getType()) {
      case PRIMARY_KEY -> "the primary key";
      case UNIQUE -> "a unique key (the primary key or a unique index)";
      case NOT_NULL -> "a NOT NULL column";
      case LIMIT -> "the row limit";
      case PARTITIONING -> "the partitioning (the row belongs to another partition)";
      default -> "a " + e.getType().name() + " constraint";
    };
    StringBuilder row = new StringBuilder();
    VoltTable tuples = e.getTuples();
    if (tuples != null && tuples.advanceRow()) {
      for (int i = 0; i < tuples.getColumnCount(); i++) {
        Object value = tuples.get(i, tuples.getColumnType(i));
        row.append(i == 0 ? "" : ", ").append(tuples.getColumnName(i)).append('=')
            .append(tuples.wasNull() ? "NULL" : String.valueOf(value));
      }
    }
    String shown = row.length() > 200 ? row.substring(0, 200) + "..." : row.toString();
    return "a statement broke " + constraint + " of table " + e.getTableName()
        + (shown.isEmpty() ? "" : " with the row (" + shown + ")")
        + (e.getType() == org.voltdb.types.ConstraintType.PRIMARY_KEY
            || e.getType() == org.voltdb.types.ConstraintType.UNIQUE ? ": a row with that key exists" : "");
  }

  /**
   * Refuses to run the function while a volume the server writes is below its disk reserve (see
   * {@link ServerProvenance#refusal}): a function that writes, or any with durable capture. The refusal is not the
   * function's failure (it is not encoded as one), so a frontend retries the call like any other the database
   * refused. A transaction the journal replays is never refused: it committed before the crash.
   */
  private void refuseIfDiskIsShort() {
    org.apiary.runtime.journal.ServerJournal journal = org.apiary.runtime.journal.ServerJournal.current();
    if (journal != null && journal.replaying()) {
      return;
    }
    ServerProvenance.active().flatMap(p -> p.refusal(writes)).ifPresent(reason -> {
      throw new VoltAbortException("function '" + functionName + "' was not run: " + reason);
    });
  }

  /**
   * Captures this execution's provenance if the server captures any, unless the journal replays the transaction
   * after a crash (it captured its provenance when it first ran). With durable capture, a failure to make it durable
   * rolls the transaction back.
   *
   * @param runtime the run's runtime, whose reads are captured; {@code null} for an execution answered from its
   *     recorded outputs, which read nothing
   * @param mode {@link ProvenanceSchema#MODE_RAN} or {@link ProvenanceSchema#MODE_RECORDED}
   */
  private void captureIfActive(Invocation call, Object partitionKey, Runtime runtime, long started, String mode) {
    org.apiary.runtime.journal.ServerJournal journal = org.apiary.runtime.journal.ServerJournal.current();
    if (journal != null && journal.replaying()) {
      return;
    }
    ServerProvenance.active().ifPresent(p -> {
      try {
        captureExecution(p, call, partitionKey, runtime, started, mode);
      } catch (java.io.UncheckedIOException e) {
        // Durable capture could not be written: committing now would lose this execution's provenance.
        throw new VoltAbortException(FunctionErrors.encode(functionName, new IllegalStateException(
            "provenance capture failed, so the transaction was rolled back: " + e.getMessage(), e)));
      }
    });
  }

  /**
   * Hands the committed execution's provenance to the server's buffer: the invocation, its latency, its mode and the
   * rows it read, all under the execution's identity (see {@link org.apiary.runtime.provenance.ExecutionIds}). An
   * execution answered from its recorded outputs did not run the function: its row has mode
   * {@link ProvenanceSchema#MODE_RECORDED} and it has no reads (nor writes: it wrote nothing).
   */
  private void captureExecution(ServerProvenance p, Invocation call, Object partitionKey, Runtime runtime,
                                long started, String mode) {
    org.apiary.runtime.provenance.ExecutionIds.ExecutionId id = TransactionIds.of(this);
    Instant time = getTransactionTime().toInstant();
    int reads = runtime == null ? 0 : runtime.reads.size();
    List<ProvenanceRow> rows = new ArrayList<>(1 + reads);
    rows.add(new ProvenanceRow(ProvenanceSchema.FUNCTION_INVOCATIONS, Arrays.asList(time, id.execId(), id.txId(),
        id.execSeq(), id.partitionId(), functionName, call.graph(), call.invocationId(),
        partitionKey == null ? null : describe(partitionKey), call.caller(), (System.nanoTime() - started) / 1_000L,
        call.purpose(), call.callerRoles(), mode)));
    boolean readOnly = positions != null && RunningTransaction.of(this).isReadOnly();
    if (positions != null && !readOnly) {
      // Its writes are exported with its position on each partition: name the execution for each (see
      // ProvenanceSchema.multiPartitionPositions). A read-only one has no position of its own (nor writes).
      positions.positions().forEach((partition, position) -> rows.add(new ProvenanceRow(
          ProvenanceSchema.MULTI_PARTITION_POSITIONS, Arrays.asList(id.execId(), partition, position))));
    }
    for (int i = 0; i < reads; i++) {
      CapturedRead read = runtime.reads.get(i);
      long seq = i;
      // A global function's read takes its place in the order of the record's partition: its transaction's
      // position there (a read-only one's is the last writer's, which it follows, as exec_seq 1 says).
      int partition = positions == null ? -1
          : PartitionPositions.partitionOf(read.table(), read.keyColumns(), read.keyValues());
      Long position = partition < 0 ? null : positions.positions().get(partition);
      p.eventsTable(read.table()).ifPresent(t -> {
        Object[] values = new Object[t.columns().size()];
        values[0] = time;
        values[1] = id.execId();
        values[2] = position != null ? position : id.txId();
        values[3] = position != null && readOnly ? 1L : id.execSeq();
        values[4] = position != null ? partition : id.partitionId();
        values[5] = ProvenanceSchema.READ;
        values[6] = seq;
        for (int k = 0; k < read.keyColumns().size(); k++) {
          int at = t.indexOf(read.keyColumns().get(k));
          if (at >= 0) {
            values[at] = CapturedValues.value(read.keyValues().get(k));
          }
        }
        rows.add(new ProvenanceRow(t.name(), Arrays.asList(values)));
      });
    }
    p.offer(rows);
  }

  /** One row a statement returned from one table: which table and its primary-key values. */
  record CapturedRead(String table, List<String> keyColumns, List<Object> keyValues) {}

  /**
   * The result's schema, copied for each result (cheaper than building the column list again per execution). One per
   * procedure instance: VoltDB gives each site its own, and copying moves the template's buffer position.
   */
  private final VoltTable resultSchema = new VoltTable(
      new VoltTable.ColumnInfo(OUTPUTS_COLUMN, VoltType.VARBINARY), new VoltTable.ColumnInfo(REPLAYED_COLUMN,
      VoltType.TINYINT));

  private VoltTable[] result(byte[] outputs, boolean replayed) {
    VoltTable result = resultSchema.clone(outputs.length + 16);
    result.addRow(outputs, replayed ? (byte) 1 : (byte) 0);
    return new VoltTable[] {result};
  }

  private final class Runtime implements FunctionRuntime {
    private final Object partitionKey;
    private final Invocation invocation;
    private final List<StatementBinding> queued = new ArrayList<>();
    private final List<Capture> queuedCaptures = new ArrayList<>();
    private final boolean capturing = ServerProvenance.active().isPresent();
    private final boolean capturingReads = ServerProvenance.active().map(ServerProvenance::capturesReads).orElse(false);
    private final List<Output> outputs = new ArrayList<>();
    private final List<CapturedRead> reads = new ArrayList<>();

    Runtime(Object partitionKey, Invocation invocation) {
      this.partitionKey = partitionKey;
      this.invocation = invocation;
    }

    @Override
    public String functionName() {
      return functionName;
    }

    @Override
    public List<JsonNode> inputs(String edge) {
      return invocation.inputs().getOrDefault(edge, List.of());
    }

    @Override
    public void queue(Statement statement, Object[] args, ProvenanceLevel level) {
      StatementBinding binding = statements.get(statement.sql());
      if (binding == null) {
        throw new IllegalArgumentException("statement \"" + statement.sql() + "\" is not declared as a static "
            + "Statement field of function '" + functionName + "', so it was not compiled into its procedure");
      }
      Object[] params = new Object[args.length];
      for (int i = 0; i < args.length; i++) {
        params[i] = toVoltValue(args[i]);
      }
      checkPartition(binding, params, statement);
      Capture capture = capturingReads && level == ProvenanceLevel.READS_AND_WRITES ? captures.get(statement.sql()) : null;
      voltQueueSQL(capture != null ? capture.stmt() : binding.stmt(), params);
      queued.add(binding);
      queuedCaptures.add(capture);
    }

    private void checkPartition(StatementBinding binding, Object[] params, Statement statement) {
      int p = binding.partitionParameter();
      if (partitionKey == null || p < 0 || p >= params.length) {
        return;
      }
      if (!sameKey(params[p], partitionKey)) {
        throw new IllegalArgumentException("statement \"" + statement.sql() + "\" of function '" + functionName
            + "': parameter " + (p + 1) + " sets partition column " + binding.partitionColumn()
            + " and must equal this execution's partition key " + describe(partitionKey) + ", but is "
            + describe(params[p]) + "; a local function only reaches its own partition");
      }
    }

    /** Captures what the statements left queued at return read; their results are the batch's first tables. */
    void readsOfTrailingBatch(VoltTable[] tables) {
      for (int i = 0; i < queuedCaptures.size(); i++) {
        if (queuedCaptures.get(i) != null) {
          recordReads(tables[i], queuedCaptures.get(i));
        }
      }
      queued.clear();
      queuedCaptures.clear();
    }

    @Override
    public List<QueryResult> execute() {
      if (queued.isEmpty()) {
        return List.of();
      }
      VoltTable[] tables = voltExecuteSQL();
      List<QueryResult> results = new ArrayList<>(tables.length);
      for (int i = 0; i < tables.length; i++) {
        Capture capture = queuedCaptures.get(i);
        int keyColumns = capture == null ? 0 : capture.columns().length;
        if (capture != null) {
          recordReads(tables[i], capture);
        }
        results.add(toResult(tables[i], !queued.get(i).readOnly(), tables[i].getColumnCount() - keyColumns));
      }
      queued.clear();
      queuedCaptures.clear();
      return results;
    }

    /** One read per table row in each result row: its table and key, from the key columns at the end. */
    private void recordReads(VoltTable t, Capture c) {
      int first = t.getColumnCount() - c.columns().length;
      t.resetRowPosition();
      while (t.advanceRow()) {
        int i = 0;
        while (i < c.columns().length) {
          int end = i;
          while (end < c.columns().length && c.qualifiers()[end].equals(c.qualifiers()[i])) {
            end++;
          }
          List<String> names = new ArrayList<>(end - i);
          List<Object> values = new ArrayList<>(end - i);
          boolean present = false;
          for (int k = i; k < end; k++) {
            Object v = t.get(first + k, t.getColumnType(first + k));
            boolean isNull = t.wasNull();
            present |= !isNull;
            names.add(c.columns()[k].toLowerCase(java.util.Locale.ROOT));
            values.add(isNull ? null : v);
          }
          if (present) { // an outer join's null-extended side read no row
            reads.add(new CapturedRead(c.tables()[i], names, values));
          }
          i = end;
        }
      }
      t.resetRowPosition();
    }

    @Override
    public void output(String edge, Object value, Object key) {
      if (edge == null || edge.isBlank()) {
        throw new IllegalArgumentException("function '" + functionName + "' returned an output without an edge");
      }
      JsonNode keyTree = key == null ? null : Json.tree(key);
      JsonNode valueTree = Json.output(value);
      Map<String, Invocation.OutputEdge> edges = invocation.outputEdges();
      if (edges != null && !Output.ENQUEUE_EDGE.equals(edge)) { // an enqueue is checked where it is stored
        checkOutput(edge, edges, valueTree, keyTree);
      }
      outputs.add(new Output(edge, keyTree, valueTree));
    }

    /** An output the graph cannot route fails the function here, inside its transaction, so its writes roll back. */
    private void checkOutput(String edge, Map<String, Invocation.OutputEdge> edges, JsonNode value, JsonNode key) {
      Invocation.OutputEdge out = edges.get(edge);
      if (out == null) {
        throw new IllegalArgumentException("function '" + functionName + "' returned a value on edge '" + edge
            + "', but graph '" + invocation.graph() + "' has no edge '" + edge + "' out of it; its edges are "
            + edges.keySet());
      }
      if (!out.kind().accepts(value)) {
        throw new IllegalArgumentException("function '" + functionName + "' sent "
            + org.apiary.internal.ValueKind.describe(value) + " on edge '" + edge + "', which carries "
            + out.kind().describe());
      }
      if (out.targetKey() != null) {
        if (key == null) {
          throw new IllegalArgumentException("function '" + functionName + "' sent a value on edge '" + edge
              + "' into a local function without a partition key; send it with returnOutput(value, edge, key)");
        }
        try {
          out.targetKey().fromJson(key, "partition key");
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("function '" + functionName + "' sent a value on edge '" + edge
              + "' with partition key " + key + ", but the local function it leads to is keyed by "
              + out.targetKey().javaType().getSimpleName() + ": " + e.getMessage(), e);
        }
      }
    }

    @Override
    public Object partitionKey() {
      return partitionKey;
    }

    @Override
    public Instant transactionTime() {
      return getTransactionTime().toInstant();
    }

    @Override
    public long uniqueId() {
      return getUniqueId();
    }

    @Override
    public Random random() {
      return getSeededRandomNumberGenerator();
    }
  }

  private static boolean sameKey(Object param, Object key) {
    if (param instanceof Number a && key instanceof Number b) {
      return a.longValue() == b.longValue();
    }
    if (param instanceof byte[] a && key instanceof byte[] b) {
      return Arrays.equals(a, b);
    }
    return param != null && param.equals(key);
  }

  private static String describe(Object v) {
    return v instanceof byte[] b ? "0x" + java.util.HexFormat.of().formatHex(b) : String.valueOf(v);
  }

  private static Object toVoltValue(Object v) {
    if (v instanceof Instant i) {
      return new TimestampType(i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000);
    }
    if (v instanceof Boolean b) {
      return b ? (byte) 1 : (byte) 0;
    }
    return v;
  }

  /**
   * A VoltDB result as the {@link QueryResult} functions and {@code Apiary.query} return: its first
   * {@code visibleColumns} columns, timestamps as {@link Instant}, SQL NULL as {@code null}.
   */
  public static QueryResult toResult(VoltTable table, boolean isWrite, int visibleColumns) {
    int n = visibleColumns;
    List<String> columns = new ArrayList<>(n);
    for (int c = 0; c < n; c++) {
      columns.add(table.getColumnName(c));
    }
    List<Object[]> rows = new ArrayList<>(table.getRowCount());
    table.resetRowPosition();
    while (table.advanceRow()) {
      Object[] row = new Object[n];
      for (int c = 0; c < n; c++) {
        VoltType type = table.getColumnType(c);
        Object value = table.get(c, type);
        row[c] = table.wasNull() ? null : fromVoltValue(value);
      }
      rows.add(row);
    }
    return new TabularResult(columns, rows, isWrite);
  }

  private static Object fromVoltValue(Object v) {
    if (v instanceof TimestampType t) {
      long micros = t.getTime();
      return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }
    return v;
  }
}

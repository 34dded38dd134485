package org.apiary.runtime;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apiary.DatabaseException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.PartitionKeyType;
import org.voltdb.VoltTable;

/**
 * Apiary's own tables and procedures in the application's database, defined here and nowhere else, as numbered
 * migrations ({@link #ensure}): the database records the version it has, and each start applies the later ones in
 * order, each in one catalog update. To change the system schema, append a migration (see {@code MIGRATIONS}).
 *
 * <ul>
 *   <li>{@value #FUNCTIONS}: the deployed functions;</li>
 *   <li>{@value #GRAPHS}: the registered graphs, so every frontend can serve every graph;</li>
 *   <li>{@code APIARY_RECORDED_*}: recorded function outputs for exactly-once, one table per partition key family,
 *       partitioned like the functions that write them so the record commits in the function's transaction;</li>
 *   <li>{@value #INVOCATIONS}: the invocation log (each graph invocation before it starts, and its outcome);</li>
 *   <li>{@value #FRONTENDS}: frontend leases, so live frontends can find dead ones' unfinished invocations.</li>
 * </ul>
 */
public final class SystemSchema {
  public static final String VERSION_TABLE = "APIARY_SCHEMA_VERSION";
  public static final String FUNCTIONS = "APIARY_FUNCTIONS";
  public static final String GRAPHS = "APIARY_GRAPHS";
  public static final String INVOCATIONS = "APIARY_INVOCATIONS";
  /** {@link #INVOCATIONS}' status of an invocation that has not ended. */
  public static final String STATUS_RUNNING = "RUNNING";
  /** {@link #INVOCATIONS}' status of an invocation that ended with a result for the client. */
  public static final String STATUS_DONE = "DONE";
  /** {@link #INVOCATIONS}' status of an invocation that ended with a function's failure. */
  public static final String STATUS_FAILED = "FAILED";
  /**
   * {@link #INVOCATIONS}' status of an invocation that was cancelled (issue 42; eight characters, the column's width,
   * hence the spelling).
   */
  public static final String STATUS_CANCELLED = "CANCELED";
  /** Cancels a running invocation: stores its outcome as {@link #STATUS_CANCELLED} (version 16). */
  public static final String CANCEL_INVOCATION = "CancelInvocation";
  /**
   * Makes a failed or cancelled invocation running again under a frontend, deleting its recorded failures (version
   * 16; the administrator's).
   */
  public static final String RESUME_INVOCATION = "ResumeInvocation";
  /**
   * An invocation's status alone (version 16): what a frontend reads, in the invocation's partition, before it starts
   * each function after an attempt's first ones, so that none starts once a cancel is stored.
   */
  public static final String INVOCATION_STATUS = "ApiaryInvocationStatus";
  /** Declared queues and their limits (issue 42): a replicated table, written at registration. */
  public static final String QUEUES = "APIARY_QUEUES";
  /** Queue items (issue 42): partitioned by queue name, so one queue's items, counts and claims share a partition. */
  public static final String QUEUE_ITEMS = "APIARY_QUEUE_ITEMS";
  /** Stores a queue's limits ({@code StoreQueue}, the administrator's, journaled). */
  public static final String STORE_QUEUE = "StoreQueue";
  /** Enqueues an item with deduplication ({@code EnqueueItem}, single-partition on the queue, journaled). */
  public static final String ENQUEUE_ITEM = "EnqueueItem";
  /** Claims queued items within the queue's limits ({@code ClaimQueueItems}, single-partition, journaled). */
  public static final String CLAIM_QUEUE_ITEMS = "ClaimQueueItems";
  /** Marks a running item ended ({@code FinishQueueItem}, single-partition, journaled). */
  public static final String FINISH_QUEUE_ITEM = "FinishQueueItem";
  /** Gives a dead frontend's running items back to their queue ({@code ReleaseQueueItems}, single-partition). */
  public static final String RELEASE_QUEUE_ITEMS = "ReleaseQueueItems";
  /** Deletes a queue's items that ended before the retention ({@code ExpireQueueItems}, single-partition). */
  public static final String EXPIRE_QUEUE_ITEMS = "ExpireQueueItems";
  /**
   * Finds a queue item by its invocation ID alone ({@code ApiaryFindQueueItem}, a multi-partition read): parameter
   * the invocation ID; returns queue name and status. Used only for an ID the invocation log does not know.
   */
  public static final String FIND_QUEUE_ITEM = "ApiaryFindQueueItem";
  /** Enqueues an item, optionally delayed ({@code EnqueueItemAt}, version 19; replaces {@link #ENQUEUE_ITEM}). */
  public static final String ENQUEUE_ITEM_AT = "EnqueueItemAt";
  /** Claims due items within the queue's limits ({@code ClaimDueQueueItems}, version 19; replaces the claim). */
  public static final String CLAIM_DUE_QUEUE_ITEMS = "ClaimDueQueueItems";
  /** Stores a queue's limits, priority and partitioning ({@code DeclareQueue}, version 20; replaces the store). */
  public static final String DECLARE_QUEUE = "DeclareQueue";
  /** Enqueues an item with a priority and partition key ({@code EnqueueRankedItem}, version 20; replaces the enqueue). */
  public static final String ENQUEUE_RANKED_ITEM = "EnqueueRankedItem";
  /** Enqueues an item unless its request is past its deadline ({@code EnqueueItemBefore}, version 22; replaces it). */
  public static final String ENQUEUE_ITEM_BEFORE = "EnqueueItemBefore";
  /** Claims due items by priority, within per-key limits ({@code ClaimRankedQueueItems}, version 20; replaces the claim). */
  public static final String CLAIM_RANKED_QUEUE_ITEMS = "ClaimRankedQueueItems";
  /** Hands a dead frontend's running items to the taker ({@code AdoptQueueItems}, version 20; replaces the release). */
  public static final String ADOPT_QUEUE_ITEMS = "AdoptQueueItems";
  /** Cancels a queue item that has not started ({@code CancelQueueItem}, version 20). */
  public static final String CANCEL_QUEUE_ITEM = "CancelQueueItem";
  /**
   * Finds a queue item by its invocation ID alone, with its stored outcome ({@code ApiaryFindQueueItemOutcome}, a
   * multi-partition read, version 20; replaces {@link #FIND_QUEUE_ITEM}): queue name, status, outcome.
   */
  public static final String FIND_QUEUE_ITEM_OUTCOME = "ApiaryFindQueueItemOutcome";
  /**
   * Whether a frontend still holds a queue item it claimed, with the read's time (issue 42, version 22; parameters:
   * queue name, invocation ID): status and frontend.
   */
  public static final String CONFIRM_QUEUE_CLAIM = "ConfirmQueueClaim";
  /**
   * Schedules (issue 42): one row per schedule, partitioned by the name of its queue ({@code schedule.NAME}), so a
   * schedule, its ticks' items and their claims share a partition.
   */
  public static final String SCHEDULES = "APIARY_SCHEDULES";
  /** Puts a schedule's due ticks on its queue ({@code TickSchedule}, single-partition, the frontends'). */
  public static final String TICK_SCHEDULE = "TickSchedule";
  /** Stores a schedule ({@code StoreSchedule}, single-partition, the administrator's). */
  public static final String STORE_SCHEDULE = "StoreSchedule";
  /** Pauses (1) or resumes (0) a schedule ({@code PauseSchedule}, single-partition, the administrator's). */
  public static final String PAUSE_SCHEDULE = "PauseSchedule";
  /** Puts a tick at the current time on a schedule's queue ({@code TriggerSchedule}, the administrator's). */
  public static final String TRIGGER_SCHEDULE = "TriggerSchedule";
  /** Puts every tick of a range on a schedule's queue ({@code BackfillSchedule}, the administrator's). */
  public static final String BACKFILL_SCHEDULE = "BackfillSchedule";
  /** Deletes a schedule ({@code DeleteSchedule}, the administrator's). */
  public static final String DELETE_SCHEDULE = "DeleteSchedule";
  public static final String FRONTENDS = "APIARY_FRONTENDS";
  /**
   * The migrations of the application's own schema a deploy applied (version 21): one row per migration
   * ({@code version}, {@code description}, {@code applied_at}); replicated, written only by deploys.
   */
  public static final String APPLICATION_SCHEMA = "APIARY_APPLICATION_SCHEMA";
  /** API keys (their SHA-256 hashes, never the keys) and the identities they belong to; replicated, rarely written. */
  public static final String CREDENTIALS = "APIARY_CREDENTIALS";
  /** Recorded outputs of functions keyed by BIGINT, INTEGER, SMALLINT or TINYINT (VoltDB hashes them alike). */
  public static final String RECORDED_INTEGER = "APIARY_RECORDED_INTEGER";
  /** Recorded outputs of functions keyed by VARCHAR, and of global functions (keyed by invocation ID). */
  public static final String RECORDED_VARCHAR = "APIARY_RECORDED_VARCHAR";
  /** Recorded outputs of functions keyed by VARBINARY. */
  public static final String RECORDED_VARBINARY = "APIARY_RECORDED_VARBINARY";
  /** The longest VARCHAR or VARBINARY partition key under which outputs can be recorded, in bytes. */
  public static final int RECORDED_KEY_BYTES = 1024;
  /** The most bytes of encoded outputs one function execution may return (and record). */
  public static final int MAX_OUTPUTS_BYTES = 1048576;
  /** The most bytes of an invocation's stored outcome (the reply for its clients). */
  public static final int MAX_RESULT_BYTES = 1048576;

  /**
   * The most characters of a stored invocation ID (schema version 15 on): a caller's identity (at most 128), '/',
   * and the ID its client chose (at most 64), as a frontend that requires credentials stores it; a frontend that
   * does not stores the client's ID alone.
   */
  public static final int INVOCATION_ID_CHARS = 193;

  /** Reads one invocation's log row, with its start (schema version 12 on). */
  public static final String GET_INVOCATION = "ApiaryReadInvocation";
  /** Version 4's {@link #GET_INVOCATION}, without the start; kept for frontends of earlier releases. */
  private static final String GET_INVOCATION_V4 = "ApiaryGetInvocation";
  /**
   * Retention's fence: one row (id 0) holding the latest cutoff retention applied, by the database's clock. A recorded
   * execution of an invocation that started before it refuses to run (see {@code Invocation.notBefore}). Replicated,
   * so every partition reads it locally; written once per retention pass.
   */
  public static final String RETENTION = "APIARY_RETENTION";
  /**
   * Moves {@link #RETENTION}'s cutoff forward to any cutoff, never back ({@code AdvanceRetention}): the
   * administrator's since version 14 (frontends use {@link #ADVANCE_RETENTION_BY_CLOCK}).
   */
  public static final String ADVANCE_RETENTION = "AdvanceRetention";
  /** What a recorded execution reads to learn retention's cutoff (milliseconds since the epoch; no row: none yet). */
  public static final String RETENTION_FENCE_SQL = "SELECT SINCE_EPOCH(MILLISECOND, cutoff) FROM " + RETENTION
      + " WHERE id = 0;";
  /** Hands a running invocation to a frontend for its next attempt, under a graph version ({@code ClaimInvocation}). */
  public static final String CLAIM_INVOCATION = "ClaimInvocation";
  /** The SQL-only procedures the journal could not see, which version 13 replaced by journaled ones. */
  private static final String CLAIM_INVOCATION_V4 = "ApiaryClaimInvocation";
  private static final String RENEW_LEASE_V4 = "ApiaryRenewLease";
  private static final String EXPIRE_LEASE_V4 = "ApiaryExpireLease";
  private static final String REASSIGN_INVOCATIONS_V9 = "ApiaryReassignInvocations";
  /** Begins invocations and stores outcomes, many of one partition per transaction ({@code InvocationLogBatch}). */
  public static final String LOG_BATCH = "InvocationLogBatch";
  /** Extends (or creates) a frontend's lease: a single-partition write. */
  public static final String RENEW_LEASE = "RenewLease";
  /** Deletes a frontend's lease if it has expired. */
  public static final String EXPIRE_LEASE = "ExpireLease";
  /**
   * Moves every running invocation of a frontend to another (parameters: to, from), a multi-partition write: the
   * takeover of a dead frontend's invocations.
   */
  public static final String REASSIGN_INVOCATIONS = "ReassignInvocations";
  /** Records a deployed function ({@code StoreFunction}): parameters as the columns of {@link #FUNCTIONS}. */
  public static final String STORE_FUNCTION = "StoreFunction";
  /** Stores a graph's next version ({@code StoreGraph}): parameters name, version, definition. */
  public static final String STORE_GRAPH = "StoreGraph";
  /** Version 6's unchecked denial recorder, which version 14 dropped for {@link #CHECK_AND_RECORD_DENIAL}. */
  private static final String RECORD_DENIAL_V6 = "RecordDenial";
  /**
   * Records a call refused by a graph's access policy in provenance, once the database has checked the key and the
   * policy itself ({@code CheckAndRecordDenial}): parameters invocation ID, denial ID, key ID, secret, graph, graph
   * version, purpose.
   */
  public static final String CHECK_AND_RECORD_DENIAL = "CheckAndRecordDenial";
  /**
   * Moves {@link #RETENTION}'s cutoff forward by the database's clock ({@code AdvanceRetentionByClock}): parameter the
   * retention in milliseconds; returns the fence in microseconds since the epoch (0: none).
   */
  public static final String ADVANCE_RETENTION_BY_CLOCK = "AdvanceRetentionByClock";
  /**
   * The shortest retention any frontend applies, set by the administrator: one row (id 0), {@code minimum_ms};
   * replicated. No row: {@code AdvanceRetentionByClock.MIN_RETENTION_MS}.
   */
  public static final String RETENTION_MINIMUM = "APIARY_RETENTION_MINIMUM";
  /** Sets {@link #RETENTION_MINIMUM} ({@code SetMinimumRetention}, the administrator's): parameter milliseconds. */
  public static final String SET_MINIMUM_RETENTION = "SetMinimumRetention";
  /**
   * Stores an API key in {@link #CREDENTIALS} ({@code StoreCredential}, the administrator's, journaled): parameters key
   * ID, secret hash, identity, roles (or null), expiry in milliseconds from the transaction's time (0: never).
   */
  public static final String STORE_CREDENTIAL = "StoreCredential";
  /** Revokes an API key ({@code RevokeCredential}, the administrator's, journaled): parameter key ID; returns 0 or 1. */
  public static final String REVOKE_CREDENTIAL = "RevokeCredential";
  /**
   * One row per partition ({@code pkey}, a key of the partition; {@code partition_id}; {@code mark}, always 0), only in
   * a journaled cluster (created with the journal's functions and procedures by {@code ClusterJournal}, not by a
   * migration: VoltDB's SQL functions break catalog updates in a JVM that also compiles, as embedded tests do): a multi-partition write of every row calls a function once on every site, which is
   * how such a transaction reaches every node's journal ({@link #PARTITION_MARK_SQL}, {@code JournalControl}).
   */
  public static final String PARTITIONS = "APIARY_PARTITIONS";
  /**
   * The statement of a {@code MarksPartitions} procedure (parameters: the transaction's ID, the journal's secret):
   * in a journaled cluster
   * each node appends a mark of the transaction to its journal for every partition it holds; elsewhere the table is
   * empty and nothing is called.
   */
  public static final String PARTITION_MARK_SQL = "UPDATE " + PARTITIONS
      + " SET mark = apiary_journal_mark(partition_id, ?, ?);";
  /**
   * The class a journaled cluster runs a multi-partition procedure of class {@code className} as: the same simple name
   * (so the same procedure name) in the package's {@code marked} subpackage, adding the statement that marks its place
   * in every partition's journal ({@code MarksPartitions}). Apiary's are in {@code org.apiary.runtime.procedure.marked};
   * a global function's is generated beside it ({@code apiary.generated.marked}).
   */
  public static String markedClass(String className) {
    int dot = className.lastIndexOf('.');
    return className.substring(0, dot) + ".marked" + className.substring(dot);
  }

  /** A control operation of a journaled cluster's journals (parameters: operation, argument). */
  public static final String JOURNAL_CONTROL = "JournalControl";
  /** The records one partition replays next (parameters: a key of the partition, the encoded records). */
  public static final String REPLAY_EXPECT = "ReplayExpect";
  /** The multi-partition record replayed next (parameter: the encoded record). */
  public static final String REPLAY_EXPECT_MULTI = "ReplayExpectMulti";
  /**
   * Returns once every replica of one partition has its journal on disk (parameter: a key of the partition); exists
   * only in a cluster that journals synchronously, which is how a client tells one.
   */
  public static final String JOURNAL_SYNC = "JournalSync";

  /**
   * The procedures of this schema that the frontends' VoltDB role ({@code DatabaseUsers.FRONTEND_ROLE}) may call,
   * each created with {@code ALLOW} that role; besides these it may call the deployed functions' procedures and read
   * with SQL, nothing else. A migration that adds a procedure frontends call creates it with {@code ALLOW} and adds it
   * here; every other procedure is the administrator's.
   */
  public static final Set<String> FRONTEND_PROCEDURES = Set.of(LOG_BATCH, GET_INVOCATION, CLAIM_INVOCATION,
      RENEW_LEASE, EXPIRE_LEASE, REASSIGN_INVOCATIONS, ADVANCE_RETENTION_BY_CLOCK, "FencedSweepInteger",
      "FencedSweepVarchar", "FencedSweepVarbinary", "FencedExpireInvocations", "RecordFailureInteger",
      "RecordFailureVarchar", "RecordFailureVarbinary", "ApiaryGetRecorded_INTEGER", "ApiaryGetRecorded_VARCHAR",
      "ApiaryGetRecorded_VARBINARY", "ApiaryFindOutcomeOf_INTEGER", "ApiaryFindOutcomeOf_VARCHAR",
      "ApiaryFindOutcomeOf_VARBINARY", CHECK_AND_RECORD_DENIAL, CANCEL_INVOCATION,
      INVOCATION_STATUS, ENQUEUE_ITEM, CLAIM_QUEUE_ITEMS, FINISH_QUEUE_ITEM, RELEASE_QUEUE_ITEMS, FIND_QUEUE_ITEM,
      EXPIRE_QUEUE_ITEMS, ENQUEUE_ITEM_AT, CLAIM_DUE_QUEUE_ITEMS, TICK_SCHEDULE, ENQUEUE_RANKED_ITEM,
      CLAIM_RANKED_QUEUE_ITEMS, ADOPT_QUEUE_ITEMS, CANCEL_QUEUE_ITEM, FIND_QUEUE_ITEM_OUTCOME, CONFIRM_QUEUE_CLAIM,
      ENQUEUE_ITEM_BEFORE);

  /** Procedures of version 3 that version 4 replaced by {@link #LOG_BATCH}. */
  private static final List<String> VERSION_3_PROCEDURES = List.of("ApiaryBeginInvocation", "ApiaryFinishInvocation");

  /** Retention's procedure per table (see {@link #expireProcedure}); before MIGRATIONS, whose initializer reads it. */
  private static final Map<String, Class<?>> EXPIRE_PROCEDURES = Map.of(
      RECORDED_INTEGER, org.apiary.runtime.procedure.ExpireRecordedInteger.class,
      RECORDED_VARCHAR, org.apiary.runtime.procedure.ExpireRecordedVarchar.class,
      RECORDED_VARBINARY, org.apiary.runtime.procedure.ExpireRecordedVarbinary.class,
      INVOCATIONS, org.apiary.runtime.procedure.ExpireInvocations.class);

  /** Retention's sweep procedure per recorded-outputs table (see {@link #sweepProcedure}), from version 10. */
  /** The fenced failure-recording procedure per recorded-outputs table (see {@link #recordFailureFencedProcedure}). */
  private static final Map<String, Class<?>> FAILURE_PROCEDURES = Map.of(
      RECORDED_INTEGER, org.apiary.runtime.procedure.RecordFailureInteger.class,
      RECORDED_VARCHAR, org.apiary.runtime.procedure.RecordFailureVarchar.class,
      RECORDED_VARBINARY, org.apiary.runtime.procedure.RecordFailureVarbinary.class);
  private static final Map<String, Class<?>> SWEEP_PROCEDURES = Map.of(
      RECORDED_INTEGER, org.apiary.runtime.procedure.SweepRecordedInteger.class,
      RECORDED_VARCHAR, org.apiary.runtime.procedure.SweepRecordedVarchar.class,
      RECORDED_VARBINARY, org.apiary.runtime.procedure.SweepRecordedVarbinary.class);
  /** Retention's sweep per recorded-outputs table that stops at the fence (see {@link #sweepProcedure}), version 14 on. */
  private static final Map<String, Class<?>> FENCED_SWEEP_PROCEDURES = Map.of(
      RECORDED_INTEGER, org.apiary.runtime.procedure.FencedSweepInteger.class,
      RECORDED_VARCHAR, org.apiary.runtime.procedure.FencedSweepVarchar.class,
      RECORDED_VARBINARY, org.apiary.runtime.procedure.FencedSweepVarbinary.class);

  /**
   * Every step of the system schema, in order: migration {@code n} brings a database from version {@code n - 1}
   * (or, for the first, from nothing or version 3) to version {@code n}, and {@link #VERSION} is the last one's.
   *
   * <p><b>To change the system schema, append a migration</b> with the next number; never edit one that a release
   * has shipped, and never add a table or procedure anywhere else. A migration lists {@link Step}s, each written so
   * that it does nothing if the database already has what it creates ({@link Step#createTable},
   * {@link Step#addColumn}, {@link Step#createIndex}, {@link Step#createProcedure}, {@link Step#dropProcedure}): a
   * migration must be safe to run again on a database where it was applied but its version was not yet recorded,
   * and on one where another process applied it at the same moment.
   *
   * <p>A procedure that frontends call is created with {@code ALLOW} {@code DatabaseUsers.FRONTEND_ROLE} and listed in
   * {@link #FRONTEND_PROCEDURES}; every other procedure is the administrator's alone (version 14).
   *
   * <p>A procedure's class is copied into the catalog's jar when the procedure is created, and VoltDB runs that copy
   * from then on (its catalog class loader prefers the jar's classes; superclasses not in the jar come from the
   * server's classpath): to change what a shipped procedure does, give the new code a new class and procedure name in
   * a migration. And never add a statement to a superclass of a shipped procedure: it is planned for every subclass,
   * including when an early migration creates one, before the tables the statement reads exist. For example:
   * <pre>{@code
   * new Migration(6, "APIARY_GRANTS: which identity may call which graph (issue 14)",
   *     List.of(Step.createTable("APIARY_GRANTS", "CREATE TABLE APIARY_GRANTS (...);"),
   *             Step.addColumn(CREDENTIALS, "roles", "ALTER TABLE APIARY_CREDENTIALS ADD COLUMN roles VARCHAR(256);")))
   * }</pre>
   */
  private static final List<Migration> MIGRATIONS = List.of(
      new Migration(4, "Apiary's system tables and procedures as version 4 has them (a database at version 3 gets "
          + "the request hash of one-transaction invocations, an index by invocation ID, and InvocationLogBatch "
          + "instead of the begin and finish procedures)", version4()),
      new Migration(5, "APIARY_CREDENTIALS: API keys (releases that added it created it without a new version)",
          List.of(Step.createTable(CREDENTIALS, """
              CREATE TABLE APIARY_CREDENTIALS (
                key_id VARCHAR(32) NOT NULL,
                secret_sha256 VARBINARY(32) NOT NULL,
                identity VARCHAR(128) NOT NULL,
                created_at TIMESTAMP NOT NULL,
                revoked_at TIMESTAMP,
                PRIMARY KEY (key_id)
              );"""))),
      new Migration(6, "Access control by role and purpose (issue 14): the roles of each API key, and RecordDenial, "
          + "which hands a refused call to provenance",
          List.of(Step.addColumn(CREDENTIALS, "ROLES",
                  "ALTER TABLE " + CREDENTIALS + " ADD COLUMN roles VARCHAR(1024);"),
              Step.createProcedure(RECORD_DENIAL_V6, "CREATE PROCEDURE PARTITION ON TABLE APIARY_INVOCATIONS COLUMN "
                  + "invocation_id PARAMETER 0 FROM CLASS "
                  + org.apiary.runtime.procedure.RecordDenial.class.getName() + ";"))),
      new Migration(7, "Who started each one-transaction invocation (issue 14): a caller column in the recorded-"
          + "outputs tables, so result(id) answers only the invocation's caller (and admins) where credentials are "
          + "required; the failure-recording and find-by-ID procedures that read and write it", version7()),
      new Migration(8, "Retention in bounded single-partition steps (issue 10): per table, a procedure that deletes "
          + "at most a given number of one partition's expired rows, oldest first", version8()),
      new Migration(9, "A least-privileged VoltDB role for frontends (issue 14): the role "
          + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " may call procedures and read with SQL, and the "
          + "takeover's reassignment, an ad-hoc UPDATE until now, becomes a procedure it may call", List.of(
              new Step(c -> List.of("DROP ROLE " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " IF EXISTS;",
                  "CREATE ROLE " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " WITH ALLPROC, SQLREAD;")),
              Step.createProcedure(REASSIGN_INVOCATIONS_V9, "CREATE PROCEDURE " + REASSIGN_INVOCATIONS_V9 + " AS UPDATE "
                  + INVOCATIONS + " SET frontend = ? WHERE frontend = ? AND status = 'RUNNING';"))),
      new Migration(10, "Recorded outputs without a time index (issue 10): maintaining it cost every recorded "
          + "execution an index insert and a delete; retention sweeps each partition in key order instead", version10()),
      new Migration(11, "API keys that expire (issue 14): each key's expiry, by the database's clock; NULL (every key "
          + "created before) never expires",
          List.of(Step.addColumn(CREDENTIALS, "EXPIRES_AT",
              "ALTER TABLE " + CREDENTIALS + " ADD COLUMN expires_at TIMESTAMP;"))),
      new Migration(12, "Retention's fence (issue 10): the cutoff retention applied, which a recorded execution of an "
          + "invocation that started before it refuses to run under (a frontend paused for longer than the retention "
          + "would otherwise run again what another frontend finished, once its records were deleted); the procedure "
          + "that advances it, a log read that returns each invocation's start, and failure records under the same "
          + "fences", version12()),
      new Migration(13, "Every write a journaled procedure (issue 40): the invocation log's claim and takeover and the "
          + "frontends' leases become Java procedures that hand each committed write to the journal, instead of "
          + "SQL-only procedures that run no code of Apiary's; leases expire by the transaction's time; and "
          + "registered graphs and deployed functions are stored by journaled procedures instead of ad hoc writes",
          List.of(Step.dropProcedure(CLAIM_INVOCATION_V4), Step.dropProcedure(RENEW_LEASE_V4),
              Step.dropProcedure(EXPIRE_LEASE_V4), Step.dropProcedure(REASSIGN_INVOCATIONS_V9),
              Step.createProcedure(CLAIM_INVOCATION, "CREATE PROCEDURE PARTITION ON TABLE " + INVOCATIONS
                  + " COLUMN invocation_id PARAMETER 2 FROM CLASS "
                  + org.apiary.runtime.procedure.ClaimInvocation.class.getName() + ";"),
              Step.createProcedure(RENEW_LEASE, "CREATE PROCEDURE PARTITION ON TABLE " + FRONTENDS
                  + " COLUMN frontend PARAMETER 0 FROM CLASS " + org.apiary.runtime.procedure.RenewLease.class.getName()
                  + ";"),
              Step.createProcedure(EXPIRE_LEASE, "CREATE PROCEDURE PARTITION ON TABLE " + FRONTENDS
                  + " COLUMN frontend PARAMETER 0 FROM CLASS " + org.apiary.runtime.procedure.ExpireLease.class.getName()
                  + ";"),
              Step.createProcedure(REASSIGN_INVOCATIONS, "CREATE PROCEDURE FROM CLASS "
                  + org.apiary.runtime.procedure.ReassignInvocations.class.getName() + ";"),
              Step.createProcedure(STORE_GRAPH, "CREATE PROCEDURE FROM CLASS "
                  + org.apiary.runtime.procedure.StoreGraph.class.getName() + ";"),
              Step.createProcedure(STORE_FUNCTION, "CREATE PROCEDURE FROM CLASS "
                  + org.apiary.runtime.procedure.StoreFunction.class.getName() + ";"))),
      new Migration(14, "Least privilege for frontends (issue 45): the role "
          + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " loses ALLPROC and may call only the procedures a "
          + "frontend needs (created again with ALLOW, the deployed functions' too); retention advances by the "
          + "database's clock, at least an administrator's minimum behind it (AdvanceRetentionByClock, "
          + "APIARY_RETENTION_MINIMUM, SetMinimumRetention), and its sweeps delete nothing past the fence; a refusal is "
          + "recorded only once the database has checked the key and the policy (CheckAndRecordDenial replaces "
          + "RecordDenial); API keys are stored and revoked by journaled procedures of the administrator's "
          + "(StoreCredential, RevokeCredential) instead of ad hoc writes", version14()),
      new Migration(15, "Invocation IDs scoped by caller (issue 45, finding 5): where credentials are required a "
          + "frontend stores an invocation as its caller's identity, '/', and the client's ID, so the invocation "
          + "log's and the recorded outputs' invocation_id columns widen from 64 to " + INVOCATION_ID_CHARS
          + " characters", version15()),
      new Migration(16, "Cancelling and resuming an invocation (issue 42): CancelInvocation stores a running "
          + "invocation's outcome as " + STATUS_CANCELLED + ", which its frontends check (ApiaryInvocationStatus) before "
          + "starting each later function; ResumeInvocation (the administrator's) makes a failed or cancelled one "
          + "run again from its first unfinished function", List.of(
              Step.createProcedure(CANCEL_INVOCATION, "CREATE PROCEDURE ALLOW "
                  + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " PARTITION ON TABLE " + INVOCATIONS
                  + " COLUMN invocation_id PARAMETER 0 FROM CLASS "
                  + org.apiary.runtime.procedure.CancelInvocation.class.getName() + ";"),
              Step.createProcedure(INVOCATION_STATUS, "CREATE PROCEDURE " + INVOCATION_STATUS + " ALLOW "
                  + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " PARTITION ON TABLE " + INVOCATIONS
                  + " COLUMN invocation_id PARAMETER 0 AS SELECT status FROM " + INVOCATIONS
                  + " WHERE invocation_id = ?;"),
              Step.createProcedure(RESUME_INVOCATION, "CREATE PROCEDURE FROM CLASS "
                  + org.apiary.runtime.procedure.ResumeInvocation.class.getName() + ";"))),
      new Migration(17, "Ended invocations in provenance (issue 43): " + LOG_BATCH + " and " + CANCEL_INVOCATION
          + " read back the log entry of each invocation whose outcome they store (a statement of their own, which "
          + "VoltDB plans when a procedure is created), to capture its Invocations row; both are created again",
          List.of(recreateFrontendProcedure(org.apiary.runtime.procedure.InvocationLogBatch.class),
              recreateFrontendProcedure(org.apiary.runtime.procedure.CancelInvocation.class))),
      new Migration(18, "Durable queues (issue 42): declared queues and their limits (" + QUEUES + ", replicated), "
          + "and queue items (" + QUEUE_ITEMS + ", partitioned by queue), with procedures to store a queue, enqueue "
          + "with deduplication, claim within the limits, finish, give a dead frontend's items back, and delete ended "
          + "items past the retention",
          version18()),
      new Migration(19, "Schedules and delayed starts (issue 42): " + SCHEDULES + " (partitioned by the name of each "
          + "schedule's queue), whose ticks " + TICK_SCHEDULE + " puts on the queue by the database's clock; a "
          + "not_before time on queue items, which " + ENQUEUE_ITEM_AT + " sets and " + CLAIM_DUE_QUEUE_ITEMS
          + " respects (both replace version 18's enqueue and claim, whose classes are shipped); store, pause, "
          + "resume, trigger, backfill and delete a schedule (the administrator's)",
          version19()),
      new Migration(20, "Queue priority and partitioned queues (issue 42): whether a queue's items carry a priority and "
          + "whether its limits apply per partition key (" + QUEUES + "), each item's claim rank (its priority negated) "
          + "and partition key (" + QUEUE_ITEMS + ", with an index in claiming order); " + DECLARE_QUEUE + ", "
          + ENQUEUE_RANKED_ITEM + ", " + CLAIM_RANKED_QUEUE_ITEMS + " and " + ADOPT_QUEUE_ITEMS + " replace the store, "
          + "enqueue, claim and the takeover's release (a dead frontend's running items stay running, the taker's); "
          + CANCEL_QUEUE_ITEM + " cancels an item still waiting, storing its outcome (a new column), which "
          + FIND_QUEUE_ITEM_OUTCOME + " reads",
          version20()),
      new Migration(21, "Application schema changes (issue 44): " + APPLICATION_SCHEMA + ", one row per migration of "
          + "the application's schema that a deploy applied, so a deploy applies only the ones the database lacks",
          List.of(Step.createTable(APPLICATION_SCHEMA, """
              CREATE TABLE APIARY_APPLICATION_SCHEMA (
                version INTEGER NOT NULL,
                description VARCHAR(1024),
                applied_at TIMESTAMP NOT NULL,
                PRIMARY KEY (version)
              );"""))),
      new Migration(22, "Late copies of queue work (issue 42): " + CONFIRM_QUEUE_CLAIM + " tells a frontend whose claim "
          + "of a queue item grew too old to start its invocation whether it still holds the item (a paused "
          + "frontend's item may have been taken over, run and deleted meanwhile); " + ENQUEUE_ITEM_BEFORE + " "
          + "refuses an enqueue that reaches the database after its client's deadline",
          version22()));

  /** Version 22: late copies of queue work (issue 42). Self-contained, so it can be renumbered on a merge. */
  private static List<Step> version22() {
    List<Step> steps = new ArrayList<>();
    for (Class<?> c : List.of(org.apiary.runtime.procedure.ConfirmQueueClaim.class,
        org.apiary.runtime.procedure.EnqueueItemBefore.class)) {
      steps.add(Step.createProcedure(c.getSimpleName(), "CREATE PROCEDURE ALLOW "
          + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " PARTITION ON TABLE " + QUEUE_ITEMS
          + " COLUMN queue_name PARAMETER 0 FROM CLASS " + c.getName() + ";"));
    }
    return steps;
  }

  /**
   * Creates again (drops, if there, and creates, in one catalog update) a single-partition procedure of the frontends'
   * routed by its first parameter, an invocation ID, so that VoltDB plans the statements its class now declares. Safe
   * to run again.
   */
  private static Step recreateFrontendProcedure(Class<?> procedure) {
    String create = "CREATE PROCEDURE ALLOW " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE + " PARTITION ON TABLE "
        + INVOCATIONS + " COLUMN invocation_id PARAMETER 0 FROM CLASS " + procedure.getName() + ";";
    String name = procedure.getSimpleName();
    return new Step(c -> c.procedures().contains(name) ? List.of("DROP PROCEDURE " + name + ";", create)
        : List.of(create));
  }

  /** Version 18: durable queues (issue 42). Self-contained, so it can be renumbered on a merge. */
  private static List<Step> version18() {
    String allow = " ALLOW " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE;
    String byQueue = " PARTITION ON TABLE " + QUEUE_ITEMS + " COLUMN queue_name PARAMETER 0";
    List<Step> steps = new ArrayList<>(List.of(
        Step.createTable(QUEUES, "CREATE TABLE " + QUEUES + " (\n"
            + "  name VARCHAR(64) NOT NULL,\n"
            + "  concurrency INTEGER NOT NULL,\n"
            + "  per_frontend INTEGER NOT NULL,\n"
            + "  rate_limit INTEGER NOT NULL,\n"
            + "  rate_period_ms BIGINT NOT NULL,\n"
            + "  declared_at TIMESTAMP NOT NULL,\n"
            + "  PRIMARY KEY (name)\n"
            + ");"),
        Step.createTable(QUEUE_ITEMS, "CREATE TABLE " + QUEUE_ITEMS + " (\n"
            + "  queue_name VARCHAR(64) NOT NULL,\n"
            + "  invocation_id VARCHAR(" + INVOCATION_ID_CHARS + ") NOT NULL,\n"
            + "  dedup_id VARCHAR(" + INVOCATION_ID_CHARS + "),\n"
            + "  graph VARCHAR(64) NOT NULL,\n"
            + "  request VARBINARY(524288) NOT NULL,\n"
            + "  request_hash BIGINT NOT NULL,\n"
            + "  status VARCHAR(8) NOT NULL,\n"
            + "  frontend VARCHAR(64),\n"
            + "  enqueued_at TIMESTAMP NOT NULL,\n"
            + "  started_at TIMESTAMP,\n"
            + "  finished_at TIMESTAMP,\n"
            + "  PRIMARY KEY (queue_name, invocation_id)\n"
            + ");\n"
            + "PARTITION TABLE " + QUEUE_ITEMS + " ON COLUMN queue_name;\n"
            + "CREATE INDEX APIARY_QUEUE_ITEMS_BY_STATUS ON " + QUEUE_ITEMS + " (queue_name, status, enqueued_at, "
            + "invocation_id);\n"
            + "CREATE INDEX APIARY_QUEUE_ITEMS_BY_DEDUP ON " + QUEUE_ITEMS + " (queue_name, dedup_id);\n"
            + "CREATE INDEX APIARY_QUEUE_ITEMS_BY_START ON " + QUEUE_ITEMS + " (queue_name, started_at);\n"
            + "CREATE INDEX APIARY_QUEUE_ITEMS_BY_ID ON " + QUEUE_ITEMS + " (invocation_id);\n"
            + "CREATE INDEX APIARY_QUEUE_ITEMS_BY_FINISH ON " + QUEUE_ITEMS + " (queue_name, finished_at);"),
        Step.createProcedure(STORE_QUEUE, "CREATE PROCEDURE FROM CLASS "
            + org.apiary.runtime.procedure.StoreQueue.class.getName() + ";"),
        Step.createProcedure(FIND_QUEUE_ITEM, "CREATE PROCEDURE " + FIND_QUEUE_ITEM + allow + " AS SELECT queue_name, "
            + "status FROM " + QUEUE_ITEMS + " WHERE invocation_id = ?;")));
    for (Class<?> c : List.of(org.apiary.runtime.procedure.EnqueueItem.class,
        org.apiary.runtime.procedure.ClaimQueueItems.class, org.apiary.runtime.procedure.FinishQueueItem.class,
        org.apiary.runtime.procedure.ReleaseQueueItems.class, org.apiary.runtime.procedure.ExpireQueueItems.class)) {
      steps.add(Step.createProcedure(c.getSimpleName(), "CREATE PROCEDURE" + allow + byQueue + " FROM CLASS "
          + c.getName() + ";"));
    }
    return steps;
  }

  /** Version 19: schedules and delayed starts (issue 42). Self-contained, so it can be renumbered on a merge. */
  private static List<Step> version19() {
    String allow = " ALLOW " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE;
    String byQueue = " PARTITION ON TABLE " + QUEUE_ITEMS + " COLUMN queue_name PARAMETER 0";
    String bySchedule = " PARTITION ON TABLE " + SCHEDULES + " COLUMN queue_name PARAMETER 0";
    List<Step> steps = new ArrayList<>(List.of(
        Step.addColumn(QUEUE_ITEMS, "NOT_BEFORE", "ALTER TABLE " + QUEUE_ITEMS + " ADD COLUMN not_before TIMESTAMP;"),
        Step.createTable(SCHEDULES, "CREATE TABLE " + SCHEDULES + " (\n"
            + "  queue_name VARCHAR(64) NOT NULL,\n"
            + "  name VARCHAR(64) NOT NULL,\n"
            + "  graph VARCHAR(64) NOT NULL,\n"
            + "  cron VARCHAR(256) NOT NULL,\n"
            + "  key_json VARCHAR(2048),\n"
            + "  catch_up INTEGER NOT NULL,\n"
            + "  paused TINYINT NOT NULL,\n"
            + "  last_tick TIMESTAMP NOT NULL,\n"
            + "  declared_at TIMESTAMP NOT NULL,\n"
            + "  PRIMARY KEY (queue_name)\n"
            + ");\n"
            + "PARTITION TABLE " + SCHEDULES + " ON COLUMN queue_name;")));
    for (Class<?> c : List.of(org.apiary.runtime.procedure.EnqueueItemAt.class,
        org.apiary.runtime.procedure.ClaimDueQueueItems.class)) {
      steps.add(Step.createProcedure(c.getSimpleName(), "CREATE PROCEDURE" + allow + byQueue + " FROM CLASS "
          + c.getName() + ";"));
    }
    steps.add(Step.createProcedure(TICK_SCHEDULE, "CREATE PROCEDURE" + allow + bySchedule + " FROM CLASS "
        + org.apiary.runtime.procedure.TickSchedule.class.getName() + ";"));
    for (Class<?> c : List.of(org.apiary.runtime.procedure.StoreSchedule.class,
        org.apiary.runtime.procedure.PauseSchedule.class, org.apiary.runtime.procedure.TriggerSchedule.class,
        org.apiary.runtime.procedure.BackfillSchedule.class, org.apiary.runtime.procedure.DeleteSchedule.class)) {
      steps.add(Step.createProcedure(c.getSimpleName(), "CREATE PROCEDURE" + bySchedule + " FROM CLASS "
          + c.getName() + ";"));
    }
    return steps;
  }

  /** Version 20: queue priority and partitioned queues (issue 42). Self-contained, so it can be renumbered. */
  private static List<Step> version20() {
    String allow = " ALLOW " + org.apiary.database.DatabaseUsers.FRONTEND_ROLE;
    String byQueue = " PARTITION ON TABLE " + QUEUE_ITEMS + " COLUMN queue_name PARAMETER 0";
    List<Step> steps = new ArrayList<>(List.of(
        Step.addColumn(QUEUES, "PRIORITY_ENABLED", "ALTER TABLE " + QUEUES
            + " ADD COLUMN priority_enabled TINYINT DEFAULT 0 NOT NULL;"),
        Step.addColumn(QUEUES, "PARTITIONED", "ALTER TABLE " + QUEUES
            + " ADD COLUMN partitioned TINYINT DEFAULT 0 NOT NULL;"),
        Step.addColumn(QUEUE_ITEMS, "CLAIM_RANK", "ALTER TABLE " + QUEUE_ITEMS
            + " ADD COLUMN claim_rank INTEGER DEFAULT 0 NOT NULL;"),
        Step.addColumn(QUEUE_ITEMS, "PART_KEY", "ALTER TABLE " + QUEUE_ITEMS
            + " ADD COLUMN part_key VARCHAR(" + QUEUE_PART_KEY_BYTES + " BYTES);"),
        Step.addColumn(QUEUE_ITEMS, "OUTCOME", "ALTER TABLE " + QUEUE_ITEMS + " ADD COLUMN outcome VARBINARY(4096);"),
        Step.createProcedure(FIND_QUEUE_ITEM_OUTCOME, "CREATE PROCEDURE " + FIND_QUEUE_ITEM_OUTCOME + allow
            + " AS SELECT queue_name, status, outcome FROM " + QUEUE_ITEMS + " WHERE invocation_id = ?;"),
        Step.createIndex("APIARY_QUEUE_ITEMS_BY_RANK", "CREATE INDEX APIARY_QUEUE_ITEMS_BY_RANK ON " + QUEUE_ITEMS
            + " (queue_name, status, claim_rank, enqueued_at, invocation_id);"),
        Step.createProcedure(DECLARE_QUEUE, "CREATE PROCEDURE FROM CLASS "
            + org.apiary.runtime.procedure.DeclareQueue.class.getName() + ";")));
    for (Class<?> c : List.of(org.apiary.runtime.procedure.EnqueueRankedItem.class,
        org.apiary.runtime.procedure.ClaimRankedQueueItems.class, org.apiary.runtime.procedure.AdoptQueueItems.class,
        org.apiary.runtime.procedure.CancelQueueItem.class)) {
      steps.add(Step.createProcedure(c.getSimpleName(), "CREATE PROCEDURE" + allow + byQueue + " FROM CLASS "
          + c.getName() + ";"));
    }
    return steps;
  }

  /** The most bytes of a partitioned queue item's partition key, as JSON text (schema version 20 on). */
  public static final int QUEUE_PART_KEY_BYTES = 2048;

  private static List<Step> version15() {
    List<Step> steps = new ArrayList<>();
    for (String table : List.of(INVOCATIONS, RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY)) {
      steps.add(Step.widenColumn(table, "INVOCATION_ID", INVOCATION_ID_CHARS, "ALTER TABLE " + table
          + " ALTER COLUMN invocation_id VARCHAR(" + INVOCATION_ID_CHARS + ") NOT NULL;"));
    }
    return steps;
  }

  /**
   * Version 14: the frontends' role without {@code ALLPROC}, and every procedure a frontend calls created again with
   * {@code ALLOW} it (VoltDB has no {@code GRANT}: a procedure's callers are named where it is created). One step does
   * it all, as it is one catalog update: the checked denial recorder it creates last is there only if the rest is.
   */
  private static List<Step> version14() {
    String role = org.apiary.database.DatabaseUsers.FRONTEND_ROLE;
    String allow = " ALLOW " + role;
    Map<String, String> frontend = new java.util.LinkedHashMap<>();
    java.util.function.BiConsumer<Class<?>, String> byClass = (cls, partitioning) -> frontend.put(cls.getSimpleName(),
        "CREATE PROCEDURE" + allow + partitioning + " FROM CLASS " + cls.getName() + ";");
    byClass.accept(org.apiary.runtime.procedure.InvocationLogBatch.class,
        " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0");
    frontend.put(GET_INVOCATION, "CREATE PROCEDURE " + GET_INVOCATION + allow + " PARTITION ON TABLE APIARY_INVOCATIONS "
        + "COLUMN invocation_id PARAMETER 0 AS SELECT invocation_id, graph, graph_version, request, frontend, status, "
        + "attempts, result, SINCE_EPOCH(MILLISECOND, started_at) FROM APIARY_INVOCATIONS WHERE invocation_id = ?;");
    byClass.accept(org.apiary.runtime.procedure.ClaimInvocation.class,
        " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2");
    byClass.accept(org.apiary.runtime.procedure.RenewLease.class,
        " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0");
    byClass.accept(org.apiary.runtime.procedure.ExpireLease.class,
        " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0");
    byClass.accept(org.apiary.runtime.procedure.ReassignInvocations.class, "");
    byClass.accept(org.apiary.runtime.procedure.FencedExpireInvocations.class,
        " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0");
    for (String[] t : new String[][] {{RECORDED_INTEGER, "Integer", "INTEGER"},
        {RECORDED_VARCHAR, "Varchar", "VARCHAR"}, {RECORDED_VARBINARY, "Varbinary", "VARBINARY"}}) {
      String partitioning = " PARTITION ON TABLE " + t[0] + " COLUMN pkey PARAMETER 0";
      frontend.put("FencedSweep" + t[1], "CREATE PROCEDURE" + allow + partitioning
          + " FROM CLASS org.apiary.runtime.procedure.FencedSweep" + t[1] + ";");
      frontend.put("RecordFailure" + t[1], "CREATE PROCEDURE" + allow + partitioning
          + " FROM CLASS org.apiary.runtime.procedure.RecordFailure" + t[1] + ";");
      frontend.put("ApiaryGetRecorded_" + t[2], "CREATE PROCEDURE ApiaryGetRecorded_" + t[2] + allow + partitioning
          + " AS SELECT outputs FROM " + t[0] + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;");
      frontend.put("ApiaryFindOutcomeOf_" + t[2], "CREATE PROCEDURE ApiaryFindOutcomeOf_" + t[2] + allow
          + " AS SELECT function_name, outputs, caller FROM " + t[0] + " WHERE invocation_id = ? "
          + "AND request_hash IS NOT NULL;");
    }
    byClass.accept(org.apiary.runtime.procedure.AdvanceRetentionByClock.class, "");
    byClass.accept(org.apiary.runtime.procedure.CheckAndRecordDenial.class,
        " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0");
    return List.of(
        Step.createTable(RETENTION_MINIMUM, "CREATE TABLE " + RETENTION_MINIMUM + " (id TINYINT NOT NULL, "
            + "minimum_ms BIGINT NOT NULL, PRIMARY KEY (id));"),
        new Step(c -> {
          if (c.procedures().contains(CHECK_AND_RECORD_DENIAL)) {
            return List.of();
          }
          List<String> ddl = new ArrayList<>(List.of("DROP ROLE " + role + " IF EXISTS;",
              "CREATE ROLE " + role + " WITH SQLREAD;"));
          frontend.forEach((name, create) -> {
            if (c.procedures().contains(name)) {
              ddl.add("DROP PROCEDURE " + name + ";");
            }
            ddl.add(create);
          });
          // The deployed functions' procedures, as the deployer creates them (the frontends call them).
          for (Catalog.DeployedFunction f : c.functions()) {
            if (c.procedures().contains(f.name()) && !frontend.containsKey(f.name())) {
              ddl.add("DROP PROCEDURE " + f.name() + ";");
              ddl.add("CREATE PROCEDURE" + allow + (f.partitionTable() == null ? "" : " PARTITION ON TABLE "
                  + f.partitionTable() + " COLUMN " + f.partitionColumn() + " PARAMETER 0") + " FROM CLASS "
                  + f.procedureClass() + ";");
            }
          }
          if (c.procedures().contains(RECORD_DENIAL_V6)) {
            ddl.add("DROP PROCEDURE " + RECORD_DENIAL_V6 + ";");
          }
          // The administrator's, journaled: the minimum retention, and API keys (ad-hoc writes until now).
          for (Class<?> admin : List.of(org.apiary.runtime.procedure.SetMinimumRetention.class,
              org.apiary.runtime.procedure.StoreCredential.class, org.apiary.runtime.procedure.RevokeCredential.class)) {
            if (!c.procedures().contains(admin.getSimpleName())) {
              ddl.add("CREATE PROCEDURE FROM CLASS " + admin.getName() + ";");
            }
          }
          return ddl;
        }));
  }

  private static List<Step> version12() {
    List<Step> steps = new ArrayList<>(List.of(
        Step.createTable(RETENTION, "CREATE TABLE " + RETENTION + " (id TINYINT NOT NULL, cutoff TIMESTAMP NOT NULL, "
            + "PRIMARY KEY (id));"),
        Step.createProcedure(ADVANCE_RETENTION, "CREATE PROCEDURE FROM CLASS "
            + org.apiary.runtime.procedure.AdvanceRetention.class.getName() + ";"),
        Step.createProcedure(GET_INVOCATION, "CREATE PROCEDURE " + GET_INVOCATION + " PARTITION ON TABLE "
            + INVOCATIONS + " COLUMN invocation_id PARAMETER 0 AS SELECT invocation_id, graph, graph_version, "
            + "request, frontend, status, attempts, result, SINCE_EPOCH(MILLISECOND, started_at) FROM " + INVOCATIONS
            + " WHERE invocation_id = ?;")));
    FAILURE_PROCEDURES.forEach((table, procedure) -> steps.add(Step.createProcedure(procedure.getSimpleName(),
        "CREATE PROCEDURE PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 FROM CLASS " + procedure.getName()
            + ";")));
    return steps;
  }

  /**
   * The single-partition procedure that records a recorded function's failure in {@code table} under retention's
   * fence and a deadline ({@code RecordFailure}): parameters key, invocation ID, function, encoded failure, request
   * hash (or null), caller (or null), not-before and deadline (milliseconds since the epoch, 0 for none). A record
   * already there fails it with a constraint violation.
   */
  public static String recordFailureFencedProcedure(String table) {
    Class<?> procedure = FAILURE_PROCEDURES.get(table);
    if (procedure == null) {
      throw new IllegalArgumentException("no failure-recording procedure for table " + table);
    }
    return procedure.getSimpleName();
  }

  /** The schema version this code writes: the number of the last migration. */
  public static final int VERSION = MIGRATIONS.get(MIGRATIONS.size() - 1).version();

  /** The oldest version a migration starts from; older ones are refused. */
  static final int OLDEST_MIGRATABLE = 3;

  /** The version-4 schema, from nothing or from version 3. Shipped: do not edit, append a migration instead. */
  private static List<Step> version4() {
    List<Step> steps = new ArrayList<>();
    steps.add(Step.createTable(VERSION_TABLE,
        "CREATE TABLE APIARY_SCHEMA_VERSION (version INTEGER NOT NULL, PRIMARY KEY (version));"));
    steps.add(Step.createTable(FUNCTIONS, """
        CREATE TABLE APIARY_FUNCTIONS (
          name VARCHAR(64) NOT NULL,
          kind VARCHAR(8) NOT NULL,
          key_type VARCHAR(16),
          partition_table VARCHAR(128),
          partition_column VARCHAR(128),
          has_writes TINYINT NOT NULL,
          function_class VARCHAR(1024) NOT NULL,
          procedure_class VARCHAR(1024) NOT NULL,
          deployed_at TIMESTAMP NOT NULL,
          PRIMARY KEY (name)
        );"""));
    steps.add(Step.createTable(GRAPHS, """
        CREATE TABLE APIARY_GRAPHS (
          name VARCHAR(64) NOT NULL,
          version INTEGER NOT NULL,
          definition VARBINARY(1048576) NOT NULL,
          registered_at TIMESTAMP NOT NULL,
          PRIMARY KEY (name, version)
        );"""));
    steps.add(Step.createTable(INVOCATIONS, """
        CREATE TABLE APIARY_INVOCATIONS (
          invocation_id VARCHAR(64) NOT NULL,
          graph VARCHAR(64) NOT NULL,
          graph_version INTEGER NOT NULL,
          request VARBINARY(524288) NOT NULL,
          frontend VARCHAR(64) NOT NULL,
          status VARCHAR(8) NOT NULL,
          attempts INTEGER NOT NULL,
          result VARBINARY(1048576),
          started_at TIMESTAMP NOT NULL,
          finished_at TIMESTAMP,
          PRIMARY KEY (invocation_id)
        );
        PARTITION TABLE APIARY_INVOCATIONS ON COLUMN invocation_id;
        CREATE INDEX APIARY_INVOCATIONS_BY_FRONTEND ON APIARY_INVOCATIONS (frontend, status);
        CREATE INDEX APIARY_INVOCATIONS_BY_FINISH ON APIARY_INVOCATIONS (finished_at);"""));
    steps.add(Step.createTable(FRONTENDS, """
        CREATE TABLE APIARY_FRONTENDS (
          frontend VARCHAR(64) NOT NULL,
          endpoint VARCHAR(256) NOT NULL,
          lease_expires_ms BIGINT NOT NULL,
          PRIMARY KEY (frontend)
        );
        PARTITION TABLE APIARY_FRONTENDS ON COLUMN frontend;"""));
    String[][] recorded = {{RECORDED_INTEGER, "BIGINT"}, {RECORDED_VARCHAR, "VARCHAR(1024)"},
        {RECORDED_VARBINARY, "VARBINARY(1024)"}};
    for (String[] r : recorded) {
      String table = r[0];
      steps.add(Step.createTable(table, "CREATE TABLE " + table + " (\n"
          + "  pkey " + r[1] + " NOT NULL,\n"
          + "  invocation_id VARCHAR(64) NOT NULL,\n"
          + "  function_name VARCHAR(64) NOT NULL,\n"
          + "  outputs VARBINARY(1048576) NOT NULL,\n"
          + "  recorded_at TIMESTAMP NOT NULL,\n"
          + "  request_hash BIGINT,\n"
          // The ID first, so a lookup by ID alone (the outcome of a one-transaction invocation) uses this index.
          + "  PRIMARY KEY (invocation_id, pkey, function_name)\n"
          + ");\n"
          + "PARTITION TABLE " + table + " ON COLUMN pkey;\n"
          + "CREATE INDEX " + table + "_BY_TIME ON " + table + " (recorded_at);"));
      // Version 3's table: its primary key starts with the partition key, so finding an invocation's records by
      // ID alone needs an index; its failure procedure lacks the request hash.
      steps.add(new Step(catalog -> {
        if (!catalog.tables().contains(table) || catalog.hasColumn(table, "REQUEST_HASH")) {
          return List.of();
        }
        List<String> ddl = new ArrayList<>(List.of("ALTER TABLE " + table + " ADD COLUMN request_hash BIGINT;",
            "CREATE INDEX " + table + "_BY_INVOCATION ON " + table + " (invocation_id);"));
        if (catalog.procedures().contains(recordFailureProcedure(table))) {
          ddl.add("DROP PROCEDURE " + recordFailureProcedure(table) + ";");
          ddl.add(recordFailureDdl(table)); // the step creating it below sees it and does nothing
        }
        return ddl;
      }));
    }
    for (String old : VERSION_3_PROCEDURES) {
      steps.add(Step.dropProcedure(old));
    }
    steps.add(Step.createProcedure(GET_INVOCATION_V4, "CREATE PROCEDURE " + GET_INVOCATION_V4
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 AS SELECT invocation_id, graph, "
        + "graph_version, request, frontend, status, attempts, result FROM APIARY_INVOCATIONS WHERE invocation_id = ?;"));
    steps.add(Step.createProcedure(CLAIM_INVOCATION_V4, "CREATE PROCEDURE " + CLAIM_INVOCATION_V4
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2 AS UPDATE APIARY_INVOCATIONS "
        + "SET frontend = ?, graph_version = ?, attempts = attempts + 1 WHERE invocation_id = ? AND status = 'RUNNING';"));
    steps.add(Step.createProcedure(LOG_BATCH, "CREATE PROCEDURE PARTITION ON TABLE APIARY_INVOCATIONS COLUMN "
        + "invocation_id PARAMETER 0 FROM CLASS " + org.apiary.runtime.procedure.InvocationLogBatch.class.getName()
        + ";"));
    steps.add(Step.createProcedure(RENEW_LEASE_V4, "CREATE PROCEDURE " + RENEW_LEASE_V4
        + " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS UPSERT INTO APIARY_FRONTENDS "
        + "(frontend, endpoint, lease_expires_ms) VALUES (?, ?, SINCE_EPOCH(MILLISECOND, NOW) + ?);"));
    steps.add(Step.createProcedure(EXPIRE_LEASE_V4, "CREATE PROCEDURE " + EXPIRE_LEASE_V4
        + " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS DELETE FROM APIARY_FRONTENDS "
        + "WHERE frontend = ? AND lease_expires_ms < SINCE_EPOCH(MILLISECOND, NOW);"));
    for (String[] r : recorded) {
      String table = r[0];
      steps.add(Step.createProcedure(recordFailureProcedure(table), recordFailureDdl(table)));
      steps.add(Step.createProcedure(getRecordedProcedure(table), "CREATE PROCEDURE " + getRecordedProcedure(table)
          + " PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 AS SELECT outputs FROM " + table
          + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;"));
      steps.add(Step.createProcedure(findOneTransactionOutcomeProcedure(table), "CREATE PROCEDURE "
          + findOneTransactionOutcomeProcedure(table) + " AS SELECT function_name, outputs FROM " + table
          + " WHERE invocation_id = ? AND request_hash IS NOT NULL;"));
    }
    return steps;
  }

  private static List<Step> version8() {
    List<Step> steps = new ArrayList<>();
    EXPIRE_PROCEDURES.forEach((table, procedure) -> steps.add(Step.createProcedure(procedure.getSimpleName(),
        "CREATE PROCEDURE PARTITION ON TABLE " + table + " COLUMN " + (table.equals(INVOCATIONS) ? "invocation_id"
            : "pkey") + " PARAMETER 0 FROM CLASS " + procedure.getName() + ";")));
    return steps;
  }

  private static List<Step> version10() {
    List<Step> steps = new ArrayList<>();
    SWEEP_PROCEDURES.forEach((table, procedure) -> {
      // The procedure that deleted by the index goes with it, in the same catalog update.
      steps.add(Step.dropProcedure(EXPIRE_PROCEDURES.get(table).getSimpleName()));
      steps.add(new Step(c -> c.indexes().contains(table + "_BY_TIME") ? List.of("DROP INDEX " + table + "_BY_TIME;")
          : List.of()));
      steps.add(Step.createProcedure(procedure.getSimpleName(), "CREATE PROCEDURE PARTITION ON TABLE " + table
          + " COLUMN pkey PARAMETER 0 FROM CLASS " + procedure.getName() + ";"));
    });
    return steps;
  }

  /**
   * The single-partition procedure that runs one step of retention's sweep through {@code table}, a recorded-outputs
   * table, in the partition its first parameter (a partition key) routes to: parameters key, cutoff timestamp, the
   * invocation ID the step starts after ({@code ""} first), rows per step; returns one row: rows deleted, and the
   * next step's start ({@code NULL} at the partition's end). It deletes nothing past retention's fence, whatever the
   * cutoff (the fenced sweep of version 14, which frontends may call).
   */
  public static String sweepProcedure(String table) {
    Class<?> procedure = FENCED_SWEEP_PROCEDURES.get(table);
    if (procedure == null) {
      throw new IllegalArgumentException("no sweep procedure for table " + table);
    }
    return procedure.getSimpleName();
  }

  /**
   * The single-partition procedure that deletes at most a given number of {@code table}'s expired rows in the
   * partition its first parameter (a partition key) routes to: parameters key, cutoff timestamp, limit; returns the
   * rows deleted. For {@link #INVOCATIONS} (ended invocations only); the recorded-outputs tables are swept
   * ({@link #sweepProcedure}) since version 10. It deletes nothing past retention's fence, whatever the cutoff (the
   * fenced step of version 14, which frontends may call).
   */
  public static String expireProcedure(String table) {
    Class<?> procedure = table.equals(INVOCATIONS) ? org.apiary.runtime.procedure.FencedExpireInvocations.class : null;
    if (procedure == null) {
      throw new IllegalArgumentException("no retention procedure for table " + table);
    }
    return procedure.getSimpleName();
  }

  /** The key type {@code @GetPartitionKeys} takes for {@code table}'s partition column. */
  public static String partitionKeyType(String table) {
    return switch (table) {
      case RECORDED_INTEGER -> "INTEGER";
      case RECORDED_VARBINARY -> "VARBINARY";
      case RECORDED_VARCHAR, INVOCATIONS -> "STRING";
      default -> throw new IllegalArgumentException("not a partitioned system table: " + table);
    };
  }

  private static List<Step> version7() {
    List<Step> steps = new ArrayList<>();
    for (String table : List.of(RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY)) {
      steps.add(Step.addColumn(table, "CALLER", "ALTER TABLE " + table + " ADD COLUMN caller VARCHAR(128);"));
      steps.add(Step.createProcedure(recordFailureWithCallerProcedure(table), "CREATE PROCEDURE "
          + recordFailureWithCallerProcedure(table) + " PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 AS "
          + "INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, request_hash, caller, "
          + "recorded_at) VALUES (?, ?, ?, ?, ?, ?, NOW);"));
      steps.add(Step.createProcedure(findOutcomeWithCallerProcedure(table), "CREATE PROCEDURE "
          + findOutcomeWithCallerProcedure(table) + " AS SELECT function_name, outputs, caller FROM " + table
          + " WHERE invocation_id = ? AND request_hash IS NOT NULL;"));
    }
    return steps;
  }

  /**
   * The procedure that records a one-transaction invocation's failure with its caller: partition key, invocation ID,
   * function, recorded failure, request hash, caller.
   */
  public static String recordFailureWithCallerProcedure(String table) {
    return "ApiaryRecordFailureBy_" + table.substring("APIARY_RECORDED_".length());
  }

  /**
   * The multi-partition procedure that finds the outcome of a one-transaction invocation by its ID alone: function
   * name, recorded outputs and the caller that started it ({@code NULL} if recorded before schema version 7).
   */
  public static String findOutcomeWithCallerProcedure(String table) {
    return "ApiaryFindOutcomeOf_" + table.substring("APIARY_RECORDED_".length());
  }

  /** {@link #recordSql} with the invocation's caller as a seventh parameter (schema version 7 on). */
  public static String recordWithCallerSql(String table) {
    return "INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, recorded_at, request_hash, caller) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?);";
  }

  private static String recordFailureDdl(String table) {
    return "CREATE PROCEDURE " + recordFailureProcedure(table)
        + " PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 AS INSERT INTO " + table
        + " (pkey, invocation_id, function_name, outputs, request_hash, recorded_at) VALUES (?, ?, ?, ?, ?, NOW);";
  }

  private SystemSchema() {}

  /**
   * The procedure that records a function execution's failure in {@code table} (where its outputs would go), so a
   * re-execution replays the failure; fails with a constraint violation if the execution recorded something first.
   */
  public static String recordFailureProcedure(String table) {
    return "ApiaryRecordFailure_" + table.substring("APIARY_RECORDED_".length());
  }

  /** The single-partition procedure that reads one record of {@code table}: (partition key, invocation, function). */
  public static String getRecordedProcedure(String table) {
    return "ApiaryGetRecorded_" + table.substring("APIARY_RECORDED_".length());
  }

  /**
   * The multi-partition procedure that finds the outcome of a one-transaction invocation in {@code table} by its ID
   * alone (such records carry a request hash): function name and recorded outputs.
   */
  public static String findOneTransactionOutcomeProcedure(String table) {
    return "ApiaryFindOutcome_" + table.substring("APIARY_RECORDED_".length());
  }

  /** The table that holds recorded outputs of functions with this key type ({@code null}: global functions). */
  public static String recordedTable(PartitionKeyType keyType) {
    if (keyType == null) {
      return RECORDED_VARCHAR;
    }
    return switch (keyType) {
      case BIGINT, INTEGER, SMALLINT, TINYINT -> RECORDED_INTEGER;
      case VARCHAR -> RECORDED_VARCHAR;
      case VARBINARY -> RECORDED_VARBINARY;
    };
  }

  /** Every recorded-outputs table. */
  public static Set<String> recordedTables() {
    return Set.of(RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY);
  }

  /**
   * The query a recorded function runs first: its outputs from an earlier execution, if there was one, and the
   * request hash that execution was recorded under.
   */
  public static String findRecordedSql(String table) {
    return "SELECT outputs, request_hash FROM " + table + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;";
  }

  /** The insert a recorded function runs last, in its own transaction. */
  public static String recordSql(String table) {
    return "INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, recorded_at, request_hash) "
        + "VALUES (?, ?, ?, ?, ?, ?);";
  }

  private static final Logger LOG = System.getLogger(SystemSchema.class.getName());
  /** Catalog updates {@link #ensure} loaded in this process (what makes it slow), for tests. */
  static final java.util.concurrent.atomic.AtomicLong CATALOG_UPDATES = new java.util.concurrent.atomic.AtomicLong();

  /**
   * How long one migration (or one statement on the version table) is tried again while it fails because another
   * process is changing the catalog: on a loaded 3-node cluster, two frontends starting at once each waited out the
   * other's catalog update for longer than six tries (12.6 s) allowed, and one exited.
   */
  private static final java.time.Duration PATIENCE = java.time.Duration.ofSeconds(60);

  /** The pause before try {@code attempt + 1}: doubling from {@code firstMillis}, at most 2 s. */
  private static long backoff(long firstMillis, int attempt) {
    return Math.min(2_000L, firstMillis << Math.min(attempt, 10));
  }

  /**
   * Brings Apiary's system tables and procedures to {@link #VERSION}: reads the version the database records and
   * applies every later migration in order, each as one catalog update (one {@code @AdHoc} call, which VoltDB applies
   * entirely or not at all), then records its number. Does nothing on a database at the current version.
   *
   * <p>Safe when several processes call it at once: VoltDB applies catalog updates one at a time, so one process's
   * update wins; a process whose update failed reads the catalog again, finds the migration applied and goes on.
   *
   * @throws DatabaseException if the database records a version newer than this code knows (it was written by a
   *     newer release), or one older than {@value #OLDEST_MIGRATABLE}, or a migration fails; each names the versions
   */
  public static void ensure(ApiaryDatabase db) {
    ensure(db, VERSION);
  }

  /** {@link #ensure} up to {@code version} only: a database as the release of that version left it (for tests). */
  static void ensure(ApiaryDatabase db, int version) {
    int found = recordedVersion(db);
    if (found >= version && found <= VERSION) {
      return;
    }
    if (found > VERSION) {
      throw new DatabaseException("Apiary's system tables in this database are version " + found + ", newer than "
          + "this release knows (version " + VERSION + "): a newer Apiary wrote them. Use that release or a newer "
          + "one with this database; this one does not change it");
    }
    if (found > 0 && found < OLDEST_MIGRATABLE) {
      throw new DatabaseException("Apiary's system tables in this database are version " + found + "; this release "
          + "migrates version " + OLDEST_MIGRATABLE + " and later only (it needs version " + VERSION + "): use a new "
          + "database, or drop the APIARY_* tables and procedures and register the application again");
    }
    List<Migration> pending = MIGRATIONS.stream().filter(m -> m.version() > found && m.version() <= version)
        .toList();
    if (pending.size() > 1 && applyAtOnce(db, found, pending)) {
      return;
    }
    Migration last = pending.get(pending.size() - 1);
    for (Migration m : pending) {
      if (!apply(db, m, last)) {
        return; // another process applied the rest at once; their versions are recorded
      }
    }
  }

  /**
   * Applies several migrations as one catalog update: each migration's DDL is computed against the catalog the
   * earlier ones would leave ({@link Catalog#after}), and the whole is loaded at once. A catalog update costs
   * VoltDB most of a second whatever it holds, so a new database gets its system tables in one instead of one per
   * migration. Only a shortcut: it gives up, for the one-migration-at-a-time path, if the database's version moved
   * or the update fails (another process migrating at the same moment), and afterwards the catalog must be exactly
   * what the prediction said (every migration's pending DDL the same against both), or the rest is left to that
   * path too.
   *
   * @return whether every migration is applied and recorded
   */
  private static boolean applyAtOnce(ApiaryDatabase db, int found, List<Migration> migrations) {
    Catalog before = Catalog.read(db);
    if (recordedVersion(db) != found) {
      return false;
    }
    Catalog predicted = before;
    List<String> ddl = new ArrayList<>();
    for (Migration m : migrations) {
      List<String> step = m.pending(predicted);
      ddl.addAll(step);
      predicted = predicted.after(step);
    }
    try {
      CATALOG_UPDATES.incrementAndGet();
      db.loadSchema(String.join("\n", ddl));
    } catch (RuntimeException e) {
      if (String.valueOf(e.getMessage()).contains("permission")) {
        return false; // the one-at-a-time path says what to do
      }
      LOG.log(Level.DEBUG, "the system schema's migrations as one catalog update failed (" + e.getMessage()
          + "); applying them one at a time");
      return false;
    }
    Catalog after = Catalog.read(db);
    for (Migration m : migrations) {
      if (!m.pending(after).equals(m.pending(predicted))) {
        LOG.log(Level.WARNING, "after Apiary's system schema migrations " + migrations.get(0).version() + " to "
            + migrations.get(migrations.size() - 1).version() + " as one catalog update, migration " + m.version()
            + " would still do " + m.pending(after) + " where " + m.pending(predicted) + " was expected; applying "
            + "the rest one at a time");
        return false;
      }
    }
    for (Migration m : migrations) {
      recordVersion(db, m.version());
    }
    return true;
  }

  /** The version the database records: 0 if it has no version (no system tables, or created but not recorded). */
  private static int recordedVersion(ApiaryDatabase db) {
    if (!tables(db).contains(VERSION_TABLE)) {
      return 0;
    }
    // The catalog names the table, but on a cluster the node that plans this may not have the update yet.
    VoltTable v = adHocAcrossCatalogUpdates(db, "reading the system schema version",
        "SELECT MAX(version) FROM " + VERSION_TABLE, "object not found").getResults()[0];
    if (!v.advanceRow()) {
      return 0;
    }
    long found = v.getLong(0);
    return v.wasNull() ? 0 : (int) found;
  }

  /**
   * Applies one migration as one catalog update, unless the catalog already has it, and records its version.
   *
   * @param last the last migration this process is applying
   * @return false if the catalog showed {@code last} applied already: another process applied every migration up to
   *     it as one update ({@link #applyAtOnce}) and has not recorded their versions yet. Those versions are then
   *     recorded (by that process, or here once it is given up on), and nothing is applied here: applying this
   *     migration's DDL over that catalog would re-create what a later migration dropped (migration 6's procedure,
   *     which version 14 drops, was seen back after two processes ensured an empty database at once)
   */
  private static boolean apply(ApiaryDatabase db, Migration m, Migration last) {
    DatabaseException failure = null;
    long giveUpAt = System.nanoTime() + PATIENCE.toNanos();
    for (int attempt = 1; ; attempt++) {
      int recorded = recordedVersion(db);
      if (recorded > VERSION) {
        throw new DatabaseException("while migrating Apiary's system tables to version " + m.version() + ", another "
            + "process recorded version " + recorded + ", newer than this release knows (version " + VERSION + ")");
      }
      if (recorded >= m.version()) {
        // Another process applied and recorded it (perhaps later ones too): a step that cannot tell it was applied
        // (migration 9's role) must not run again, over what a later migration changed (version 14's role).
        return true;
      }
      Catalog catalog = Catalog.read(db);
      if (m != last && last.pending(catalog).isEmpty()) {
        awaitRecorded(db, m, last, giveUpAt);
        return false;
      }
      List<String> ddl = m.pending(catalog);
      if (ddl.isEmpty()) {
        break;
      }
      try {
        CATALOG_UPDATES.incrementAndGet();
        db.loadSchema(String.join("\n", ddl));
        break;
      } catch (RuntimeException e) {
        if (String.valueOf(e.getMessage()).contains("permission")) { // a least-privileged login: retrying cannot help
          throw new DatabaseException("Apiary's system tables are at version " + recorded + ", older than this "
              + "release's " + VERSION + ", and this database login may not change the schema (" + e.getMessage()
              + "): migrate them as the database's administrator first (apiary deploy, apiary cluster start, or "
              + "Registrar.register with the administrator's login)", e);
        }
        DatabaseException wrapped = new DatabaseException("migrating Apiary's system tables to version "
            + m.version() + " (" + m.description() + ") failed: " + e.getMessage(), e);
        if (failure != null) {
          wrapped.addSuppressed(failure);
        }
        failure = wrapped;
        if (System.nanoTime() >= giveUpAt) {
          throw failure;
        }
        // Another process may be applying it (VoltDB refuses a catalog update while one is in progress, and a
        // statement that creates what now exists): read the catalog again after a pause.
        sleep(backoff(100, attempt), failure);
      }
    }
    recordVersion(db, m.version());
    return true;
  }

  /** Records that migration {@code version} is applied (an upsert: recording it twice is harmless). */
  private static void recordVersion(ApiaryDatabase db, int version) {
    adHocAcrossCatalogUpdates(db, "recording system schema version " + version,
        "UPSERT INTO " + VERSION_TABLE + " VALUES (" + version + ")");
  }

  /**
   * Waits (within {@code giveUpAt}) for the process that applied migrations {@code from} to {@code last} at once to
   * record their versions; records them here if it does not (it may have died between its update and its records).
   */
  private static void awaitRecorded(ApiaryDatabase db, Migration from, Migration last, long giveUpAt) {
    while (recordedVersion(db) < last.version()) {
      if (System.nanoTime() >= giveUpAt) {
        for (Migration m : MIGRATIONS) {
          if (m.version() >= from.version() && m.version() <= last.version()) {
            recordVersion(db, m.version());
          }
        }
        return;
      }
      sleep(50, new DatabaseException("waiting for another process to record Apiary's system schema versions "
          + from.version() + " to " + last.version()));
    }
  }

  /**
   * Runs an ad-hoc statement, again if another process's catalog update (a concurrent migration) landed between its
   * planning and its execution: VoltDB then refuses it unrun ("wasn't planned against the current catalog version").
   */
  private static org.voltdb.client.ClientResponse adHocAcrossCatalogUpdates(ApiaryDatabase db, String what,
                                                                             String sql) {
    return adHocAcrossCatalogUpdates(db, what, sql, null);
  }

  /** As above, also trying again while the refusal says {@code alsoRetried} (where a catalog update explains it). */
  private static org.voltdb.client.ClientResponse adHocAcrossCatalogUpdates(ApiaryDatabase db, String what,
                                                                             String sql, String alsoRetried) {
    long giveUpAt = System.nanoTime() + PATIENCE.toNanos();
    for (int attempt = 1; ; attempt++) {
      try {
        return db.callAdmin(what, "@AdHoc", sql);
      } catch (RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        boolean catalogMoved = message.contains("planned against the current catalog")
            || (alsoRetried != null && message.contains(alsoRetried));
        if (!catalogMoved || System.nanoTime() >= giveUpAt) {
          throw e;
        }
        sleep(backoff(50, attempt), new DatabaseException(what + " failed: " + e.getMessage(), e));
      }
    }
  }

  private static void sleep(long millis, DatabaseException failure) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure.addSuppressed(e);
      throw failure;
    }
  }

  /**
   * One numbered step of the system schema.
   *
   * @param version the version a database has once it is applied
   * @param description what it adds or changes, and why, for error messages
   * @param steps what it does, each doing nothing where the database already has it
   */
  record Migration(int version, String description, List<Step> steps) {
    Migration {
      steps = List.copyOf(steps);
    }

    /** The DDL still to run on a database with this catalog; empty if it has everything. */
    List<String> pending(Catalog catalog) {
      List<String> ddl = new ArrayList<>();
      for (Step s : steps) {
        ddl.addAll(s.ddl().apply(catalog));
      }
      return ddl;
    }
  }

  /**
   * Part of a migration: the DDL to run given what the catalog holds before the migration, none if it holds what the
   * step creates.
   */
  record Step(Function<Catalog, List<String>> ddl) {
    /** Creates a table (with its partitioning and indexes in {@code ddl}) unless it exists. */
    static Step createTable(String table, String ddl) {
      return new Step(c -> c.tables().contains(table) ? List.of() : List.of(ddl));
    }

    /** Adds a column ({@code ALTER TABLE ... ADD COLUMN ...}) unless the table has it. */
    static Step addColumn(String table, String column, String ddl) {
      return new Step(c -> c.hasColumn(table, column) ? List.of() : List.of(ddl));
    }

    /** Widens a VARCHAR column ({@code ALTER TABLE ... ALTER COLUMN ...}) unless it holds {@code size} already. */
    static Step widenColumn(String table, String column, int size, String ddl) {
      return new Step(c -> c.columnSize(table, column) >= size ? List.of() : List.of(ddl));
    }

    /** Creates an index unless one of this name exists. */
    static Step createIndex(String index, String ddl) {
      return new Step(c -> c.indexes().contains(index.toUpperCase(Locale.ROOT)) ? List.of() : List.of(ddl));
    }

    /** Creates a procedure unless one of this name exists. */
    static Step createProcedure(String procedure, String ddl) {
      return new Step(c -> c.procedures().contains(procedure) ? List.of() : List.of(ddl));
    }

    /** Drops a procedure if it exists. */
    static Step dropProcedure(String procedure) {
      return new Step(c -> c.procedures().contains(procedure) ? List.of("DROP PROCEDURE " + procedure + ";")
          : List.of());
    }
  }

  /**
   * What the database's catalog holds: tables and indexes (upper-case), each table's columns (upper-case) and their
   * declared sizes (keyed {@code TABLE.COLUMN}), the user-defined procedures; and the deployed functions
   * {@value #FUNCTIONS} lists.
   */
  record Catalog(Set<String> tables, Map<String, Set<String>> columns, Map<String, Integer> sizes,
                 Set<String> indexes, Set<String> procedures, List<DeployedFunction> functions) {
    /**
     * A deployed function's row of {@value #FUNCTIONS}: its procedure's name and class, and for a local function
     * the table and column it is partitioned on ({@code null} for a global one).
     */
    record DeployedFunction(String name, String procedureClass, String partitionTable, String partitionColumn) {}

    static Catalog read(ApiaryDatabase db) {
      Map<String, Set<String>> columns = new HashMap<>();
      Map<String, Integer> sizes = new HashMap<>();
      VoltTable c = db.callAdmin("listing columns", "@SystemCatalog", "COLUMNS").getResults()[0];
      while (c.advanceRow()) {
        String table = c.getString("TABLE_NAME").toUpperCase(Locale.ROOT);
        String column = c.getString("COLUMN_NAME").toUpperCase(Locale.ROOT);
        columns.computeIfAbsent(table, k -> new HashSet<>()).add(column);
        long size = c.getLong("COLUMN_SIZE");
        if (!c.wasNull()) {
          sizes.put(table + "." + column, (int) size);
        }
      }
      Set<String> indexes = new HashSet<>();
      VoltTable i = db.callAdmin("listing indexes", "@SystemCatalog", "INDEXINFO").getResults()[0];
      while (i.advanceRow()) {
        String name = i.getString("INDEX_NAME");
        if (name != null) {
          indexes.add(name.toUpperCase(Locale.ROOT));
        }
      }
      Set<String> tables = SystemSchema.tables(db);
      List<DeployedFunction> functions = new ArrayList<>();
      if (tables.contains(FUNCTIONS)) {
        VoltTable f = adHocAcrossCatalogUpdates(db, "listing deployed functions", "SELECT name, procedure_class, "
            + "kind, partition_table, partition_column FROM " + FUNCTIONS + " ORDER BY name").getResults()[0];
        while (f.advanceRow()) {
          boolean local = "LOCAL".equalsIgnoreCase(f.getString(2));
          functions.add(new DeployedFunction(f.getString(0), f.getString(1), local ? f.getString(3) : null,
              local ? f.getString(4) : null));
        }
      }
      return new Catalog(tables, columns, sizes, indexes, SystemSchema.procedures(db), functions);
    }

    /**
     * The catalog these DDL statements (a migration's) would leave: tables with their columns and VARCHAR sizes,
     * indexes and procedures, as far as {@link Step}s look at them. Statements of other kinds (roles, partitioning)
     * change none of that.
     */
    Catalog after(List<String> ddl) {
      Set<String> tables = new HashSet<>(this.tables);
      Map<String, Set<String>> columns = new HashMap<>();
      this.columns.forEach((t, c) -> columns.put(t, new HashSet<>(c)));
      Map<String, Integer> sizes = new HashMap<>(this.sizes);
      Set<String> indexes = new HashSet<>(this.indexes);
      Set<String> procedures = new HashSet<>(this.procedures);
      for (String chunk : ddl) {
        for (String raw : chunk.split(";")) {
          String statement = raw.strip().replaceAll("\\s+", " ");
          String upper = statement.toUpperCase(Locale.ROOT);
          java.util.regex.Matcher m;
          if ((m = CREATE_TABLE.matcher(statement)).matches()) {
            String table = m.group(1).toUpperCase(Locale.ROOT);
            tables.add(table);
            Set<String> cols = new HashSet<>();
            for (String column : topLevelCommas(m.group(2))) {
              String[] words = column.strip().split(" ", 3);
              String first = words[0].toUpperCase(Locale.ROOT);
              if (first.equals("PRIMARY") || first.equals("CONSTRAINT") || first.equals("UNIQUE")
                  || first.equals("ASSUMEUNIQUE") || words.length < 2) {
                continue;
              }
              cols.add(first);
              columnSize(words[1]).ifPresent(size -> sizes.put(table + "." + first, size));
            }
            columns.put(table, cols);
          } else if ((m = ALTER_COLUMN.matcher(statement)).matches()) {
            String table = m.group(1).toUpperCase(Locale.ROOT);
            String column = m.group(3).toUpperCase(Locale.ROOT);
            columns.computeIfAbsent(table, k -> new HashSet<>()).add(column);
            Optional<Integer> size = columnSize(m.group(4));
            if (size.isPresent()) {
              sizes.put(table + "." + column, size.get());
            } else {
              sizes.remove(table + "." + column);
            }
          } else if ((m = CREATE_INDEX.matcher(statement)).matches()) {
            indexes.add(m.group(1).toUpperCase(Locale.ROOT));
          } else if (upper.startsWith("DROP INDEX ")) {
            indexes.remove(statement.substring("DROP INDEX ".length()).split(" ")[0].toUpperCase(Locale.ROOT));
          } else if (upper.startsWith("DROP TABLE ")) {
            String table = statement.substring("DROP TABLE ".length()).split(" ")[0].toUpperCase(Locale.ROOT);
            tables.remove(table);
            columns.remove(table);
          } else if ((m = CREATE_PROCEDURE_FROM_CLASS.matcher(statement)).matches()) {
            String cls = m.group(1);
            procedures.add(cls.substring(cls.lastIndexOf('.') + 1));
          } else if ((m = CREATE_PROCEDURE_AS.matcher(statement)).matches()) {
            procedures.add(m.group(1));
          } else if (upper.startsWith("DROP PROCEDURE ")) {
            procedures.remove(statement.substring("DROP PROCEDURE ".length()).split(" ")[0]);
          }
        }
      }
      return new Catalog(tables, columns, sizes, indexes, procedures, functions);
    }

    private static final java.util.regex.Pattern CREATE_TABLE = java.util.regex.Pattern.compile(
        "(?is)CREATE TABLE (\\w+) \\((.*)\\)");
    private static final java.util.regex.Pattern ALTER_COLUMN = java.util.regex.Pattern.compile(
        "(?is)ALTER TABLE (\\w+) (ADD|ALTER) COLUMN (\\w+) (\\S+).*");
    private static final java.util.regex.Pattern CREATE_INDEX = java.util.regex.Pattern.compile(
        "(?is)CREATE (?:UNIQUE |ASSUMEUNIQUE )?INDEX (\\w+) ON .*");
    private static final java.util.regex.Pattern CREATE_PROCEDURE_FROM_CLASS = java.util.regex.Pattern.compile(
        "(?is)CREATE PROCEDURE (?:ALLOW \\S+ )?(?:PARTITION ON TABLE \\S+ COLUMN \\S+(?: PARAMETER \\d+)? )?"
            + "FROM CLASS ([\\w.$]+)");
    private static final java.util.regex.Pattern CREATE_PROCEDURE_AS = java.util.regex.Pattern.compile(
        "(?is)CREATE PROCEDURE (\\w+) .*");

    /** The declared size of a VARCHAR type ({@code VARCHAR(64)}), as {@code @SystemCatalog} reports it. */
    private static Optional<Integer> columnSize(String type) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)VARCHAR\\((\\d+)\\)").matcher(type);
      return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
    }

    private static List<String> topLevelCommas(String body) {
      List<String> parts = new ArrayList<>();
      int depth = 0;
      int start = 0;
      for (int i = 0; i < body.length(); i++) {
        char ch = body.charAt(i);
        if (ch == '(') {
          depth++;
        } else if (ch == ')') {
          depth--;
        } else if (ch == ',' && depth == 0) {
          parts.add(body.substring(start, i));
          start = i + 1;
        }
      }
      parts.add(body.substring(start));
      return parts;
    }

    boolean hasColumn(String table, String column) {
      return columns.getOrDefault(table.toUpperCase(Locale.ROOT), Set.of()).contains(column.toUpperCase(Locale.ROOT));
    }

    /** The declared size of a column (characters, for a VARCHAR), or 0 if the table or column is not there. */
    int columnSize(String table, String column) {
      return sizes.getOrDefault(table.toUpperCase(Locale.ROOT) + "." + column.toUpperCase(Locale.ROOT), 0);
    }
  }

  /** Names of every table in the database, upper-case. */
  public static Set<String> tables(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("listing tables", "@SystemCatalog", "TABLES").getResults()[0];
    Set<String> names = new HashSet<>();
    while (t.advanceRow()) {
      names.add(t.getString("TABLE_NAME").toUpperCase(Locale.ROOT));
    }
    return names;
  }

  /** Names of every user-defined procedure in the database. */
  public static Set<String> procedures(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("listing procedures", "@SystemCatalog", "PROCEDURES").getResults()[0];
    Set<String> names = new HashSet<>();
    while (t.advanceRow()) {
      names.add(t.getString("PROCEDURE_NAME"));
    }
    return names;
  }
}

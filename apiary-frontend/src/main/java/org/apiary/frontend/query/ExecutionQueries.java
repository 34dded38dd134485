package org.apiary.frontend.query;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.internal.Json;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * Executions, graphs, frontends and the cluster, read from the database (and the provenance sink for an execution's
 * function executions). Every method reads only, and runs on the caller's thread: the console bounds it with a pool
 * and a timeout of its own.
 *
 * <p>What is known where: a running invocation, and an ended one while the frontends' retention keeps it (default 1
 * hour), is in {@code APIARY_INVOCATIONS} with its request, status and outcome. After that only its function
 * executions remain, in the sink's {@code FunctionInvocations} (function, partition key, time, latency), and how it
 * ended (status, error, times, frontend, attempts; no request or result) in the sink's {@code Invocations}: {@link
 * #list} with a {@link Sink} lists it from there.
 */
public final class ExecutionQueries {
  /** The most executions {@link #list} returns at once. */
  public static final int PAGE = 100;

  /** The four statuses of the log. */
  public static final List<String> STATUSES = List.of(SystemSchema.STATUS_RUNNING, SystemSchema.STATUS_DONE,
      SystemSchema.STATUS_FAILED, SystemSchema.STATUS_CANCELLED);

  /**
   * The status of an invocation that waits on a queue or for its delay (issue 42): an item of
   * {@code APIARY_QUEUE_ITEMS} not claimed yet, so not in the log. Listed with the log's, its time is when it was
   * enqueued, its version 0 (it runs under the graph's version when claimed), its frontend none.
   */
  public static final String STATUS_QUEUED = "QUEUED";

  /** Every status a filter takes: {@link #STATUS_QUEUED} and the log's four. */
  public static final List<String> FILTER_STATUSES = List.of(STATUS_QUEUED, SystemSchema.STATUS_RUNNING,
      SystemSchema.STATUS_DONE, SystemSchema.STATUS_FAILED, SystemSchema.STATUS_CANCELLED);

  private static final String QUEUED_COLUMNS = "SELECT invocation_id, graph, SINCE_EPOCH(MILLISECOND, enqueued_at), "
      + "SINCE_EPOCH(MILLISECOND, NOW), SINCE_EPOCH(MICROSECOND, enqueued_at), status, "
      + "SINCE_EPOCH(MILLISECOND, finished_at)";

  /**
   * The queue items that never reached the log: waiting ones, and ones cancelled while they waited (never claimed, so
   * never started), which are listed as {@code CANCELLED} with the time of the cancel as their end.
   */
  private static final String NEVER_STARTED = "(status = 'QUEUED' OR (status = '" + SystemSchema.STATUS_CANCELLED
      + "' AND started_at IS NULL))";

  private static final String COLUMNS = "SELECT invocation_id, graph, graph_version, status, frontend, attempts, "
      + "SINCE_EPOCH(MILLISECOND, started_at), SINCE_EPOCH(MILLISECOND, finished_at), SINCE_EPOCH(MILLISECOND, NOW), "
      + "SINCE_EPOCH(MICROSECOND, started_at)";

  private static final Pattern AGO = Pattern.compile("(\\d{1,9})([smhd])");

  private ExecutionQueries() {}

  /**
   * Which executions to list; {@code null} components do not filter.
   *
   * @param status one of {@link #FILTER_STATUSES}
   * @param since started at or after
   * @param caller the identity that started it (an ID logged as {@code caller/ID}, where keys are required)
   * @param prefix the logged ID starts with it
   */
  public record Filter(String graph, String status, Instant since, String caller, String frontend, String prefix) {
    public static final Filter NONE = new Filter(null, null, null, null, null, null);

    public Filter {
      if (status != null && !FILTER_STATUSES.contains(status)) {
        throw new FilterException("status", "status takes one of " + String.join(", ", FILTER_STATUSES) + ", not '"
            + status + "'");
      }
    }

    boolean any() {
      return graph != null || status != null || since != null || caller != null || frontend != null || prefix != null;
    }
  }

  /** Where a page ends: the last execution's start (microseconds) and ID, as an opaque token. */
  public record Cursor(long startedMicros, String id) {
    /** The token a page hands out as its next page's {@code after}. */
    public String token() {
      return Base64.getUrlEncoder().withoutPadding().encodeToString((startedMicros + "." + id)
          .getBytes(StandardCharsets.UTF_8));
    }

    /** A token back to a cursor; a {@link FilterException} for {@code field} if it is not one. */
    public static Cursor parse(String field, String token) {
      try {
        String s = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        int dot = s.indexOf('.');
        if (dot > 0) {
          return new Cursor(Long.parseLong(s.substring(0, dot)), s.substring(dot + 1));
        }
      } catch (IllegalArgumentException e) { // NumberFormatException included
        throw new FilterException(field, field + " is not a cursor this server handed out (" + e.getMessage() + ")");
      }
      throw new FilterException(field, field + " is not a cursor this server handed out");
    }
  }

  /**
   * One logged invocation; times in milliseconds by the database's clock, {@code finishedMs} 0 while it runs.
   *
   * @param caller who started it where keys are required (the logged ID's part before '/'), else {@code null}
   */
  public record Execution(String id, String graph, long version, String status, String frontend, long attempts,
                          long startedMs, long finishedMs, long nowMs, long startedMicros) {
    public boolean running() {
      return finishedMs == 0;
    }

    /** Milliseconds it took, or has taken so far if it runs. */
    public long durationMs() {
      return (finishedMs == 0 ? nowMs : finishedMs) - startedMs;
    }

    public String caller() {
      int slash = id.indexOf('/');
      return slash > 0 ? id.substring(0, slash) : null;
    }

    Cursor cursor() {
      return new Cursor(startedMicros, id);
    }
  }

  /**
   * A page of executions, newest first; {@code next} is {@code null} on the last page.
   *
   * @param total how many match the filter in the log; {@code null} where the sink was read too (the sink and the
   *     log are two databases and an ended invocation is in both until the retention deletes it, so the sum would
   *     count it twice, and telling the two apart would read every matching ID of both)
   * @param sinkProblem why the sink could not be read (the page then holds the log's rows alone), or {@code null}
   */
  public record Page(List<Execution> executions, Long total, Cursor next, String sinkProblem) {
    public Page(List<Execution> executions, long total, Cursor next) {
      this(executions, Long.valueOf(total), next, null);
    }
  }

  /**
   * Where ended invocations past the log's retention are read: the provenance sink's {@code Invocations}, through
   * {@link ProvenanceReports}' query {@code invocations} (on a sink opened here, or asked of the service that holds
   * it), so the console and the command line list the same rows.
   */
  @FunctionalInterface
  public interface Sink {
    /** Answers {@link ProvenanceReports}' query {@code query} with {@code parameters}. */
    ProvenanceReports.Report answer(String query, Map<String, String> parameters) throws SQLException;
  }

  /** One execution with its request frame and, once it ended, its outcome frame ({@code null} while running). */
  public record Detail(Execution execution, byte[] request, byte[] outcome) {}

  /** An ID that matched more than one logged invocation (the client's ID alone, started by several callers). */
  public static final class AmbiguousIdException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final List<String> ids;

    AmbiguousIdException(String id, List<String> ids) {
      super("invocation " + id + " was started by several callers: " + String.join(", ", ids));
      this.ids = List.copyOf(ids);
    }

    public List<String> ids() {
      return ids;
    }
  }

  /** Whether the database has the invocation log (something was deployed with it). */
  public static boolean hasLog(ApiaryDatabase db) {
    return SystemSchema.tables(db).contains(SystemSchema.INVOCATIONS);
  }

  /** A status in any case ({@code CANCELLED} too) as the log stores it; a {@link FilterException} otherwise. */
  public static String status(String field, String given) {
    String upper = given.strip().toUpperCase(Locale.ROOT);
    if (upper.equals("CANCELLED")) {
      return SystemSchema.STATUS_CANCELLED;
    }
    if (!FILTER_STATUSES.contains(upper)) {
      throw new FilterException(field, field + " takes one of " + String.join(", ", FILTER_STATUSES) + ", not '"
          + given + "'");
    }
    return upper;
  }

  /** An ISO-8601 instant, or an amount of seconds, minutes, hours or days before {@code now}. */
  public static Instant since(String field, String given, Instant now) {
    Matcher ago = AGO.matcher(given.strip());
    if (ago.matches()) {
      long amount = Long.parseLong(ago.group(1));
      Duration unit = switch (ago.group(2)) {
        case "s" -> Duration.ofSeconds(1);
        case "m" -> Duration.ofMinutes(1);
        case "h" -> Duration.ofHours(1);
        default -> Duration.ofDays(1);
      };
      return now.minus(unit.multipliedBy(amount));
    }
    try {
      return Instant.parse(given.strip());
    } catch (java.time.format.DateTimeParseException e) {
      throw new FilterException(field, field + " takes an instant (2026-11-29T10:00:00Z) or a time ago (90s, 15m, "
          + "2h, 1d), not '" + given + "'");
    }
  }

  /**
   * Logged executions matching {@code filter}, newest first (by start, then ID), at most {@code limit}, after
   * {@code after} (keyset paging: a page is the same whatever was inserted before it). The log must exist
   * ({@link #hasLog}).
   */
  public static Page list(ApiaryDatabase db, Filter filter, Cursor after, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit " + limit);
    }
    List<String> conditions = new ArrayList<>();
    List<Object> parameters = new ArrayList<>();
    if (filter.status() != null) {
      conditions.add("status = ?");
      parameters.add(filter.status());
    }
    if (filter.graph() != null) {
      conditions.add("graph = ?");
      parameters.add(filter.graph());
    }
    if (filter.since() != null) {
      conditions.add("started_at >= TO_TIMESTAMP(MILLISECOND, ?)");
      parameters.add(filter.since().toEpochMilli());
    }
    if (filter.frontend() != null) {
      conditions.add("frontend = ?");
      parameters.add(filter.frontend());
    }
    if (filter.caller() != null) {
      String p = filter.caller() + "/";
      conditions.add("LEFT(invocation_id, ?) = ?");
      parameters.add(p.length());
      parameters.add(p);
    }
    if (filter.prefix() != null) {
      conditions.add("LEFT(invocation_id, ?) = ?");
      parameters.add(filter.prefix().length());
      parameters.add(filter.prefix());
    }
    String where = conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions);
    VoltTable total = db.callAdmin("counting invocations", "@AdHoc", adHoc("SELECT COUNT(*) FROM "
        + SystemSchema.INVOCATIONS + where, parameters)).getResults()[0];
    long count = total.advanceRow() ? total.getLong(0) : 0;
    if (after != null) {
      conditions.add("(started_at < TO_TIMESTAMP(MICROSECOND, ?) OR (started_at = TO_TIMESTAMP(MICROSECOND, ?) "
          + "AND invocation_id > ?))");
      parameters.add(after.startedMicros());
      parameters.add(after.startedMicros());
      parameters.add(after.id());
      where = " WHERE " + String.join(" AND ", conditions);
    }
    VoltTable t = db.callAdmin("listing invocations", "@AdHoc", adHoc(COLUMNS + " FROM " + SystemSchema.INVOCATIONS
        + where + " ORDER BY started_at DESC, invocation_id LIMIT " + (limit + 1), parameters)).getResults()[0];
    List<Execution> rows = new ArrayList<>();
    while (t.advanceRow()) {
      rows.add(execution(t));
    }
    Page queued = queued(db, filter, after, limit);
    if (!queued.executions().isEmpty()) {
      rows.addAll(queued.executions());
      rows.sort(NEWEST_FIRST);
    }
    count += queued.total();
    Cursor next = null;
    if (rows.size() > limit) {
      rows = rows.subList(0, limit);
      next = rows.get(limit - 1).cursor();
    }
    return new Page(List.copyOf(rows), count, next);
  }

  /**
   * The invocations waiting on a queue or for their delay ({@link #STATUS_QUEUED}), and those cancelled while they
   * waited, that match {@code filter}, newest first by enqueue time, at most {@code limit + 1} after {@code after}, and
   * how many match: one multi-partition read of {@code APIARY_QUEUE_ITEMS} (none if the filter asks for another status
   * or a frontend, or there are no queues).
   */
  private static Page queued(ApiaryDatabase db, Filter filter, Cursor after, int limit) {
    String statuses;
    if (filter.status() == null) {
      statuses = NEVER_STARTED;
    } else if (STATUS_QUEUED.equals(filter.status())) {
      statuses = "status = 'QUEUED'";
    } else if (SystemSchema.STATUS_CANCELLED.equals(filter.status())) {
      statuses = "status = '" + SystemSchema.STATUS_CANCELLED + "' AND started_at IS NULL";
    } else {
      return new Page(List.of(), 0, null);
    }
    if (filter.frontend() != null || !SystemSchema.tables(db).contains(SystemSchema.QUEUE_ITEMS)) {
      return new Page(List.of(), 0, null);
    }
    List<String> conditions = new ArrayList<>(List.of(statuses));
    List<Object> parameters = new ArrayList<>();
    if (filter.graph() != null) {
      conditions.add("graph = ?");
      parameters.add(filter.graph());
    }
    if (filter.since() != null) {
      conditions.add("enqueued_at >= TO_TIMESTAMP(MILLISECOND, ?)");
      parameters.add(filter.since().toEpochMilli());
    }
    for (String prefix : new String[] {filter.caller() == null ? null : filter.caller() + "/", filter.prefix()}) {
      if (prefix != null) {
        conditions.add("LEFT(invocation_id, ?) = ?");
        parameters.add(prefix.length());
        parameters.add(prefix);
      }
    }
    String where = " WHERE " + String.join(" AND ", conditions);
    long count = db.callAdmin("counting queued invocations", "@AdHoc", adHoc("SELECT COUNT(*) FROM "
        + SystemSchema.QUEUE_ITEMS + where, parameters)).getResults()[0].asScalarLong();
    if (count == 0) {
      return new Page(List.of(), 0, null);
    }
    if (after != null) {
      conditions.add("(enqueued_at < TO_TIMESTAMP(MICROSECOND, ?) OR (enqueued_at = TO_TIMESTAMP(MICROSECOND, ?) "
          + "AND invocation_id > ?))");
      parameters.add(after.startedMicros());
      parameters.add(after.startedMicros());
      parameters.add(after.id());
      where = " WHERE " + String.join(" AND ", conditions);
    }
    VoltTable t = db.callAdmin("listing queued invocations", "@AdHoc", adHoc(QUEUED_COLUMNS + " FROM "
        + SystemSchema.QUEUE_ITEMS + where + " ORDER BY enqueued_at DESC, invocation_id LIMIT " + (limit + 1),
        parameters)).getResults()[0];
    List<Execution> rows = new ArrayList<>();
    while (t.advanceRow()) {
      rows.add(queuedExecution(t));
    }
    return new Page(List.copyOf(rows), count, null);
  }

  /**
   * A row of {@link #QUEUED_COLUMNS} as an execution: not started, so version 0, no frontend, no attempt; waiting, or
   * cancelled while it waited (ended when it was cancelled).
   */
  private static Execution queuedExecution(VoltTable t) {
    boolean waiting = "QUEUED".equals(t.getString(5));
    long cancelledAt = t.getLong(6);
    long finished = waiting || t.wasNull() ? 0 : cancelledAt;
    return new Execution(t.getString(0), t.getString(1), 0, waiting ? STATUS_QUEUED : SystemSchema.STATUS_CANCELLED,
        null, 0, t.getLong(2), finished, t.getLong(3), t.getLong(4));
  }

  /**
   * Every invocation that ran and matches {@code filter}: those in the log ({@link #list(ApiaryDatabase, Filter,
   * Cursor, int)}: running ones, and ended ones within the retention) and those only the sink still knows, merged
   * newest first by (start, ID) with the same filter and cursor on both. An invocation in both is shown once, as the
   * log has it (it may have been resumed since the sink's row). If the sink cannot be read the page holds the log's
   * rows, and {@link Page#sinkProblem} says why. {@code sink} {@code null}: the log alone.
   */
  public static Page list(ApiaryDatabase db, Filter filter, Cursor after, int limit, Sink sink) {
    if (sink == null) {
      return list(db, filter, after, limit);
    }
    Page logged = list(db, filter, after, limit + 1); // its first limit + 1, as past(...) gives the sink's
    List<Execution> merged = new ArrayList<>(logged.executions());
    String problem = null;
    try {
      // Past the log's (limit + 1)th row no sink row can be on the page: the sink is read no further.
      Execution floor = logged.executions().size() > limit ? logged.executions().get(limit) : null;
      merged.addAll(past(db, sink, filter, after, limit, floor));
    } catch (SQLException | RuntimeException e) {
      problem = "the provenance sink could not be read, so invocations past the log's retention are not listed: "
          + e.getMessage();
    }
    // Each source gave its first limit + 1 (or all it has) after the cursor: the union's first limit are the page.
    merged.sort(NEWEST_FIRST);
    Cursor next = null;
    if (merged.size() > limit) {
      merged = merged.subList(0, limit);
      next = merged.get(limit - 1).cursor();
    }
    return new Page(List.copyOf(merged), problem == null ? null : logged.total(), next, problem);
  }

  /**
   * The invocations the sink knows, as {@link #list(ApiaryDatabase, Filter, Cursor, int, Sink)} pages them, where
   * the log cannot be read because its database is stopped (a stopped {@code apiary start}): every invocation that
   * ended, as it ended; none that was running when it stopped. {@link Page#total} is {@code null}.
   *
   * @throws SQLException if the sink cannot be read
   */
  public static Page listEnded(Sink sink, Filter filter, Cursor after, int limit) throws SQLException {
    List<Execution> rows = past(null, sink, filter, after, limit, null);
    Cursor next = null;
    if (rows.size() > limit) {
      rows = rows.subList(0, limit);
      next = rows.get(limit - 1).cursor();
    }
    return new Page(List.copyOf(rows), null, next, null);
  }

  /** Newest first by start, then by ID, as both sources order them. */
  private static final java.util.Comparator<Execution> NEWEST_FIRST = java.util.Comparator
      .comparingLong(Execution::startedMicros).reversed().thenComparing(Execution::id);

  /**
   * The sink's first {@code limit + 1} ended invocations matching {@code filter} after {@code after} that the log no
   * longer holds (an ID still in the log is the log's to show, matching or not), reading on while the log's take
   * some of them; every one where {@code db} is {@code null}. None ordered after {@code floor} (if not null) is
   * read on for: an ended invocation is in both until the retention deletes it, so without the floor a first page
   * would read through every one the log still holds.
   */
  private static List<Execution> past(ApiaryDatabase db, Sink sink, Filter filter, Cursor after, int limit,
      Execution floor) throws SQLException {
    Map<String, String> p = new LinkedHashMap<>();
    putIf(p, "graph", filter.graph());
    putIf(p, "status", filter.status());
    // To the millisecond, as the log's filter compares it.
    putIf(p, "since", filter.since() == null ? null : Instant.ofEpochMilli(filter.since().toEpochMilli()).toString());
    putIf(p, "caller", filter.caller());
    putIf(p, "frontend", filter.frontend());
    putIf(p, "prefix", filter.prefix());
    int want = Math.min(limit + 1, ProvenanceReports.MOST_INVOCATIONS);
    p.put("limit", String.valueOf(want));
    List<Execution> kept = new ArrayList<>();
    Cursor from = after;
    while (true) {
      if (from != null) {
        p.put("after-started", instant(from.startedMicros()).toString());
        p.put("after-id", from.id());
      }
      ProvenanceReports.Report r = sink.answer("invocations", p);
      List<Execution> rows = new ArrayList<>();
      for (List<String> row : r.rows()) {
        rows.add(fromSink(r.columns(), row));
      }
      Set<String> logged = db == null ? Set.of() : logged(db, rows);
      boolean belowFloor = false;
      for (Execution e : rows) {
        belowFloor |= floor != null && NEWEST_FIRST.compare(e, floor) > 0;
        if (!belowFloor && !logged.contains(e.id()) && kept.size() < limit + 1) {
          kept.add(e);
        }
      }
      if (rows.size() < want || kept.size() >= limit + 1 || belowFloor) {
        return kept;
      }
      from = rows.get(rows.size() - 1).cursor();
    }
  }

  /** Which of {@code rows}' IDs the log holds (asked 100 at a time). */
  private static Set<String> logged(ApiaryDatabase db, List<Execution> rows) {
    Set<String> ids = new TreeSet<>();
    for (int from = 0; from < rows.size(); from += 100) {
      List<Object> parameters = new ArrayList<>();
      rows.subList(from, Math.min(from + 100, rows.size())).forEach(e -> parameters.add(e.id()));
      VoltTable t = db.callAdmin("reading which invocations are logged", "@AdHoc", adHoc("SELECT invocation_id FROM "
          + SystemSchema.INVOCATIONS + " WHERE invocation_id IN (" + String.join(", ", java.util.Collections.nCopies(
          parameters.size(), "?")) + ")", parameters)).getResults()[0];
      while (t.advanceRow()) {
        ids.add(t.getString(0));
      }
    }
    return ids;
  }

  /** A row of the query {@code invocations} as an execution (ended, so its "now" is its end). */
  private static Execution fromSink(List<String> columns, List<String> row) {
    java.util.function.Function<String, String> cell = c -> {
      String v = row.get(columns.indexOf(c));
      return "NULL".equals(v) ? null : v;
    };
    Instant started = Instant.parse(cell.apply("started_at"));
    long finished = Instant.parse(cell.apply("finished_at")).toEpochMilli();
    String attempts = cell.apply("attempts");
    return new Execution(cell.apply("invocation_id"), cell.apply("graph"), Long.parseLong(cell.apply(
        "graph_version")), cell.apply("status"), cell.apply("frontend"), attempts == null ? 0 : Long.parseLong(
        attempts), started.toEpochMilli(), finished, finished, started.getEpochSecond() * 1_000_000L
        + started.getNano() / 1_000);
  }

  private static Instant instant(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  private static void putIf(Map<String, String> p, String name, String value) {
    if (value != null) {
      p.put(name, value);
    }
  }

  /**
   * The logged invocation {@code id}; an ID without '/' not logged as such is also looked for as any caller's
   * {@code IDENTITY/id} (where keys are required a client knows only its own part).
   *
   * @throws AmbiguousIdException if several callers started an invocation with that ID
   */
  public static Optional<Detail> find(ApiaryDatabase db, String id) {
    VoltTable t = byId(db, "invocation", COLUMNS + ", request, result FROM " + SystemSchema.INVOCATIONS + " WHERE ",
        id);
    if (!t.advanceRow()) {
      return findQueued(db, id);
    }
    Execution e = execution(t);
    byte[] request = t.getVarbinary(10);
    byte[] result = t.getVarbinary(11);
    return Optional.of(new Detail(e, request, t.wasNull() ? null : result));
  }

  /**
   * An invocation waiting on a queue or for its delay ({@link #STATUS_QUEUED}), or cancelled while it waited, under
   * {@code id} or (an ID without '/') any caller's {@code IDENTITY/id}: one multi-partition read of the queue items.
   */
  private static Optional<Detail> findQueued(ApiaryDatabase db, String id) {
    if (!SystemSchema.tables(db).contains(SystemSchema.QUEUE_ITEMS)) {
      return Optional.empty();
    }
    VoltTable t = byId(db, "queued invocation", QUEUED_COLUMNS + ", request, outcome FROM " + SystemSchema.QUEUE_ITEMS
        + " WHERE " + NEVER_STARTED + " AND ", id);
    if (!t.advanceRow()) {
      return Optional.empty();
    }
    byte[] request = t.getVarbinary(7);
    byte[] outcome = t.getVarbinary(8);
    return Optional.of(new Detail(queuedExecution(t), request, t.wasNull() ? null : outcome));
  }

  /**
   * The rows of {@code selectWhere} (a SELECT up to its WHERE condition, the invocation ID first among its columns)
   * for {@code id}, or (an ID without '/', none found) for any caller's {@code IDENTITY/id}.
   *
   * @throws AmbiguousIdException if several callers' invocations have that ID
   */
  private static VoltTable byId(ApiaryDatabase db, String what, String selectWhere, String id) {
    VoltTable t = db.callAdmin("reading " + what + " " + id, "@AdHoc", selectWhere + "invocation_id = ?", id)
        .getResults()[0];
    if (t.getRowCount() == 0 && !id.contains("/")) {
      t = db.callAdmin("reading " + what + " */" + id, "@AdHoc", selectWhere + "RIGHT(invocation_id, ?) = ? "
          + "ORDER BY invocation_id LIMIT 10", id.length() + 1, "/" + id).getResults()[0];
      if (t.getRowCount() > 1) {
        List<String> ids = new ArrayList<>();
        while (t.advanceRow()) {
          ids.add(t.getString(0));
        }
        throw new AmbiguousIdException(id, ids);
      }
    }
    return t;
  }

  /** How many logged invocations have each status (every status present, 0 if none). */
  public static Map<String, Long> countsByStatus(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("counting invocations", "@AdHoc", "SELECT status, COUNT(*) FROM "
        + SystemSchema.INVOCATIONS + " GROUP BY status").getResults()[0];
    Map<String, Long> counts = new LinkedHashMap<>();
    for (String s : STATUSES) {
      counts.put(s, 0L);
    }
    while (t.advanceRow()) {
      counts.put(t.getString(0), t.getLong(1));
    }
    return counts;
  }

  /** A registered graph version. */
  public record GraphVersion(String name, int version, String registeredAt, RegisteredGraph graph) {}

  /** Every registered graph version, by name then version; empty if nothing was deployed. */
  public static List<GraphVersion> graphs(ApiaryDatabase db) {
    if (!SystemSchema.tables(db).contains(SystemSchema.GRAPHS)) {
      return List.of();
    }
    VoltTable t = db.callAdmin("reading registered graphs", "@AdHoc", "SELECT name, version, registered_at, "
        + "definition FROM " + SystemSchema.GRAPHS + " ORDER BY name, version").getResults()[0];
    List<GraphVersion> graphs = new ArrayList<>();
    while (t.advanceRow()) {
      String name = t.getString(0);
      graphs.add(new GraphVersion(name, (int) t.getLong(1), t.getTimestampAsTimestamp(2).toString(),
          Json.read(t.getVarbinary(3), RegisteredGraph.class, "graph '" + name + "'")));
    }
    return graphs;
  }

  /**
   * A frontend with its lease as the database's clock sees it.
   *
   * @param leaseRemainingMs how long its lease runs on (negative: expired that long ago)
   * @param running the invocations the log says it runs
   */
  public record Frontend(String id, String endpoint, long leaseRemainingMs, long running) {
    public boolean live() {
      return leaseRemainingMs >= 0;
    }
  }

  /** Every frontend that ever held a lease, by endpoint. */
  public static List<Frontend> frontends(ApiaryDatabase db) {
    Set<String> tables = SystemSchema.tables(db);
    if (!tables.contains(SystemSchema.FRONTENDS)) {
      return List.of();
    }
    Map<String, Long> running = new TreeMap<>();
    if (tables.contains(SystemSchema.INVOCATIONS)) {
      VoltTable r = db.callAdmin("counting running invocations", "@AdHoc", "SELECT frontend, COUNT(*) FROM "
          + SystemSchema.INVOCATIONS + " WHERE status = ? GROUP BY frontend", SystemSchema.STATUS_RUNNING)
          .getResults()[0];
      while (r.advanceRow()) {
        running.put(r.getString(0), r.getLong(1));
      }
    }
    VoltTable t = db.callAdmin("reading frontend leases", "@AdHoc", "SELECT frontend, endpoint, lease_expires_ms, "
        + "SINCE_EPOCH(MILLISECOND, NOW) FROM " + SystemSchema.FRONTENDS + " ORDER BY endpoint").getResults()[0];
    List<Frontend> frontends = new ArrayList<>();
    while (t.advanceRow()) {
      String id = t.getString(0);
      frontends.add(new Frontend(id, t.getString(1), t.getLong(2) - t.getLong(3), running.getOrDefault(id, 0L)));
    }
    return frontends;
  }

  /** The database: VoltDB's version, its hosts, partitions and k-factor, and the addresses this client uses. */
  /** Partitions with fewer than {@code kfactor + 1} copies, from VoltDB's topology (the multi-partition one aside). */
  public static List<Long> unreplicatedPartitions(ApiaryDatabase db, int kfactor) {
    VoltTable topo = db.callAdmin("reading the topology", "@Statistics", "TOPO", 0).getResults()[0];
    List<Long> short_ = new java.util.ArrayList<>();
    while (topo.advanceRow()) {
      long partition = topo.getLong("Partition");
      if (partition == MULTI_PARTITION_ID) {
        continue;
      }
      String sites = topo.getString("Sites");
      long copies = sites == null || sites.isBlank() ? 0 : sites.split(",").length;
      if (copies < kfactor + 1) {
        short_.add(partition);
      }
    }
    return short_;
  }

  /** VoltDB's multi-partition initiator's partition ID, which {@code TOPO} lists beside the partitions. */
  private static final long MULTI_PARTITION_ID = 16383;

  public record Overview(String version, Set<Long> hosts, long partitions, String kfactor, List<String> addresses) {}

  public static Overview overview(ApiaryDatabase db) {
    VoltTable o = db.callAdmin("reading the database overview", "@SystemInformation", "OVERVIEW").getResults()[0];
    Set<Long> hosts = new TreeSet<>();
    String version = "?";
    while (o.advanceRow()) {
      hosts.add(o.getLong("HOST_ID"));
      if ("VERSION".equals(o.getString("KEY"))) {
        version = o.getString("VALUE");
      }
    }
    VoltTable partitions = db.callAdmin("counting partitions", "@Statistics", "PARTITIONCOUNT", 0).getResults()[0];
    long count = partitions.advanceRow() ? partitions.getLong("PARTITION_COUNT") : -1;
    String kfactor = "?";
    VoltTable deployment = db.callAdmin("reading the deployment", "@SystemInformation", "DEPLOYMENT").getResults()[0];
    while (deployment.advanceRow()) {
      if ("kfactor".equalsIgnoreCase(deployment.getString(0))) {
        kfactor = deployment.getString(1);
      }
    }
    return new Overview(version, hosts, count, kfactor, List.copyOf(db.clientAddresses()));
  }

  private static Execution execution(VoltTable t) {
    long started = t.getLong(6);
    long finished = t.getLong(7);
    boolean running = t.wasNull();
    return new Execution(t.getString(0), t.getString(1), t.getLong(2), t.getString(3), t.getString(4), t.getLong(5),
        started, running ? 0 : finished, t.getLong(8), t.getLong(9));
  }

  /** {@code @AdHoc}'s parameters: the statement, then the values of its {@code ?}s. */
  private static Object[] adHoc(String sql, List<Object> parameters) {
    List<Object> all = new ArrayList<>(parameters.size() + 1);
    all.add(sql);
    all.addAll(parameters);
    return all.toArray();
  }
}

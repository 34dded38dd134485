package org.apiary;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.regex.Pattern;
import org.apiary.internal.Cron;

/**
 * A graph run on a cron schedule, declared with the application ({@link Application#withSchedules}) or created at run
 * time (issue 42). Each tick runs the graph once, across every frontend, with the tick's scheduled time as its one
 * argument (an ISO-8601 instant in UTC, e.g. {@code "2026-11-29T02:00:00Z"}):
 *
 * <pre>{@code
 * Schedule nightly = Schedule.cron("nightly", "0 2 * * *", "compactOrders")   // 02:00 UTC every day
 *     .zone(ZoneId.of("Europe/Paris"))          // or rather 02:00 in Paris (default: UTC)
 *     .key(0L)                                  // the graph's partition key, if its first function has one
 *     .missed(Schedule.catchUp(3));             // after an outage, run at most the 3 latest missed ticks
 * Application app = Application.of(SCHEMA, compactOrders).withSchedules(nightly);
 * }</pre>
 *
 * <p>The expression has five fields ({@code minute hour day-of-month month day-of-week}) or six, seconds first, and is
 * evaluated in UTC unless a {@link #zone} is given; each field is {@code *}, a value, a range, a step ({@code * / 15}
 * without the spaces) or a list. In a zone with daylight-saving time, as in cronie, a schedule whose hour field is
 * {@code *} runs in real time (every instant whose wall-clock time matches: both occurrences of a repeated hour's
 * times, none of a skipped hour's); any other schedule runs a wall-clock time that occurs twice (clocks set back)
 * once, at its first occurrence, and one that does not occur (clocks set forward) once, at the instant of the change.
 * The tick's argument is always the instant, in UTC. The zone rules are those of the database nodes' JVM (its tzdata).
 *
 * <h2>What Apiary guarantees</h2>
 * <ul>
 *   <li>A tick runs once across every frontend: it is put on the schedule's queue (named {@code schedule.NAME}) by one
 *       single-partition transaction in the partition that holds the schedule, which also moves the schedule past the
 *       tick, so two frontends cannot both put it there; it runs as an ordinary queued invocation whose ID is derived
 *       from the schedule's name and the tick's time ({@code NAME@TIME}), so a frontend that takes over a dead one's
 *       tick attaches to its invocation instead of running it again.</li>
 *   <li>Ticks are decided by the database's clock, not a frontend's.</li>
 *   <li>After an outage (no frontend running, or the schedule's partition unavailable), the ticks that passed are
 *       handled by the schedule's {@link #missed} policy: {@link #skip()} (the default) runs only the latest tick
 *       that is due; {@link #catchUp(int) catchUp(n)} also runs up to {@code n} of the missed ticks before it, the
 *       latest ones, oldest first.</li>
 *   <li>Paused ({@code apiary schedules pause}), a schedule puts no tick on its queue; resumed, it starts from the
 *       next tick after the resume (the ticks of the pause are not run; backfill them if they should be). A trigger
 *       runs one tick at the database's current time; a backfill puts every tick of a range on the queue, each
 *       unless a tick of that time is already there (within the retention of queue items).</li>
 * </ul>
 */
public final class Schedule {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,37}");
  /** The most missed ticks a schedule may catch up after an outage. */
  public static final int MAX_CATCH_UP = 1000;

  private final String name;
  private final String expression;
  private final String graph;
  private final Object key;
  private final Missed missed;
  private final ZoneId zone;

  private Schedule(String name, String expression, String graph, Object key, Missed missed, ZoneId zone) {
    this.name = name;
    this.expression = expression;
    this.graph = graph;
    this.key = key;
    this.missed = missed;
    this.zone = zone;
  }

  /**
   * What a schedule does with the ticks that passed while nothing ran it: {@link #skip()} or {@link #catchUp(int)}.
   *
   * @param catchUp how many missed ticks before the latest due one run (0: none)
   */
  public record Missed(int catchUp) {
    public Missed {
      if (catchUp < 0 || catchUp > MAX_CATCH_UP) {
        throw new IllegalArgumentException("a schedule catches up 0 to " + MAX_CATCH_UP + " missed ticks, not "
            + catchUp);
      }
    }

    @Override
    public String toString() {
      return catchUp == 0 ? "skip" : "catch up " + catchUp;
    }
  }

  /** Missed ticks are not run: after an outage only the latest tick that is due runs. */
  public static Missed skip() {
    return new Missed(0);
  }

  /**
   * After an outage the latest tick that is due runs, and before it up to {@code n} missed ticks, the latest ones,
   * oldest first.
   *
   * @throws IllegalArgumentException if {@code n} is not between 1 and {@value #MAX_CATCH_UP}
   */
  public static Missed catchUp(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("catchUp(n) catches up at least 1 missed tick, not " + n + "; use skip()");
    }
    return new Missed(n);
  }

  /**
   * A schedule that runs graph {@code graph} at every time the cron expression matches (UTC, or the zone named as
   * {@code CRON_TZ=Europe/Paris 0 2 * * *}, or given with {@link #zone}), skipping missed ticks.
   *
   * @param name 1 to 38 letters, digits, '_', '.' or '-', starting with a letter or '_'
   * @throws IllegalArgumentException if the name is not such a name, or the expression is not valid (naming the
   *     field and what is wrong, or the unknown zone)
   */
  public static Schedule cron(String name, String expression, String graph) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(graph, "graph");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("a schedule's name is 1 to 38 letters, digits, '_', '.' or '-', starting "
          + "with a letter or '_', not '" + name + "'");
    }
    Objects.requireNonNull(expression, "expression");
    Cron cron = Cron.parse(expression);
    cron.next(java.time.Instant.EPOCH); // refuses an expression that never matches
    return new Schedule(name, cron.fields(), graph, null, skip(), cron.zone());
  }

  /** As {@link #cron(String, String, String)}, running this graph. */
  public static Schedule cron(String name, String expression, Graph graph) {
    return cron(name, expression, graph.name());
  }

  /** This schedule running its graph under this partition key (a number or a string), as an invocation would. */
  public Schedule key(Object partitionKey) {
    return new Schedule(name, expression, graph, partitionKey, missed, zone);
  }

  /** This schedule with this policy for missed ticks ({@link #skip()} or {@link #catchUp(int)}). */
  public Schedule missed(Missed policy) {
    return new Schedule(name, expression, graph, key, Objects.requireNonNull(policy, "policy"), zone);
  }

  /**
   * This schedule with its expression matched against the wall-clock time of {@code zone} (default UTC), daylight-
   * saving changes included (see the class comment).
   */
  public Schedule zone(ZoneId zone) {
    Objects.requireNonNull(zone, "zone");
    return new Schedule(name, expression, graph, key, missed, zone.normalized().equals(ZoneOffset.UTC)
        ? ZoneOffset.UTC : zone);
  }

  /**
   * This schedule in the zone with this ID ({@code Europe/Paris}, {@code UTC}, {@code +02:00}).
   *
   * @throws IllegalArgumentException naming the zone if it is unknown
   */
  public Schedule zone(String zoneId) {
    return zone(Cron.zone(null, Objects.requireNonNull(zoneId, "zoneId")));
  }

  /** The time zone its expression is matched in ({@link ZoneOffset#UTC} unless given). */
  public ZoneId zone() {
    return zone;
  }

  /** The expression as the database stores it: {@code CRON_TZ=ZONE} before the fields unless the zone is UTC. */
  public String storedExpression() {
    return Cron.stored(expression, zone);
  }

  /** The schedule's name. */
  public String name() {
    return name;
  }

  /** The name of the queue its ticks are put on: {@code schedule.NAME}. */
  public String queueName() {
    return queueName(name);
  }

  /** The name of the queue the ticks of schedule {@code schedule} are put on. */
  public static String queueName(String schedule) {
    return "schedule." + schedule;
  }

  /** The cron expression's fields (without the zone). */
  public String expression() {
    return expression;
  }

  /** The graph each tick runs. */
  public String graph() {
    return graph;
  }

  /** The partition key each tick runs under, or {@code null}. */
  public Object partitionKey() {
    return key;
  }

  /** The policy for missed ticks. */
  public Missed missed() {
    return missed;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Schedule s && name.equals(s.name) && expression.equals(s.expression) && graph.equals(s.graph)
        && Objects.equals(key, s.key) && missed.equals(s.missed) && zone.equals(s.zone);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, expression, graph, key, missed, zone);
  }

  @Override
  public String toString() {
    return "Schedule[" + name + ", '" + expression + "'" + (zone.equals(ZoneOffset.UTC) ? "" : " in " + zone)
        + ", graph " + graph + (key != null ? ", key " + key : "") + ", "
        + missed + "]";
  }
}

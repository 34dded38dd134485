package org.apiary.cli;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Schedules;
import org.apiary.runtime.SystemSchema;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code apiary schedules list|pause|resume|trigger|backfill|delete} (issue 42): schedules, from the database. */
@Command(name = "schedules", mixinStandardHelpOptions = true,
    description = {"Schedules (declared with the application, Schedule.cron, or created at run time): each tick runs "
        + "its graph once across every frontend, with the tick's time (UTC) as its argument, as an item of the "
        + "schedule's queue (schedule.NAME).",
        "Every subcommand is one transaction in the schedule's partition, through the database's administrator."},
    subcommands = {SchedulesCommand.ListSchedules.class, SchedulesCommand.Create.class, SchedulesCommand.Pause.class, SchedulesCommand.Resume.class,
        SchedulesCommand.Trigger.class, SchedulesCommand.Backfill.class, SchedulesCommand.Delete.class})
public final class SchedulesCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name a subcommand: apiary schedules list, create NAME --cron "
        + "EXPR --graph G, pause NAME, "
        + "resume NAME, trigger NAME, backfill NAME --from T --to T, or delete NAME");
  }

  /** What every subcommand shares: where the database is, and the refusal of an unknown schedule as one line. */
  abstract static class Base implements Callable<Integer> {
    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try (ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
        if (!SystemSchema.tables(db).contains(SystemSchema.SCHEDULES)) {
          throw new CliException("no schedules: this database's system schema has none (nothing with schedules was "
              + "deployed to " + target.describe() + ")");
        }
        run(db, out);
      } catch (InvalidRequestException e) {
        throw new CliException(e.getMessage(), e);
      } finally {
        out.flush();
      }
      return 0;
    }

    abstract void run(ApiaryDatabase db, PrintWriter out);
  }

  /** A subcommand about one schedule, named by its one parameter. */
  abstract static class Named extends Base {
    @Parameters(index = "0", paramLabel = "NAME", description = "The schedule's name.")
    String name;
  }

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "List the schedules: name, cron expression, its time zone, graph, partition key, missed-tick policy, whether "
          + "paused, the last tick put on its queue, the next one, and how many of its ticks wait or run.")
  static final class ListSchedules extends Base {
    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (Schedules.Stored s : Schedules.list(db)) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("name", s.name());
        row.put("cron", s.expression());
        row.put("zone", s.zone());
        row.put("graph", s.graph());
        row.put("key", s.partitionKeyJson() == null ? "-" : s.partitionKeyJson());
        row.put("missed", s.catchUp() == 0 ? "skip" : "catch up " + s.catchUp());
        row.put("paused", s.paused() ? "yes" : "no");
        row.put("last_tick", s.lastTick());
        row.put("next_tick", s.paused() ? "(paused)" : s.nextTick() == null ? "never" : s.nextTick());
        row.put("waiting", s.waiting());
        rows.add(row);
      }
      if (rows.isEmpty()) {
        out.println("no schedules in " + target.describe());
        return;
      }
      ProvenanceCommand.printTable(out, rows);
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true,
      description = {"Create a schedule at run time (or change one: a schedule stored again keeps its last tick and "
          + "whether it is paused, and takes the rest): its queue schedule.NAME and its row, for a registered graph. "
          + "A new schedule's first tick is the first after now. Each tick runs GRAPH once across every frontend "
          + "with the tick's time (an instant, UTC) as its one argument.",
          "Exit code 2 if the name, expression, zone or key is not valid (the message names which), 1 if the graph "
              + "is not registered."})
  static final class Create extends Named {
    @Option(names = "--cron", required = true, paramLabel = "EXPR", description = "The cron expression: 5 fields "
        + "(minute hour day-of-month month day-of-week) or 6 (seconds first), e.g. '0 2 * * *'.")
    String cron;

    @Option(names = "--graph", required = true, paramLabel = "G", description = "The registered graph each tick "
        + "runs.")
    String graph;

    @Option(names = "--zone", paramLabel = "ZONE", description = "The time zone the expression is matched in: a "
        + "region (Europe/Paris), UTC, or an offset (+02:00). Default UTC. Across daylight-saving changes a "
        + "wall-clock time that occurs twice runs once (its first occurrence), one that is skipped runs at the "
        + "change.")
    String zone;

    @Option(names = "--key", paramLabel = "K", description = "The partition key the ticks run under (a JSON number or "
        + "string), for a graph whose first function has one.")
    String key;

    @Option(names = "--catch-up", paramLabel = "N", defaultValue = "0", description = "After an outage, also run the "
        + "N latest missed ticks (default ${DEFAULT-VALUE}: skip them, run only the latest due).")
    int catchUp;

    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      org.apiary.Schedule schedule;
      try {
        schedule = org.apiary.Schedule.cron(name, cron, graph);
        if (zone != null) {
          schedule = schedule.zone(zone);
        }
        if (catchUp != 0) {
          schedule = schedule.missed(org.apiary.Schedule.catchUp(catchUp));
        }
        if (key != null) {
          com.fasterxml.jackson.databind.JsonNode k = InvokeCommand.parse(key);
          if (!k.isIntegralNumber() && !k.isTextual()) {
            throw new IllegalArgumentException("--key is a JSON number or string, not " + key);
          }
          schedule = schedule.key(k.isIntegralNumber() ? (Object) k.asLong() : k.asText());
        }
      } catch (IllegalArgumentException e) {
        throw new CliException("schedule '" + name + "' not created: " + e.getMessage(), 2, e);
      }
      Schedules.create(db, schedule);
      Schedules.Stored stored = Schedules.list(db).stream().filter(s -> s.name().equals(name)).findFirst()
          .orElseThrow(() -> new CliException("schedule " + name + " was stored but is not listed"));
      out.println("schedule " + name + " created: '" + stored.expression() + "' in " + stored.zone() + ", graph "
          + stored.graph() + ", next tick " + (stored.paused() ? "(paused)" : stored.nextTick() == null ? "never"
          : stored.nextTick()));
    }
  }

  @Command(name = "pause", mixinStandardHelpOptions = true,
      description = "Pause a schedule: none of its ticks is put on its queue until it is resumed (ticks already "
          + "there still run).")
  static final class Pause extends Named {
    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      Schedules.pause(db, name);
      out.println("schedule " + name + " paused");
    }
  }

  @Command(name = "resume", mixinStandardHelpOptions = true,
      description = "Resume a paused schedule: its next tick is the first after now; the ticks of the pause are not "
          + "run (backfill them if they should be).")
  static final class Resume extends Named {
    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      Schedules.resume(db, name);
      out.println("schedule " + name + " resumed");
    }
  }

  @Command(name = "trigger", mixinStandardHelpOptions = true,
      description = "Run a schedule now, paused or not: a tick at the database's current time is put on its queue "
          + "(its regular ticks are unchanged). Prints the tick's invocation ID.")
  static final class Trigger extends Named {
    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      Schedules.Tick tick = Schedules.trigger(db, name);
      out.println("schedule " + name + " triggered: tick " + tick.time() + ", invocation " + tick.invocationId());
    }
  }

  @Command(name = "backfill", mixinStandardHelpOptions = true,
      description = {"Put every tick of a range on a schedule's queue, paused or not: each runs unless a tick of "
          + "that time is there already (one that ran within the retention of queue items does not run again). At "
          + "most 10000 ticks at once.",
          "Prints one line per tick: its time, invocation ID, and 'enqueued' or 'already there'."})
  static final class Backfill extends Named {
    @Option(names = "--from", required = true, paramLabel = "T", description = "The range's first instant "
        + "(inclusive): an instant (2026-11-29T00:00:00Z) or a time ago (90s, 15m, 2h, 1d).")
    String from;

    @Option(names = "--to", paramLabel = "T", description = "The range's last instant (inclusive), as --from; "
        + "default now.")
    String to;

    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      Instant now = Instant.now();
      Instant start = ExecutionsCommand.ListExecutions.since(from, now);
      Instant end = to == null ? now : ExecutionsCommand.ListExecutions.since(to, now);
      List<Schedules.Tick> ticks = Schedules.backfill(db, name, start, end);
      long enqueued = 0;
      for (Schedules.Tick t : ticks) {
        out.println(t.time() + "  " + t.invocationId() + "  " + (t.enqueued() ? "enqueued" : "already there"));
        enqueued += t.enqueued() ? 1 : 0;
      }
      out.println("schedule " + name + ": " + ticks.size() + " tick(s) from " + start + " to " + end + ", " + enqueued
          + " enqueued");
    }
  }

  @Command(name = "delete", mixinStandardHelpOptions = true,
      description = "Delete a schedule: no tick of it is put on its queue after this; ticks already there still run. "
          + "A schedule declared with an application comes back when the application is registered again.")
  static final class Delete extends Named {
    @Override
    void run(ApiaryDatabase db, PrintWriter out) {
      Schedules.delete(db, name);
      out.println("schedule " + name + " deleted");
    }
  }
}

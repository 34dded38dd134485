package org.apiary.cli;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apiary.console.ConsoleConfig;
import org.apiary.console.ConsoleServer;
import org.apiary.database.ApiaryDatabase;
import org.apiary.provenance.ProvenanceSink;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code apiary console}: the console's JSON API (issue 43) until the process is stopped. */
@Command(name = "console", mixinStandardHelpOptions = true,
    description = {"Serve the console's read-only JSON API over HTTP until stopped (Ctrl-C): GET /api/executions "
        + "(filters graph, status, since, caller, frontend, prefix; 100 per page, the next page's URL in nextUrl), "
        + "/api/executions/ID, /api/graphs and /api/cluster.",
        "Every request needs an API key with the role given by --role (default admin), sent as "
            + "`Authorization: Bearer KEY`; keys are those of `apiary credentials`. It reads what "
            + "`apiary executions` and `apiary status` read, through the same queries."})
public final class ConsoleCommand implements Callable<Integer> {
  @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
  ServiceTarget.Database target;

  @Option(names = "--sink", paramLabel = "JDBC_URL", description = "The provenance sink, for an execution's function "
      + "executions (default with --data: the service's). Its password is never shown.")
  String sink;

  @Option(names = "--port", paramLabel = "P", defaultValue = "0",
      description = "The port to listen on; 0 picks a free one (default; the address is printed).")
  int port;

  @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = ConsoleConfig.LOOPBACK,
      description = "The address to listen on (default ${DEFAULT-VALUE}).")
  String bind;

  @Option(names = "--role", paramLabel = "ROLE", defaultValue = "admin",
      description = "The role an API key must carry (default ${DEFAULT-VALUE}).")
  String role;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    if (target == null) {
      throw ServiceTarget.missing(spec, "--database HOST:PORT");
    }
    String sinkUrl = sink != null ? sink : target.provenanceSink();
    ConsoleConfig config;
    try {
      config = ConsoleConfig.defaults(port).withBind(bind).withSink(sinkUrl).withRole(role)
          .withSpillRoot(target.provenanceSpill()); // the servers' backlog reports, with --data
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage(), 2, null);
    }
    ApiaryDatabase db = ApiaryDatabase.open(target.config());
    ConsoleServer server;
    try {
      server = ConsoleServer.start(db, config);
    } catch (IOException | RuntimeException e) {
      db.close();
      throw new CliException("the console cannot listen on " + bind + ":" + port + ": " + e.getMessage(), 1, e);
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      db.close();
      stopped.countDown();
    }, "apiary-console-shutdown"));
    System.out.println("console of " + target.describe() + " at " + server.url() + "/api/ (every request needs an "
        + "API key with the role '" + role + "': Authorization: Bearer KEY)");
    System.out.println("  provenance sink: " + (sinkUrl == null ? "none (executions show no function executions)"
        : ProvenanceSink.redact(sinkUrl)));
    System.out.flush();
    stopped.await();
    return 0;
  }
}

package org.apiary.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.internal.Json;
import org.apiary.internal.Output;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Calls a graph through a frontend and prints what it returned as JSON. */
@Command(name = "invoke", mixinStandardHelpOptions = true,
    description = {"Call a registered graph through a frontend and print its result as JSON on stdout: the value "
        + "if the graph returned one, else a JSON array of every value it returned.",
        "ARGS and --key are JSON values (42, 2.5, true, null, \"text\", [1,2], {\"a\":1}); a bare word that is not "
            + "JSON is taken as a string, so `hello` and '\"hello\"' are the same, while '\"42\"' is the string 42.",
        "Exit code 0 on success, 1 if the graph failed (its transactions were rolled back), the request was refused "
            + "or no answer came (then the invocation may have run: call again with the same --id to get its outcome "
            + "without running it twice), 2 on bad usage."})
public final class InvokeCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "GRAPH", description = "The graph to call.")
  String graph;

  @Parameters(index = "1..*", paramLabel = "ARGS", description = "The graph's arguments, each a JSON value.")
  List<String> arguments = new ArrayList<>();

  @Option(names = "--key", paramLabel = "K",
      description = "The partition key of the graph's first local functions (a JSON value); omit it for a graph "
          + "that starts with a global function.")
  String key;

  @Option(names = "--id", paramLabel = "ID",
      description = "The invocation ID (1 to 64 characters; default: a fresh random one, printed on stderr if the "
          + "outcome is unknown). Calling again with the same ID returns the first call's outcome.")
  String id;

  @Option(names = "--no-wait", description = "Start the invocation and print its ID once it is durably logged, "
      + "without waiting for its result: follow it with `apiary executions show ID`, or `invoke` again with the same "
      + "--id and arguments to wait for its outcome.")
  boolean noWait;

  @Option(names = "--delay", paramLabel = "D", description = "With --no-wait: start the invocation no sooner than D "
      + "from now (30s, 15m, 2h, 1d, or ISO-8601 such as PT1M30S; at most 366 days), by the database's clock. The "
      + "start is stored durably before the ID is printed and runs once whatever frontends stop meanwhile; until it "
      + "starts `apiary executions show ID` says QUEUED, and `apiary executions cancel ID` cancels it.")
  String delay;

  @Option(names = "--timeout-s", defaultValue = "30", paramLabel = "S",
      description = "Seconds to wait for the result (default ${DEFAULT-VALUE}).")
  long timeoutSeconds;

  @ArgGroup(exclusive = true, multiplicity = "0..1")
  ServiceTarget.Frontend target;

  @Option(names = "--credential-file", paramLabel = "FILE",
      description = "A file whose first line is the API key to call with. Default: the environment variable "
          + ServiceTarget.API_KEY_VARIABLE + ", else (with --data) the admin key `apiary start` keeps in DIR/"
          + ServiceDirectory.ADMIN_KEY + ". Never on the command line, where others would see it.")
  Path credentialFile;

  @Option(names = "--purpose", paramLabel = "P",
      description = "The data-use purpose the call states; a graph whose access policy lists purposes refuses "
          + "another, or none. Recorded in provenance.")
  String purpose;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    if (target == null) {
      throw ServiceTarget.missing(spec, "--frontend HOST:PORT");
    }
    if (timeoutSeconds < 1) {
      throw new CliException("--timeout-s must be at least 1, not " + timeoutSeconds, 2, null);
    }
    Duration delayBy = delay == null ? null : delay(delay);
    if (delayBy != null && !noWait) {
      throw new CliException("--delay needs --no-wait: a delayed start prints its ID and returns", 2, null);
    }
    List<JsonNode> args = arguments.stream().map(InvokeCommand::parse).toList();
    InvocationRequest request;
    try {
      request = InvocationRequest.of(graph, key == null ? null : parse(key), args.toArray())
          .withId(id != null ? id : org.apiary.internal.InvocationIds.next());
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage(), 2, e);
    }
    List<String> endpoints = target.endpoints();
    // One attempt per frontend, at least two, within the timeout; retries reuse the invocation ID.
    int attempts = Math.max(2, endpoints.size());
    String credential = ServiceTarget.credential(credentialFile, target.data);
    ClientConfig config;
    try {
      config = ClientConfig.of(endpoints.toArray(String[]::new)).withCredential(credential).withPurpose(purpose);
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage(), 2, e);
    }
    config = config.withAttemptTimeout(Duration.ofMillis(Math.max(1, timeoutSeconds * 1000 / attempts)))
        .withMaxAttempts(attempts);
    GraphResult result = null;
    try (ApiaryClient client = ApiaryClient.connect(config)) {
      if (noWait) {
        String started = delayBy == null ? client.start(request).id() : client.start(request, delayBy).id();
        spec.commandLine().getOut().println(started);
        spec.commandLine().getOut().flush();
        System.err.println("apiary: invocation " + started + " of graph '" + graph + "' is " + (delayBy == null
            ? "started" : "stored, to start in " + delayBy.toSeconds() + " s") + "; follow it with: "
            + "apiary executions show " + started + ", or wait for its outcome with the same invoke and --id "
            + started);
        return 0;
      }
      result = client.invoke(request);
    } catch (FunctionFailedException e) {
      throw new CliException("graph '" + graph + "' failed in function '" + e.functionName() + "': "
          + e.errorType() + ": " + e.errorMessage() + " (its transaction was rolled back)", e);
    } catch (org.apiary.AccessDeniedException e) {
      // A policy refusal names the roles or purposes it asks for; the key itself was fine, so no hint about keys.
      throw new CliException("the frontend refused the call, nothing ran: " + e.getMessage() + (e.byPolicy()
          ? " (state a purpose with --purpose P; roles come with the key: apiary credentials create --role R)"
          : ". Give a key with --credential-file FILE or " + ServiceTarget.API_KEY_VARIABLE), e);
    } catch (InvalidRequestException e) {
      throw new CliException("graph '" + graph + "' refused the request, nothing ran: " + e.getMessage(), e);
    } catch (OutcomeUnknownException e) {
      throw new CliException("no answer about invocation " + request.id() + " of graph '" + graph + "' from "
          + String.join(", ", endpoints) + " within " + timeoutSeconds + " s: it may or may not have run. Is Apiary "
          + "running there? Get its outcome without running it twice with: apiary invoke " + graph + " --id "
          + request.id() + " (and the same arguments) (" + e.getMessage() + ")", e);
    } catch (DatabaseException e) {
      throw new CliException("graph '" + graph + "' did not run, the database refused it: " + e.getMessage()
          + "; calling again is safe", e);
    }
    spec.commandLine().getOut().println(toJson(result));
    spec.commandLine().getOut().flush();
    return 0;
  }

  /** A command-line value as JSON: JSON if it parses as one whole value, else the text as a string. */
  static JsonNode parse(String text) {
    try {
      JsonNode node = Json.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(text);
      return node == null || node.isMissingNode() ? TextNode.valueOf(text) : node;
    } catch (JsonProcessingException e) {
      return TextNode.valueOf(text);
    }
  }

  /** The single value, or an array of every value. */
  static String toJson(GraphResult result) {
    return print(result.values(JsonNode.class));
  }

  /** The single value, or an array of every value. */
  static String toJson(List<Output> outputs) {
    return print(outputs.stream().map(Output::value).toList());
  }

  private static String print(List<JsonNode> values) {
    JsonNode printed;
    if (values.size() == 1) {
      printed = values.get(0);
    } else {
      ArrayNode all = JsonNodeFactory.instance.arrayNode();
      values.forEach(all::add);
      printed = all;
    }
    try {
      return Json.MAPPER.writeValueAsString(printed);
    } catch (JsonProcessingException e) {
      throw new CliException("cannot print the result as JSON: " + e.getMessage(), e);
    }
  }

  private static final java.util.regex.Pattern SHORT_DURATION =
      java.util.regex.Pattern.compile("(\\d{1,9})([smhd])");

  /** {@code --delay}: 30s, 15m, 2h, 1d or an ISO-8601 duration; refused naming the option otherwise. */
  static Duration delay(String given) {
    java.util.regex.Matcher m = SHORT_DURATION.matcher(given.strip());
    Duration d;
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      d = switch (m.group(2)) {
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    } else {
      try {
        d = Duration.parse(given.strip());
      } catch (java.time.format.DateTimeParseException e) {
        throw new CliException("--delay takes a duration (30s, 15m, 2h, 1d or ISO-8601 such as PT1M30S), not '"
            + given + "'", 2, e);
      }
    }
    if (d.isNegative() || d.compareTo(Duration.ofDays(366)) > 0) {
      throw new CliException("--delay is 0 to 366 days, not '" + given + "'", 2, null);
    }
    return d;
  }
}

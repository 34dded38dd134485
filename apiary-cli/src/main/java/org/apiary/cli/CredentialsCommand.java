package org.apiary.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * API keys from the command line: create one with roles (graphs' access policies name roles) and optionally an
 * expiry, list them (never the keys), revoke one. Frontends see a change within a second.
 */
@Command(name = "credentials", mixinStandardHelpOptions = true,
    description = "Create, list and revoke API keys and their roles.",
    subcommands = {CredentialsCommand.Create.class, CredentialsCommand.ListKeys.class,
        CredentialsCommand.Revoke.class})
public final class CredentialsCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name an action: create, list or revoke");
  }

  @Command(name = "create", mixinStandardHelpOptions = true,
      description = "Create an API key for an identity, with roles and optionally an expiry. The key is shown once "
          + "(or written to --key-file, readable by you only, and not shown).")
  static final class Create implements Callable<Integer> {
    @Option(names = "--identity", required = true, description = "Who calls with the key (recorded as the caller).")
    String identity;

    @Option(names = "--role", paramLabel = "ROLE", split = ",",
        description = "A role of the key (repeat, or comma-separate); '" + Credentials.ADMIN_ROLE + "' may call "
            + "every graph. None by default.")
    List<String> roles;

    @Option(names = "--expires-in", paramLabel = "DURATION", converter = ExpiresIn.class,
        description = "The key expires this long after it is created, by the database's clock: a number and d, h, m "
            + "or s (30d, 12h, 90m), or ISO-8601 (PT12H). Never, by default.")
    Duration expiresIn;

    @Option(names = "--key-file", paramLabel = "FILE",
        description = "Write the key to this new file (owner-only) instead of printing it.")
    Path keyFile;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      if (keyFile != null && Files.exists(keyFile)) {
        throw new ParameterException(spec.commandLine(), "--key-file " + keyFile + " exists; name a new file");
      }
      Set<String> keyRoles = roles == null ? Set.of() : new TreeSet<>(roles);
      Credentials.Issued issued;
      try (ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
        issued = Credentials.create(db, identity, keyRoles, expiresIn);
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), e.getMessage(), e);
      }
      PrintWriter out = spec.commandLine().getOut();
      String expiry = expiresIn == null ? "" : ", expiring in " + ExpiresIn.format(expiresIn);
      if (keyFile != null) {
        try {
          Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
          Files.writeString(keyFile, issued.apiKey() + "\n");
        } catch (IOException | UnsupportedOperationException e) {
          throw new CliException("created key " + issued.keyId() + " but could not write it to " + keyFile + ": "
              + e.getMessage() + "; revoke it ('apiary credentials revoke " + issued.keyId() + "') and try again", e);
        }
        out.println("created key " + issued.keyId() + " for " + identity + " with roles " + keyRoles + expiry
            + " in " + keyFile);
      } else {
        out.println("created key " + issued.keyId() + " for " + identity + " with roles " + keyRoles + expiry
            + " (shown only now): " + issued.apiKey());
      }
      out.flush();
      return 0;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "List the API keys: key ID, identity, roles, whether revoked, and when each expires (UTC, by "
          + "the database's clock; 'never' if it does not) (never the keys).")
  static final class ListKeys implements Callable<Integer> {
    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      List<java.util.Map<String, Object>> rows = new ArrayList<>();
      try (ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
        for (Credentials.Stored key : Credentials.list(db)) {
          java.util.Map<String, Object> row = new java.util.LinkedHashMap<>();
          row.put("key_id", key.keyId());
          row.put("identity", key.identity());
          row.put("roles", String.join(",", new TreeSet<>(key.roles())));
          row.put("revoked", key.revoked() ? "yes" : "no");
          row.put("expires", key.expiresAt() == null ? "never"
              : key.expiresAt() + (key.expired() ? " (expired)" : ""));
          rows.add(row);
        }
      }
      PrintWriter out = spec.commandLine().getOut();
      ProvenanceCommand.printTable(out, rows);
      out.flush();
      return 0;
    }
  }

  @Command(name = "revoke", mixinStandardHelpOptions = true,
      description = "Revoke an API key by its key ID; frontends refuse it within a second.")
  static final class Revoke implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "KEY_ID", description = "The key's ID (the 16 hex digits after apiary_).")
    String keyId;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      boolean revoked;
      try (ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
        revoked = Credentials.revoke(db, keyId);
      }
      if (!revoked) {
        throw new CliException("no live key with ID " + keyId + " (unknown, or already revoked)");
      }
      spec.commandLine().getOut().println("revoked key " + keyId);
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  /**
   * {@code --expires-in}: a whole number and a unit ({@code 30d}, {@code 12h}, {@code 90m}, {@code 45s}) or an ISO-8601
   * duration ({@code PT12H}, {@code P30D}), between {@link Credentials#MIN_EXPIRY} and {@link Credentials#MAX_EXPIRY}.
   */
  static final class ExpiresIn implements ITypeConverter<Duration> {
    private static final Pattern SHORT = Pattern.compile("([0-9]{1,9})([dhms])");

    @Override
    public Duration convert(String value) {
      return parse(value);
    }

    /** The duration {@code value} names; a {@link TypeConversionException} saying what is accepted if none. */
    static Duration parse(String value) {
      String text = value.strip();
      Duration d;
      Matcher m = SHORT.matcher(text.toLowerCase(Locale.ROOT));
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        d = switch (m.group(2)) {
          case "d" -> Duration.ofDays(n);
          case "h" -> Duration.ofHours(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofSeconds(n);
        };
      } else if (text.startsWith("P") || text.startsWith("p")) {
        try {
          d = Duration.parse(text);
        } catch (DateTimeParseException e) {
          throw new TypeConversionException("'" + value + "' is not an ISO-8601 duration (e.g. PT12H, P30D)");
        }
      } else {
        throw new TypeConversionException("'" + value + "' is not a duration: give a number and d, h, m or s "
            + "(30d, 12h, 90m) or ISO-8601 (PT12H)");
      }
      if (d.compareTo(Credentials.MIN_EXPIRY) < 0 || d.compareTo(Credentials.MAX_EXPIRY) > 0) {
        throw new TypeConversionException("'" + value + "' is not between " + Credentials.MIN_EXPIRY.toSeconds()
            + " second and " + Credentials.MAX_EXPIRY.toDays() + " days");
      }
      return d;
    }

    /** A duration as {@code 30d}, {@code 12h}, {@code 90m} or {@code 45s} where one unit says it, else ISO-8601. */
    static String format(Duration d) {
      if (d.toSeconds() % 86_400 == 0 && d.toNanosPart() == 0) {
        return d.toDays() + "d";
      } else if (d.toSeconds() % 3_600 == 0 && d.toNanosPart() == 0) {
        return d.toHours() + "h";
      } else if (d.toSeconds() % 60 == 0 && d.toNanosPart() == 0) {
        return d.toMinutes() + "m";
      }
      return d.toNanosPart() == 0 ? d.toSeconds() + "s" : d.toString();
    }
  }
}

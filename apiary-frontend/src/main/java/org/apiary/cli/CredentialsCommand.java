package org.apiary.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * API keys from the command line: create one with roles (graphs' access policies name roles), list them (never the
 * keys), revoke one. Frontends see a change within a second.
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
      description = "Create an API key for an identity, with roles. The key is shown once (or written to "
          + "--key-file, readable by you only, and not shown).")
  static final class Create implements Callable<Integer> {
    @Option(names = "--identity", required = true, description = "Who calls with the key (recorded as the caller).")
    String identity;

    @Option(names = "--role", paramLabel = "ROLE", split = ",",
        description = "A role of the key (repeat, or comma-separate); '" + Credentials.ADMIN_ROLE + "' may call "
            + "every graph. None by default.")
    List<String> roles;

    @Option(names = "--key-file", paramLabel = "FILE",
        description = "Write the key to this new file (owner-only) instead of printing it.")
    Path keyFile;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      if (keyFile != null && Files.exists(keyFile)) {
        throw new ParameterException(spec.commandLine(), "--key-file " + keyFile + " exists; name a new file");
      }
      Set<String> keyRoles = roles == null ? Set.of() : new TreeSet<>(roles);
      Credentials.Issued issued;
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        issued = Credentials.create(db, identity, keyRoles);
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), e.getMessage(), e);
      }
      PrintWriter out = spec.commandLine().getOut();
      if (keyFile != null) {
        try {
          Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
          Files.writeString(keyFile, issued.apiKey() + "\n");
        } catch (IOException | UnsupportedOperationException e) {
          throw new CliException("created key " + issued.keyId() + " but could not write it to " + keyFile + ": "
              + e.getMessage() + "; revoke it ('apiary credentials revoke " + issued.keyId() + "') and try again", e);
        }
        out.println("created key " + issued.keyId() + " for " + identity + " with roles " + keyRoles + " in "
            + keyFile);
      } else {
        out.println("created key " + issued.keyId() + " for " + identity + " with roles " + keyRoles
            + " (shown only now): " + issued.apiKey());
      }
      out.flush();
      return 0;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "List the API keys: key ID, identity, roles, and whether revoked (never the keys).")
  static final class ListKeys implements Callable<Integer> {
    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      List<java.util.Map<String, Object>> rows = new ArrayList<>();
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        for (Credentials.Stored key : Credentials.list(db)) {
          java.util.Map<String, Object> row = new java.util.LinkedHashMap<>();
          row.put("key_id", key.keyId());
          row.put("identity", key.identity());
          row.put("roles", String.join(",", new TreeSet<>(key.roles())));
          row.put("revoked", key.revoked() ? "yes" : "no");
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
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      boolean revoked;
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
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
}

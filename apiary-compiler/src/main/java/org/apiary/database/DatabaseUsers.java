package org.apiary.database;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import java.util.Properties;
import org.apiary.DatabaseException;

/**
 * The VoltDB users of a database Apiary starts (embedded or {@link LocalCluster}) with its security on: an
 * administrator ({@value #ADMIN_USER}, VoltDB's built-in {@code ADMINISTRATOR} role: schema, deployment, every
 * procedure) that registers applications, manages API keys and runs maintenance by hand, and the frontends' user
 * ({@value #FRONTEND_USER}, role {@value #FRONTEND_ROLE}: reads with SQL and calls the deployed functions and the
 * system procedures a frontend needs ({@code SystemSchema.FRONTEND_PROCEDURES}), each created with {@code ALLOW} the
 * role, and nothing else: it changes no schema, writes nothing through ad-hoc SQL, runs no administrative system
 * procedure, cannot move retention's fence ahead of the database's clock and cannot record a refusal that the
 * database did not check). VoltDB lets every user call its read-only system procedures ({@code @Statistics},
 * {@code @SystemCatalog}, {@code @SystemInformation}, ...). Without users a database runs open, as VoltDB does by
 * default. Immutable; {@link #toString()} hides the passwords.
 *
 * <p>VoltDB keeps users in its deployment, which a server reads when its root is initialized: users given for a data
 * directory that already exists are those of its first start. Keep them in a file only their owner reads
 * ({@link #writeTo}); never on a command line.
 *
 * @param adminPassword the password of {@value #ADMIN_USER}
 * @param frontendPassword the password of {@value #FRONTEND_USER}
 */
public record DatabaseUsers(String adminPassword, String frontendPassword) {
  /** The administrator's user name. */
  public static final String ADMIN_USER = "apiary_admin";
  /** The frontends' user name. */
  public static final String FRONTEND_USER = "apiary_frontend";
  /** The frontends' role, which Apiary's system schema defines: SQL reads and the procedures frontends need. */
  public static final String FRONTEND_ROLE = "apiary_frontend";

  /** Validates both passwords: not empty. */
  public DatabaseUsers {
    if (Objects.requireNonNull(adminPassword, "adminPassword").isEmpty()
        || Objects.requireNonNull(frontendPassword, "frontendPassword").isEmpty()) {
      throw new IllegalArgumentException("database users need non-empty passwords");
    }
  }

  /** Users with fresh random passwords (32 random bytes each). */
  public static DatabaseUsers generate() {
    return new DatabaseUsers(randomPassword(), randomPassword());
  }

  /** How the administrator connects. */
  public DatabaseLogin admin() {
    return new DatabaseLogin(ADMIN_USER, adminPassword);
  }

  /** The administrator's login of {@code users}, or {@code null} where there are none (the database is open). */
  public static DatabaseLogin adminOf(DatabaseUsers users) {
    return users == null ? null : users.admin();
  }

  /** How a frontend connects. */
  public DatabaseLogin frontend() {
    return new DatabaseLogin(FRONTEND_USER, frontendPassword);
  }

  /**
   * Writes both logins to {@code file} (created readable and writable by its owner only) as properties
   * {@code admin.password} and {@code frontend.password}.
   */
  public void writeTo(Path file) {
    try {
      OwnerOnlyFile.create(file);
      Properties p = new Properties();
      p.setProperty("admin.password", adminPassword);
      p.setProperty("frontend.password", frontendPassword);
      try (Writer w = Files.newBufferedWriter(file)) {
        p.store(w, "Apiary's VoltDB users (" + ADMIN_USER + ", " + FRONTEND_USER + "); keep this file private");
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot write the database users to " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Writes the frontends' login alone to {@code file} (created readable and writable by its owner only) as the
   * property {@code frontend.password}: the file to give a frontend on another host, which then never holds the
   * administrator's password ({@link #frontendLoginFrom} reads it).
   */
  public void writeFrontendTo(Path file) {
    try {
      OwnerOnlyFile.create(file);
      Properties p = new Properties();
      p.setProperty("frontend.password", frontendPassword);
      try (Writer w = Files.newBufferedWriter(file)) {
        p.store(w, "The login of Apiary's frontends (" + FRONTEND_USER + "); keep this file private");
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot write the frontends' database login to " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The frontends' login from {@code file}: one {@link #writeFrontendTo} wrote, or a whole users file
   * ({@link #writeTo}), of which only {@code frontend.password} is read.
   */
  public static DatabaseLogin frontendLoginFrom(Path file) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    } catch (IOException e) {
      throw new DatabaseException("cannot read the frontends' database login from " + file + ": " + e.getMessage(), e);
    }
    String frontend = p.getProperty("frontend.password");
    if (frontend == null || frontend.isEmpty()) {
      throw new DatabaseException(file + " holds no frontends' database login: it needs frontend.password");
    }
    return new DatabaseLogin(FRONTEND_USER, frontend);
  }

  /** Reads what {@link #writeTo} wrote to {@code file}, if the file exists (a database without users has none). */
  public static java.util.Optional<DatabaseUsers> readIfPresent(Path file) {
    return Files.exists(file) ? java.util.Optional.of(readFrom(file)) : java.util.Optional.empty();
  }

  /** Reads what {@link #writeTo} wrote. */
  public static DatabaseUsers readFrom(Path file) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    } catch (IOException e) {
      throw new DatabaseException("cannot read the database users from " + file + ": " + e.getMessage(), e);
    }
    String admin = p.getProperty("admin.password");
    String frontend = p.getProperty("frontend.password");
    if (admin == null || frontend == null) {
      throw new DatabaseException(file + " is not a database users file: it needs admin.password and "
          + "frontend.password");
    }
    return new DatabaseUsers(admin, frontend);
  }

  /**
   * The deployment's {@code <security>} and {@code <users>} elements. Passwords are given in plain text: VoltDB
   * hashes them when it reads the deployment, and its root directory keeps the deployment readable by its owner.
   */
  String deploymentElements() {
    return """
          <security enabled="true" provider="hash"/>
          <users>
            <user name="%s" password="%s" roles="administrator"/>
            <user name="%s" password="%s" roles="%s"/>
          </users>
        """.formatted(ADMIN_USER, Deployments.xml(adminPassword), FRONTEND_USER, Deployments.xml(frontendPassword),
        FRONTEND_ROLE);
  }

  @Override
  public String toString() {
    return "DatabaseUsers[" + ADMIN_USER + ", " + FRONTEND_USER + "; passwords hidden]";
  }

  private static String randomPassword() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}

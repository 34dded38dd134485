package org.apiary.database;

import java.util.Objects;

/**
 * A VoltDB user name and password a process connects with, where the database's security is on. Immutable; its
 * {@link #toString()} never shows the password.
 *
 * @param user the VoltDB user
 * @param password its password
 */
public record DatabaseLogin(String user, String password) {
  /** Validates both: neither may be empty. */
  public DatabaseLogin {
    if (Objects.requireNonNull(user, "user").isBlank()) {
      throw new IllegalArgumentException("a database login needs a user name");
    }
    if (Objects.requireNonNull(password, "password").isEmpty()) {
      throw new IllegalArgumentException("the database login of user '" + user + "' has an empty password");
    }
  }

  @Override
  public String toString() {
    return "DatabaseLogin[user=" + user + ", password=(hidden)]";
  }
}

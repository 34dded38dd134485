package org.apiary.cli;

/**
 * A command failed in a way its message fully explains (what went wrong and what to do): the command line prints the
 * message, without a stack trace, and exits with {@link #exitCode()}.
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  CliException(String message) {
    this(message, 1, null);
  }

  CliException(String message, Throwable cause) {
    this(message, 1, cause);
  }

  CliException(String message, int exitCode, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  int exitCode() {
    return exitCode;
  }
}

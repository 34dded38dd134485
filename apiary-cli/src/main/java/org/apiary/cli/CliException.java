package org.apiary.cli;

/**
 * A command failed in a way its message fully explains (what went wrong and what to do): the command line prints the
 * message, without a stack trace, and exits with {@link #exitCode()}.
 */
public final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  public CliException(String message) {
    this(message, 1, null);
  }

  public CliException(String message, Throwable cause) {
    this(message, 1, cause);
  }

  public CliException(String message, int exitCode, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  /** The status the command line exits with: 1 failure, 2 bad usage. */
  public int exitCode() {
    return exitCode;
  }
}

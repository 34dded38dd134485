package org.apiary.internal;

/**
 * A first run of a recorded function found, when storing its outputs, that a concurrent execution of the same
 * instance (a client's retry elsewhere) had recorded them first. The run is rolled back; the dispatcher sends it
 * again with the lookup, which replays the recorded outputs.
 */
public final class RecordedElsewhereException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RecordedElsewhereException(String message, Throwable cause) {
    super(message, cause);
  }
}

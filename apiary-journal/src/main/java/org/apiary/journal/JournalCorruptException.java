package org.apiary.journal;

import java.nio.file.Path;

/** The journal is damaged before its tail: what follows the damage cannot be trusted. Names the file and offset. */
public final class JournalCorruptException extends JournalException {
  private static final long serialVersionUID = 1L;
  private final transient Path file;
  private final long offset;

  public JournalCorruptException(String message, Path file, long offset) {
    super(message);
    this.file = file;
    this.offset = offset;
  }

  /** The damaged segment. */
  public Path file() {
    return file;
  }

  /** Where in it the damage starts. */
  public long offset() {
    return offset;
  }
}

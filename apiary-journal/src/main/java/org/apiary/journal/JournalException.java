package org.apiary.journal;

/** The journal cannot do what was asked; the message says why and what to do. */
public class JournalException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public JournalException(String message) {
    super(message);
  }

  public JournalException(String message, Throwable cause) {
    super(message, cause);
  }
}

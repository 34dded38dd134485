package org.apiary.journal;

/**
 * The journal cannot take a record now (its disk is full or failing, or it is too far behind): the transaction that
 * asked must not commit. The message says why.
 */
public final class JournalUnavailableException extends JournalException {
  private static final long serialVersionUID = 1L;

  public JournalUnavailableException(String message) {
    super(message);
  }
}

package org.apiary.frontend.query;

/** A filter value that cannot be used; {@link #field()} names the filter, the message says why. */
public final class FilterException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String field;

  public FilterException(String field, String message) {
    super(message);
    this.field = field;
  }

  /** The filter's name as the caller gave it ({@code status}, {@code --since}, ...). */
  public String field() {
    return field;
  }
}

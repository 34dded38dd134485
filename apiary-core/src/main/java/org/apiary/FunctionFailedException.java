package org.apiary;

/**
 * A function threw (or one of its SQL statements failed), so its transaction was rolled back: none of its writes
 * took effect. Retrying is safe; whether it helps depends on why the function failed. For an
 * {@linkplain ExternalFunction external step} (error type {@value ExternalFunction#FAILED}) nothing is rolled back:
 * every attempt failed, and what an attempt did outside the database is the outside service's to undo.
 */
public final class FunctionFailedException extends ApiaryException {
  private static final long serialVersionUID = 1L;
  private final String functionName;
  private final String errorType;
  private final String errorMessage;

  /**
   * @param functionName the function that failed
   * @param errorType the class name of the exception the function threw
   * @param errorMessage that exception's message, unchanged
   */
  public FunctionFailedException(String functionName, String errorType, String errorMessage) {
    super((ExternalFunction.FAILED.equals(errorType) ? "external step '" + functionName + "' failed: "
        : "function '" + functionName + "' failed and was rolled back: ") + errorType + ": " + errorMessage);
    this.functionName = functionName;
    this.errorType = errorType;
    this.errorMessage = errorMessage;
  }

  /** The name of the function that failed. */
  public String functionName() {
    return functionName;
  }

  /** The class name of the exception the function threw, for example {@code java.lang.IllegalStateException}. */
  public String errorType() {
    return errorType;
  }

  /** The message of the exception the function threw, exactly as the function wrote it. */
  public String errorMessage() {
    return errorMessage;
  }
}

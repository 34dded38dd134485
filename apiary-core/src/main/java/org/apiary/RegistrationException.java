package org.apiary;

import java.util.List;

/**
 * Functions were rejected before deployment. Each {@link #problems() problem} names the function, the statement
 * (where there is one) and the reason; nothing was deployed.
 */
public final class RegistrationException extends ApiaryException {
  private static final long serialVersionUID = 1L;
  private final List<String> problems;

  /** Creates the exception from a non-empty list of problems, one line each. */
  public RegistrationException(List<String> problems) {
    super(problems.size() == 1
        ? problems.get(0)
        : problems.size() + " problems:\n  " + String.join("\n  ", problems));
    this.problems = List.copyOf(problems);
  }

  /** One line per problem found, each naming the function and, where relevant, the statement. */
  public List<String> problems() {
    return problems;
  }
}

package org.apiary;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Who may invoke a graph, and for which data-use purposes: set on the graph with {@link Graph#withAccess} (or on one
 * of its functions with {@link Graph#withFunctionAccess}) and stored with it at registration, so every frontend
 * enforces it before anything of a call runs. Immutable.
 *
 * <pre>{@code
 * Graph.named("patientRecord")
 *     ...
 *     .withAccess(AccessPolicy.roles("nurse", "doctor").withPurposes("treatment", "billing"));
 * }</pre>
 *
 * <ul>
 *   <li><b>Roles.</b> A call is allowed if its caller's API key has one of {@link #roles()} (see
 *       {@code Credentials.create(db, identity, roles)}); the role {@value #ADMIN_ROLE} may call every graph for
 *       any purpose (or none). Empty: any caller, authenticated or not.</li>
 *   <li><b>Purposes.</b> A call states its purpose ({@code ClientConfig.withPurpose}); it is allowed if the purpose
 *       is one of {@link #purposes()}. Empty: any purpose, or none. The purpose of every call that runs is recorded
 *       with each of its function executions in provenance ({@code FunctionInvocations.purpose}).</li>
 * </ul>
 *
 * <p>A caller without credentials (a frontend that does not require them) has no roles: it may call only graphs
 * whose policy names no roles, and must still state an allowed purpose. A refused call runs nothing, fails with
 * {@link AccessDeniedException} naming what was missing, and is recorded in provenance ({@code DeniedCalls}).
 *
 * @param roles the roles that may invoke the graph, sorted, no duplicates; empty for any caller
 * @param purposes the purposes a call may state, sorted, no duplicates; empty for any purpose or none
 */
public record AccessPolicy(List<String> roles, List<String> purposes) {
  /** The role that may call every graph for any purpose. */
  public static final String ADMIN_ROLE = "admin";
  /** Any caller, any purpose or none: a graph's policy unless it sets one. */
  public static final AccessPolicy OPEN = new AccessPolicy(List.of(), List.of());

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");

  /**
   * Checks and normalizes the names (sorted, duplicates dropped).
   *
   * @throws IllegalArgumentException naming a role or purpose that is not 1 to 64 letters, digits, '_', '.', ':'
   *     or '-'
   */
  public AccessPolicy {
    roles = normalize(Objects.requireNonNull(roles, "roles"), "role");
    purposes = normalize(Objects.requireNonNull(purposes, "purposes"), "purpose");
  }

  /** Callers with one of these roles, for any purpose (or none). */
  public static AccessPolicy roles(String... roles) {
    return new AccessPolicy(Arrays.asList(roles), List.of());
  }

  /** Any caller, for one of these purposes. */
  public static AccessPolicy purposes(String... purposes) {
    return new AccessPolicy(List.of(), Arrays.asList(purposes));
  }

  /** This policy allowing only these purposes (replacing its purposes). */
  public AccessPolicy withPurposes(String... allowed) {
    return new AccessPolicy(roles, Arrays.asList(allowed));
  }

  /** Whether this policy allows every call. */
  public boolean allowsEveryCall() {
    return roles.isEmpty() && purposes.isEmpty();
  }

  /**
   * Why a call is refused, or {@code null} if it is allowed.
   *
   * @param subject what the policy guards, for the message: {@code graph 'g'} or {@code function 'f' of graph 'g'}
   * @param caller who calls, for the message ({@code null}: anonymous)
   * @param callerRoles the caller's roles (empty for an anonymous caller)
   * @param purpose the purpose the call states, or {@code null}
   */
  public String refusal(String subject, String caller, java.util.Set<String> callerRoles, String purpose) {
    if (callerRoles.contains(ADMIN_ROLE)) {
      return null;
    }
    String who = caller == null ? "an anonymous caller" : "caller '" + caller + "'";
    if (!roles.isEmpty() && roles.stream().noneMatch(callerRoles::contains)) {
      return subject + " may be called by the roles " + roles + "; " + who + " has "
          + (callerRoles.isEmpty() ? "no roles" : "the roles " + new TreeSet<>(callerRoles)) + "; nothing ran";
    }
    if (!purposes.isEmpty() && (purpose == null || !purposes.contains(purpose))) {
      return subject + " may be called for the purposes " + purposes + "; the call "
          + (purpose == null ? "states no purpose (ClientConfig.withPurpose)" : "states purpose '" + purpose + "'")
          + "; nothing ran";
    }
    return null;
  }

  /** Whether {@code name} is a valid role or purpose name. */
  public static boolean validName(String name) {
    return name != null && NAME.matcher(name).matches();
  }

  private static List<String> normalize(List<String> names, String what) {
    TreeSet<String> sorted = new TreeSet<>();
    for (String name : names) {
      if (!validName(name)) {
        throw new IllegalArgumentException("a " + what + " is 1 to 64 letters, digits, '_', '.', ':' or '-', not '"
            + name + "'");
      }
      sorted.add(name);
    }
    return List.copyOf(sorted);
  }
}

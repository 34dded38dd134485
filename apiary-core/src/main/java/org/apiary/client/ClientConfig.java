package org.apiary.client;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * How an {@link ApiaryClient} reaches Apiary: the frontends to talk to and how long and how often to try them.
 * Immutable; {@link #of} gives the defaults and the {@code with...} methods return changed copies.
 *
 * <pre>{@code
 * ClientConfig config = ClientConfig.of("tcp://10.0.0.1:5555", "tcp://10.0.0.2:5555")
 *     .withAttemptTimeout(Duration.ofSeconds(2))
 *     .withMaxAttempts(4);
 * }</pre>
 *
 * @param frontends the frontends' ZeroMQ endpoints, for example {@code "tcp://10.0.0.1:5555"}; at least one, no
 *     duplicates. Each new request goes to the next frontend in turn, and a retry goes to the one after that.
 * @param attemptTimeout how long to wait for one frontend's answer before sending the same request (same invocation
 *     ID) to the next frontend; between 1 ms and 1 hour, default {@value #DEFAULT_ATTEMPT_TIMEOUT_SECONDS} s. A
 *     call that gets no answer at all fails after about {@code maxAttempts * attemptTimeout}, so make it longer
 *     than your slowest graph.
 * @param maxAttempts how many times one request is sent before the call fails with
 *     {@link org.apiary.OutcomeUnknownException}; between 1 and {@value #MAX_ATTEMPTS_LIMIT}, default
 *     {@value #DEFAULT_MAX_ATTEMPTS}. It may exceed the number of frontends: the attempts then wrap around.
 * @param maxRequestBytes the largest encoded request the client sends; a larger one fails at once with
 *     {@link org.apiary.InvalidRequestException}. At least 1, default {@value #DEFAULT_MAX_REQUEST_BYTES} (512 KiB, a frontend's default limit).
 * @param caller who is calling (a user or service name, at most 128 characters), recorded with every function
 *     execution in provenance; {@code null} (the default) for anonymous. A frontend that requires credentials
 *     records the identity of the credential instead.
 * @param credential the API key sent with every request (see {@code org.apiary.frontend.Credentials}), or
 *     {@code null} (the default) for frontends that do not require one; never shown by {@link #toString()}
 * @param purpose the data-use purpose every call states unless it states its own
 *     ({@link InvocationRequest#withPurpose}); see {@link org.apiary.AccessPolicy}; {@code null} (the default) for none; a graph whose policy lists purposes refuses a call for another purpose or none, and the
 *     purpose of each call that runs is recorded with its function executions in provenance
 */
public record ClientConfig(List<String> frontends, Duration attemptTimeout, int maxAttempts, int maxRequestBytes,
                           String caller, String credential, String purpose) {
  /** The default {@link #attemptTimeout()}, in seconds. */
  public static final int DEFAULT_ATTEMPT_TIMEOUT_SECONDS = 10;
  /** The default {@link #maxAttempts()}. */
  public static final int DEFAULT_MAX_ATTEMPTS = 3;
  /** The largest {@link #maxAttempts()} accepted. */
  public static final int MAX_ATTEMPTS_LIMIT = 100;
  /** The default {@link #maxRequestBytes()}: 512 KiB, the same as a frontend's default limit. */
  public static final int DEFAULT_MAX_REQUEST_BYTES = 512 * 1024;

  private static final Duration MIN_ATTEMPT_TIMEOUT = Duration.ofMillis(1);
  private static final Duration MAX_ATTEMPT_TIMEOUT = Duration.ofHours(1);

  /** A configuration without a credential. */
  public ClientConfig(List<String> frontends, Duration attemptTimeout, int maxAttempts, int maxRequestBytes,
                      String caller) {
    this(frontends, attemptTimeout, maxAttempts, maxRequestBytes, caller, null, null);
  }

  /** A configuration that states no purpose. */
  public ClientConfig(List<String> frontends, Duration attemptTimeout, int maxAttempts, int maxRequestBytes,
                      String caller, String credential) {
    this(frontends, attemptTimeout, maxAttempts, maxRequestBytes, caller, credential, null);
  }

  /**
   * Checks every field.
   *
   * @throws IllegalArgumentException naming the field and the allowed range
   * @throws NullPointerException if {@code frontends}, one of them, or {@code attemptTimeout} is null
   */
  public ClientConfig {
    Objects.requireNonNull(frontends, "frontends");
    Objects.requireNonNull(attemptTimeout, "attemptTimeout");
    if (frontends.isEmpty()) {
      throw new IllegalArgumentException("an Apiary client needs at least one frontend endpoint");
    }
    Set<String> seen = new HashSet<>();
    for (String endpoint : frontends) {
      Objects.requireNonNull(endpoint, "frontend endpoint");
      if (endpoint.isBlank() || !endpoint.contains("://")) {
        throw new IllegalArgumentException("frontend endpoint '" + endpoint
            + "' is not a ZeroMQ endpoint such as tcp://host:port");
      }
      if (!seen.add(endpoint)) {
        throw new IllegalArgumentException("frontend endpoint '" + endpoint + "' is listed twice");
      }
    }
    frontends = List.copyOf(frontends);
    if (attemptTimeout.compareTo(MIN_ATTEMPT_TIMEOUT) < 0 || attemptTimeout.compareTo(MAX_ATTEMPT_TIMEOUT) > 0) {
      throw new IllegalArgumentException("attemptTimeout must be between 1 ms and 1 hour, not " + attemptTimeout);
    }
    if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT) {
      throw new IllegalArgumentException("maxAttempts must be between 1 and " + MAX_ATTEMPTS_LIMIT + ", not "
          + maxAttempts);
    }
    int maxCaller = org.apiary.internal.wire.WireRequest.MAX_CALLER_LENGTH;
    if (caller != null && (caller.isBlank() || caller.length() > maxCaller)) {
      throw new IllegalArgumentException("caller must be 1 to " + maxCaller + " characters, not '" + caller + "'");
    }
    if (maxRequestBytes < 1) {
      throw new IllegalArgumentException("maxRequestBytes must be positive, not " + maxRequestBytes);
    }
    if (credential != null && credential.isBlank()) {
      throw new IllegalArgumentException("credential must not be blank; leave it null to send none");
    }
    if (purpose != null && !org.apiary.AccessPolicy.validName(purpose)) {
      throw new IllegalArgumentException("a purpose is 1 to 64 letters, digits, '_', '.', ':' or '-', not '"
          + purpose + "'");
    }
  }

  /** The given frontends with every other setting at its default. */
  public static ClientConfig of(String... frontends) {
    Objects.requireNonNull(frontends, "frontends");
    return new ClientConfig(Arrays.asList(frontends), Duration.ofSeconds(DEFAULT_ATTEMPT_TIMEOUT_SECONDS),
        DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_REQUEST_BYTES, null);
  }

  /** A copy with another {@link #attemptTimeout()}. */
  public ClientConfig withAttemptTimeout(Duration timeout) {
    return new ClientConfig(frontends, timeout, maxAttempts, maxRequestBytes, caller, credential, purpose);
  }

  /** A copy with another {@link #maxAttempts()}. */
  public ClientConfig withMaxAttempts(int attempts) {
    return new ClientConfig(frontends, attemptTimeout, attempts, maxRequestBytes, caller, credential, purpose);
  }

  /** A copy with another {@link #maxRequestBytes()}. */
  public ClientConfig withMaxRequestBytes(int bytes) {
    return new ClientConfig(frontends, attemptTimeout, maxAttempts, bytes, caller, credential, purpose);
  }

  /** A copy that names who is calling (recorded in provenance). */
  public ClientConfig withCaller(String name) {
    return new ClientConfig(frontends, attemptTimeout, maxAttempts, maxRequestBytes, name, credential, purpose);
  }

  /** A copy that sends this API key with every request (frontends that require credentials refuse calls without). */
  public ClientConfig withCredential(String apiKey) {
    return new ClientConfig(frontends, attemptTimeout, maxAttempts, maxRequestBytes, caller, apiKey, purpose);
  }

  /**
   * A copy whose calls state this data-use purpose (a graph's {@link org.apiary.AccessPolicy} may require one of its
   * purposes; the purpose is recorded in provenance); {@code null} for none. A call can state another with
   * {@link InvocationRequest#withPurpose}.
   */
  public ClientConfig withPurpose(String dataUsePurpose) {
    return new ClientConfig(frontends, attemptTimeout, maxAttempts, maxRequestBytes, caller, credential,
        dataUsePurpose);
  }

  /** Every field but the credential, which shows only whether there is one. */
  @Override
  public String toString() {
    return "ClientConfig[frontends=" + frontends + ", attemptTimeout=" + attemptTimeout + ", maxAttempts="
        + maxAttempts + ", maxRequestBytes=" + maxRequestBytes + ", caller=" + caller + ", credential="
        + (credential == null ? "none" : "(set)") + ", purpose=" + purpose + "]";
  }

  /** How long one call may take before it has used all its attempts: {@code maxAttempts * attemptTimeout}. */
  Duration callBudget() {
    return attemptTimeout.multipliedBy(maxAttempts);
  }
}

package org.apiary.frontend;

import java.util.Map;

/**
 * The state of a frontend's wire ({@link FrontendServer#wireStats()}).
 *
 * @param connections connections open now
 * @param unfinishedBytes bytes held now in messages not finished yet (and frames being received)
 * @param refusals connections refused or closed since the frontend started, by reason, every reason present:
 *     {@value #CONNECTIONS} and {@value #CONNECTIONS_PER_ADDRESS} (a connection limit), {@value #UNFINISHED_BYTES}
 *     and {@value #UNFINISHED_BYTES_TOTAL} (an unfinished message over its bound), {@value #MESSAGE_DEADLINE},
 *     {@value #STALLED_FRAME}, {@value #IDLE}, {@value #COMMAND_TOO_LARGE} and {@value #HANDSHAKE} (a handshake not finished within the
 *     timeout)
 */
public record WireStats(int connections, long unfinishedBytes, Map<String, Long> refusals) {
  public static final String CONNECTIONS = "connections";
  public static final String CONNECTIONS_PER_ADDRESS = "connections_per_address";
  public static final String UNFINISHED_BYTES = "unfinished_bytes";
  public static final String UNFINISHED_BYTES_TOTAL = "unfinished_bytes_total";
  public static final String MESSAGE_DEADLINE = "message_deadline";
  public static final String STALLED_FRAME = "stalled_frame";
  public static final String IDLE = "idle";
  public static final String COMMAND_TOO_LARGE = "command_too_large";
  public static final String HANDSHAKE = "handshake";

  public WireStats {
    refusals = Map.copyOf(refusals);
  }

  /** How many connections were refused or closed for {@code reason} (one of this class's constants). */
  public long refused(String reason) {
    Long n = refusals.get(reason);
    if (n == null) {
      throw new IllegalArgumentException("no wire refusal is called '" + reason + "'; they are " + refusals.keySet());
    }
    return n;
  }
}

package org.apiary.runtime.procedure;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * What retention's steps that frontends may call ({@link FencedSweep}, {@link FencedExpireInvocations}) delete up to:
 * the earlier of the cutoff they are given and retention's fence ({@code APIARY_RETENTION}, which only
 * {@link AdvanceRetentionByClock} moves for frontends, by the database's clock), and nothing while there is no fence.
 * So whoever may call them (the frontends' database user) cannot delete the record of an execution that could still
 * run again, whatever cutoff it gives.
 */
public final class RetentionFence {
  /** The read each such step runs first. */
  public static final String SQL = "SELECT cutoff FROM APIARY_RETENTION WHERE id = 0;";

  private RetentionFence() {}

  /**
   * The cutoff a step applies, given what {@link #SQL} read: the earlier of {@code cutoff} and the fence, or
   * {@code null} (delete nothing) if there is no fence.
   */
  public static TimestampType applied(VoltTable fence, TimestampType cutoff) {
    fence.resetRowPosition();
    if (!fence.advanceRow()) {
      return null;
    }
    return fence.getTimestampAsLong(0) < cutoff.getTime() ? fence.getTimestampAsTimestamp(0) : cutoff;
  }
}

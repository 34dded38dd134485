package org.apiary.runtime.provenance;

import java.util.Map;
import java.util.TreeMap;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/**
 * The captured writes VoltDB's export streams hold that provenance's loader has not acknowledged yet, as
 * {@code @Statistics EXPORT} reports them: what can be read of the provenance backlog from outside the server
 * processes (the rows waiting in a server's spooler are known only inside it, {@link ServerProvenance#spooler()}).
 */
public final class ExportBacklog {
  private ExportBacklog() {}

  /** Tuples pending per export stream (source table); empty if the database exports nothing. */
  public static Map<String, Long> bySource(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading export statistics", "@Statistics", "EXPORT", 0).getResults()[0];
    Map<String, Long> pending = new TreeMap<>();
    while (t.advanceRow()) {
      if (!"TRUE".equalsIgnoreCase(t.getString("ACTIVE"))) {
        continue; // a replica's copy, counted by the partition's active one
      }
      pending.merge(t.getString("SOURCE"), t.getLong("TUPLE_PENDING"), Long::sum);
    }
    return pending;
  }
}

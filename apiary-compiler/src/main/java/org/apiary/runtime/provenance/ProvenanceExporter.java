package org.apiary.runtime.provenance;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceTable;
import org.voltdb.export.AdvertisedDataSource;
import org.voltdb.exportclient.ExportClientBase;
import org.voltdb.exportclient.ExportDecoderBase;
import org.voltdb.exportclient.ExportRow;
import org.voltdb.types.TimestampType;

/**
 * VoltDB's export connector for Apiary's provenance target: receives the change data capture of every application
 * table (a row per insert, delete and update, written by committed transactions only) and loads it into the
 * table's events table. A block is acknowledged only once loaded; if the analytical database is unreachable the
 * block is handed back to VoltDB, which keeps it (on disk if need be) and offers it again: nothing is lost, and
 * nothing is loaded twice. A decoder reads one table's stream on one partition, in order, and blocks are acknowledged
 * in order once loaded, so what the sink holds of a stream is a prefix of it: a decoder's blocks are loaded skipping
 * present keys (exec_id, partition_id, event_type, event_seq) from its start (after a restart VoltDB offers again
 * every block it had not seen acknowledged) and after any failed load, until a load adds rows; from then on the rows
 * are past that prefix, and blocks are appended without looking for their keys.
 */
public final class ProvenanceExporter extends ExportClientBase {
  private static final String CHECK_ONLY = "__voltdb_config_check_only__";

  private ServerProvenance provenance;

  @Override
  public void configure(Properties config) throws Exception {
    ServerProvenance.Settings settings = ServerProvenance.Settings.from(config);
    if (!config.containsKey(CHECK_ONLY)) {
      provenance = ServerProvenance.start(settings);
    }
  }

  @Override
  public ExportDecoderBase constructExportDecoder(AdvertisedDataSource source) {
    return new EventDecoder(source);
  }

  @Override
  public void shutdown() {
    // The server's capture outlives a connector instance: VoltDB re-creates connectors on every catalog change.
  }

  private final class EventDecoder extends ExportDecoderBase {
    private final List<ProvenanceRow> block = new ArrayList<>();
    private ProvenanceTable table;
    /** Whether the next block's rows may be in the sink already (see the class comment). */
    private boolean mayBeInSink = true;

    EventDecoder(AdvertisedDataSource source) {
      super(source);
    }

    @Override
    public boolean processRow(ExportRow row) throws RestartBlockException {
      String type = switch (row.getOperation()) {
        case INSERT -> ProvenanceSchema.INSERT;
        case DELETE -> ProvenanceSchema.DELETE;
        case UPDATE_NEW -> ProvenanceSchema.UPDATE;
        default -> null; // the old image of an update, or a migration: not an event of its own
      };
      if (type == null) {
        return true;
      }
      if (table == null) {
        table = provenance.eventsTable(row.tableName).orElseThrow(() -> new RestartBlockException(
            "no table " + row.tableName + " in the catalog for its provenance events", true));
      }
      Object[] v = row.values;
      int first = ExportRow.INTERNAL_FIELD_COUNT;
      // The transaction ID export carries is the partition's position of the writing transaction (for a
      // multi-partition one, of its part on this partition); the sequence number counts this table's exported rows
      // on this partition.
      ExecutionIds.ExecutionId id = ExecutionIds.ofExportedWrite(((Number) v[0]).longValue(),
          ((Number) v[3]).intValue());
      List<Object> values = new ArrayList<>(ProvenanceSchema.EVENT_COLUMNS.size() + v.length - first);
      values.add(Instant.ofEpochSecond(0, ((Number) v[1]).longValue() * 1_000L)); // export timestamp, microseconds
      values.add(id.execId());
      values.add(id.txId());
      values.add(id.execSeq());
      values.add(id.partitionId());
      values.add(type);
      values.add(((Number) v[2]).longValue()); // export sequence number
      for (int i = first; i < v.length; i++) {
        values.add(v[i] instanceof TimestampType t ? CapturedValues.instant(t) : v[i]);
      }
      block.add(new ProvenanceRow(table.name(), values));
      return true;
    }

    @Override
    public void onBlockCompletion(ExportRow row) throws RestartBlockException {
      if (block.isEmpty()) {
        return;
      }
      Exception loadFailure = null;
      if (!provenance.writesGoThroughSpool()) {
        try {
          if (provenance.loadNow(table, block, mayBeInSink) > 0) {
            mayBeInSink = false;
          }
          block.clear();
          return;
        } catch (Exception e) {
          mayBeInSink = true;
          if (!provenance.keepsRefusedWrites()) {
            block.clear(); // VoltDB offers the whole block again (on a k-safe cluster, a replica does if this dies)
            throw new RestartBlockException("loading provenance events of " + table.name() + " failed: "
                + e.getMessage(), e, true);
          }
          loadFailure = e;
          provenance.directLoadFailed();
        }
      }
      // A server that holds the only copy must not leave the block to VoltDB: a restart that restores a snapshot
      // marks every exported row the snapshot covers as acknowledged and deletes it unseen. The spooler keeps it on
      // disk (forced) and loads it, skipping keys already present, once the sink takes rows again.
      try {
        provenance.keepWrites(block);
      } catch (RuntimeException e) {
        if (loadFailure != null) {
          e.addSuppressed(loadFailure);
        }
        throw new RestartBlockException("keeping provenance events of " + table.name() + " for loading later failed "
            + (loadFailure == null ? "" : "(loading them failed: " + loadFailure.getMessage() + ") ") + ": "
            + e.getMessage(), e, true);
      } finally {
        block.clear(); // VoltDB offers the whole block again if it was not kept
      }
    }

    @Override
    public void sourceNoLongerAdvertised(AdvertisedDataSource source) {}
  }
}

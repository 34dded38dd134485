package org.apiary;

/**
 * How much data provenance a statement captures (paper section 6.1). Chosen per {@code queueSQL} call.
 */
public enum ProvenanceLevel {
  /** Capture nothing for this statement. */
  NONE,
  /** Capture the rows the statement inserts, updates or deletes. */
  WRITES,
  /** Capture written rows and the primary keys of the rows the statement returns. */
  READS_AND_WRITES
}

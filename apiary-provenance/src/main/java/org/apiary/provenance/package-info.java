/**
 * Provenance in the analytical database. API: {@link org.apiary.provenance.ProvenanceQueries} (lineage and audit
 * queries) and the description of an events table it takes ({@link org.apiary.provenance.ProvenanceTable},
 * {@link org.apiary.provenance.ProvenanceColumn}, {@link org.apiary.provenance.ColumnType}). The sinks, the spooler
 * and the spill files are runtime that the VoltDB server uses; they change without notice.
 */
package org.apiary.provenance;

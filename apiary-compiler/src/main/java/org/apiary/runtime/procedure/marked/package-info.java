/**
 * Apiary's multi-partition procedures as a journaled cluster runs them: each class has the name of the procedure it
 * replaces (so callers call the same name) and adds the statement that marks its place in every partition's journal
 * ({@link org.apiary.runtime.procedure.MarksPartitions}). {@code ClusterJournal} creates them in place of the
 * originals, with the journal's table and functions, in a journaled cluster only. Public because VoltDB loads them
 * with its own class loader; not an API.
 */
package org.apiary.runtime.procedure.marked;

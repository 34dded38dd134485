/**
 * Apiary's write-ahead journal of committed write transactions. {@link org.apiary.journal.JournalMode} is API: the
 * mode a {@code DatabaseConfig} takes. The rest (the file format, the writer, the reader) is runtime that the database
 * server and recovery share, and changes without notice; the file format itself is documented and versioned
 * (docs/journal-format.md).
 */
package org.apiary.journal;

/**
 * The application the provenance drill runs (planned single- and multi-partition reads and writes, some aborting).
 * Not an API: it changes without notice.
 */
package org.apiary.drills.provenance;

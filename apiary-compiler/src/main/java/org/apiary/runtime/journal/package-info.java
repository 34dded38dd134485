/**
 * The journal as the database server in this process sees it: the writer its procedures append to, the records
 * recovery expects them to replay, and the gate that holds replies until what they report is durable. Not an API:
 * it changes without notice.
 */
package org.apiary.runtime.journal;

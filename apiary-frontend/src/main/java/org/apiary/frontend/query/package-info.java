/**
 * The one query layer over what ran (issue 43): executions from the invocation log ({@code APIARY_INVOCATIONS}) with
 * their function executions from the provenance sink, graphs with their versions, frontends with their leases, and
 * the cluster's overview. {@code apiary executions}, {@code apiary status} and the console read through it, so they
 * never disagree. Not an API: it changes without notice.
 */
package org.apiary.frontend.query;

/**
 * The console's server (issue 43): {@link org.apiary.console.ConsoleServer} answers a read-only JSON API under
 * {@code /api/} over executions, graphs and the cluster, through apiary-frontend's query layer. Not an API: it
 * changes without notice; its HTTP API is documented in the operations guide.
 */
package org.apiary.console;

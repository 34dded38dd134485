/**
 * The runtime between callers and the generated procedures: the function catalog, direct calls, the system tables
 * and their migrations. Not an API: applications call graphs through {@code org.apiary.server.Apiary} or
 * {@code org.apiary.client.ApiaryClient}; these classes are public only because Apiary's other modules share them,
 * and they change without notice.
 */
package org.apiary.runtime;

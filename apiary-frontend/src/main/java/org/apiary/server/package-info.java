/**
 * The front door: {@link org.apiary.server.Apiary} opens Apiary (embedded or against a cluster), deploys an
 * application, runs a frontend, and hands out a client and provenance queries.
 */
package org.apiary.server;

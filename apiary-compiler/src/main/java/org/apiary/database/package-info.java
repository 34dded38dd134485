/**
 * The database Apiary runs in. The configuration records are API: {@link org.apiary.database.DatabaseConfig}
 * (embedded, durable or external), {@link org.apiary.database.ProvenanceConfig},
 * {@link org.apiary.database.DatabaseLogin} and {@link org.apiary.database.DatabaseUsers}, which
 * {@code org.apiary.server.Apiary} takes, and {@link org.apiary.database.ClusterConfig} with
 * {@link org.apiary.database.LocalCluster} for VoltDB server processes on one machine. The rest
 * ({@code ApiaryDatabase}, deployments, snapshots) is runtime that Apiary's modules share and may change without
 * notice. Modules above this layer (the command line, the console, the drills) read rows through
 * {@code ApiaryDatabase.query} and {@link org.apiary.database.Rows}, never through VoltDB's types.
 */
package org.apiary.database;

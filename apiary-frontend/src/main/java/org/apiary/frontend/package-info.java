/**
 * The frontend: a stateless server that runs graphs on the database with exactly-once execution. API:
 * {@link org.apiary.frontend.FrontendServer} and {@link org.apiary.frontend.FrontendConfig} for a frontend run apart
 * from {@code org.apiary.server.Apiary}, {@link org.apiary.frontend.Registrar} (what {@code Apiary#deploy} and
 * {@code apiary deploy} use) with the {@link org.apiary.frontend.RegisteredGraph} it reports, and
 * {@link org.apiary.frontend.Credentials} for API keys. The other public classes (dispatch, the invocation log, the
 * graph catalog, fault injection, frontend processes for drills) are runtime shared with the command line and the
 * benchmarks; they change without notice.
 */
package org.apiary.frontend;

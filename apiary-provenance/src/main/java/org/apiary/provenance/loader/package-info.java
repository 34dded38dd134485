/**
 * The provenance loader run apart from the database servers ({@code apiary loader}): its server
 * ({@link org.apiary.provenance.loader.LoaderServer}), the client a database server's spooler loads through
 * ({@link org.apiary.provenance.loader.LoaderClient}) and their frame protocol. Not an API: it changes without notice.
 */
package org.apiary.provenance.loader;

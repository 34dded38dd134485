/**
 * The server side of provenance capture: execution identities, captured values and the export to the sink. Runs
 * inside the VoltDB server; not an API.
 */
package org.apiary.runtime.provenance;

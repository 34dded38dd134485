/**
 * Provenance capture and query (paper section 6). Not implemented yet: see issue 4.
 */
package org.apiary.provenance;

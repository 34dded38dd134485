/**
 * What runs inside VoltDB: the base class of every generated procedure and Apiary's own system procedures. Public
 * because VoltDB loads them with its own class loader; not an API.
 */
package org.apiary.runtime.procedure;

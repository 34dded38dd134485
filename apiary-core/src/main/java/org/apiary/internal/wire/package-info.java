/**
 * The wire protocol between clients and frontends (one request or reply per ZeroMQ frame) and the socket loop both
 * ends share. Not an API: it changes without notice.
 */
package org.apiary.internal.wire;

/**
 * A small read-only HTTP server on the JDK's {@code com.sun.net.httpserver} (issue 43): GET routes answered on a
 * bounded pool of its own, never on a frontend's threads. Shared by a frontend's {@code /metrics}, {@code /health}
 * and {@code /ready} and, later, the console. Not an API: it changes without notice.
 */
package org.apiary.internal.http;

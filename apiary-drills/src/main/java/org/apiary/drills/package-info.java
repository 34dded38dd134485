/**
 * Apiary's fault drills ({@code apiary drill ...}) and their harness: frontends as processes with faults injected,
 * signals, a sink proxy that cuts connections, and the checkers that compare what clients were told with what the
 * database and the provenance sink hold. Added to the command line as {@link org.apiary.cli.ExtensionCommand}s. Not
 * an API: it changes without notice.
 */
package org.apiary.drills;

/**
 * The {@code apiary} command line (picocli): the service, deployment, invocation, provenance and credential commands
 * and the demo. Not an API: use the commands, not these classes, which change without notice. Other modules add
 * commands through {@link org.apiary.cli.ExtensionCommand}.
 */
package org.apiary.cli;

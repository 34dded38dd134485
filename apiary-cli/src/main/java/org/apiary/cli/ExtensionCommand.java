package org.apiary.cli;

/**
 * A command another module adds to {@code apiary}: a public picocli {@code @Command} class with a public no-argument
 * constructor, named in that module's {@code META-INF/services/org.apiary.cli.ExtensionCommand}. {@link Main} adds
 * every one it finds on the class path with {@link java.util.ServiceLoader}, so the command line names none of them:
 * the drills (apiary-drills) come in this way, and a class path without them has no {@code drill} command.
 */
public interface ExtensionCommand {}

/**
 * The {@code apiary} command line (picocli) and the drills behind {@code apiary drill}. Not an API: use the commands,
 * not these classes, which change without notice.
 */
package org.apiary.cli;

package org.apiary.database;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Files and directories that hold secrets (passwords, API keys) or data (snapshots, provenance, spill files): their
 * owner alone may read them. Runtime shared with the command line, not API.
 *
 * <p>A data directory is made {@code rwx------} before VoltDB writes into it, which is what keeps VoltDB's own files
 * from other users: VoltDB creates them with the process's umask (0644 files, 0755 directories under the usual 022),
 * and the embedded server runs inside this JVM, which cannot change its own umask. {@link #restrictTree} then also
 * narrows what is already there, so a directory first used by an older version, or moved, is fixed on its next start.
 */
public final class OwnerOnlyFile {
  private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");

  private OwnerOnlyFile() {}

  /** Replaces {@code file} by one holding {@code content}, created as {@link #create} does. */
  public static void write(Path file, String content) throws IOException {
    create(file);
    Files.writeString(file, content);
  }

  /**
   * Replaces {@code file} by one holding {@code content} atomically where the file system can (a reader sees the old
   * file or the new one, never a part), owner-only: written to a temporary file beside it, then moved over it. For
   * reports another process reads while they are rewritten.
   */
  public static void replaceAtomically(Path file, byte[] content) throws IOException {
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    create(temp);
    Files.write(temp, content);
    try {
      Files.move(temp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (java.nio.file.AtomicMoveNotSupportedException e) {
      Files.move(temp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** Deletes {@code file} if it exists and creates it empty, mode {@code rw-------} where the file system has modes. */
  public static void create(Path file) throws IOException {
    Files.deleteIfExists(file);
    if (posix()) {
      Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE));
    } else {
      Files.createFile(file);
    }
  }

  /**
   * Creates {@code dir} (and missing parents) if needed and makes {@code dir} itself {@code rwx------}, whether it
   * was there or not; its parents keep their modes.
   */
  public static Path createDirectory(Path dir) throws IOException {
    Files.createDirectories(dir);
    if (posix()) {
      Files.setPosixFilePermissions(dir, DIRECTORY);
    }
    return dir;
  }

  /**
   * Makes {@code root} and every directory under it {@code rwx------} and every file {@code rw-------} (symbolic
   * links are not followed). A file deleted meanwhile (VoltDB rotates snapshots) is skipped.
   *
   * @throws UncheckedIOException if a mode cannot be changed (a file of another owner)
   */
  public static void restrictTree(Path root) {
    if (!posix() || !Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    for (int attempt = 1; ; attempt++) {
      try (Stream<Path> paths = Files.walk(root)) {
        paths.forEach(OwnerOnlyFile::restrict);
        return;
      } catch (IOException e) {
        throw new UncheckedIOException("cannot walk " + root + " to make it readable by its owner only: "
            + e.getMessage(), e);
      } catch (UncheckedIOException e) {
        // A directory deleted under the walk (VoltDB rotates snapshots) ends it: walk again, a few times.
        if (!(e.getCause() instanceof java.nio.file.NoSuchFileException) || attempt == 3) {
          throw e;
        }
      }
    }
  }

  private static void restrict(Path p) {
    try {
      if (!Files.isSymbolicLink(p)) {
        Files.setPosixFilePermissions(p, Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? DIRECTORY : FILE);
      }
    } catch (java.nio.file.NoSuchFileException gone) {
      // deleted since the walk listed it
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make " + p + " readable by its owner only: " + e.getMessage(), e);
    }
  }

  private static boolean posix() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  }
}

package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Files that hold secrets (passwords, API keys): replaced by a new file its owner alone may read and write. Runtime
 * shared with the command line, not API.
 */
public final class OwnerOnlyFile {
  private OwnerOnlyFile() {}

  /** Replaces {@code file} by one holding {@code content}, created as {@link #create} does. */
  public static void write(Path file, String content) throws IOException {
    create(file);
    Files.writeString(file, content);
  }

  /** Deletes {@code file} if it exists and creates it empty, mode {@code rw-------} where the file system has modes. */
  public static void create(Path file) throws IOException {
    Files.deleteIfExists(file);
    try {
      Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) { // not a POSIX file system
      Files.createFile(file);
    }
  }
}

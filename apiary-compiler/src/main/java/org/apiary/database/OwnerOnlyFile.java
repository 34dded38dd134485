package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Files that hold secrets (passwords): replaced by a new empty file its owner alone may read and write. */
final class OwnerOnlyFile {
  private OwnerOnlyFile() {}

  /** Deletes {@code file} if it exists and creates it empty, mode {@code rw-------} where the file system has modes. */
  static void create(Path file) throws IOException {
    Files.deleteIfExists(file);
    try {
      Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) { // not a POSIX file system
      Files.createFile(file);
    }
  }
}

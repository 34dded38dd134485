package org.apiary.compiler;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Packages what VoltDB must load: the generated procedures, and every class of each function's package (the
 * function, its nested classes and the values it passes), taken from wherever the class was loaded.
 * Apiary's own runtime and Jackson are expected on the server's classpath.
 */
final class ProcedureJar {
  private final Map<String, byte[]> entries = new TreeMap<>();

  /** Adds a class by binary name. */
  void addClass(String binaryName, byte[] bytes) {
    entries.put(binaryName.replace('.', '/') + ".class", bytes);
  }

  /**
   * Adds every class file in the package of {@code c}, from the directory or jar that holds {@code c}, except
   * external steps ({@link org.apiary.ExternalFunction}) and their nested classes: they run in frontends, and the
   * database, which verifies every class it is given, need not be able to load what they use (an HTTP client, say).
   */
  void addPackageOf(Class<?> c) {
    Map<String, byte[]> found = new TreeMap<>();
    read(c, found);
    java.util.List<String> steps = new java.util.ArrayList<>();
    for (String entry : found.keySet()) {
      String binary = entry.substring(0, entry.length() - ".class".length()).replace('/', '.');
      try {
        if (org.apiary.ExternalFunction.class.isAssignableFrom(Class.forName(binary, false, c.getClassLoader()))) {
          steps.add(entry.substring(0, entry.length() - ".class".length()));
        }
      } catch (ClassNotFoundException | LinkageError e) {
        // Not loadable here: not a step this application uses; VoltDB judges it as it would any class.
      }
    }
    found.forEach((entry, bytes) -> {
      for (String step : steps) {
        if (entry.equals(step + ".class") || entry.startsWith(step + "$")) {
          return;
        }
      }
      entries.put(entry, bytes);
    });
  }

  private static void read(Class<?> c, Map<String, byte[]> entries) {
    File location = InMemoryJavaCompiler.codeLocation(c)
        .orElseThrow(() -> new IllegalArgumentException("cannot find where class " + c.getName() + " was loaded from"));
    String dir = c.getPackageName().replace('.', '/');
    try {
      if (location.isDirectory()) {
        Path pkg = location.toPath().resolve(dir);
        try (Stream<Path> files = Files.list(pkg)) {
          for (Path p : (Iterable<Path>) files::iterator) {
            if (p.toString().endsWith(".class")) {
              entries.put(dir + "/" + p.getFileName(), Files.readAllBytes(p));
            }
          }
        }
      } else {
        try (JarFile jar = new JarFile(location)) {
          for (JarEntry e : (Iterable<JarEntry>) jar.stream()::iterator) {
            String name = e.getName();
            if (name.endsWith(".class") && name.startsWith(dir + "/") && name.indexOf('/', dir.length() + 1) < 0) {
              try (InputStream in = jar.getInputStream(e)) {
                entries.put(name, in.readAllBytes());
              }
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classes of package " + c.getPackageName() + " from " + location, e);
    }
  }

  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (JarOutputStream jar = new JarOutputStream(bytes)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        JarEntry entry = new JarEntry(e.getKey());
        entry.setTime(0); // identical inputs give an identical jar
        jar.putNextEntry(entry);
        jar.write(e.getValue());
        jar.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the procedure jar", e);
    }
    return bytes.toByteArray();
  }
}

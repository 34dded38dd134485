package org.apiary.compiler;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/** Compiles generated Java sources to class files in memory with the JDK's own compiler. */
final class InMemoryJavaCompiler {
  private InMemoryJavaCompiler() {}

  /**
   * @param sources class name to source text
   * @param classpathAnchors classes whose locations must be on the compile classpath
   * @return class name (binary, with $ for nested) to class bytes
   */
  static Map<String, byte[]> compile(Map<String, String> sources, List<Class<?>> classpathAnchors) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) {
      throw new IllegalStateException("no Java compiler in this runtime: Apiary needs a JDK (17+), not a JRE");
    }
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    StandardJavaFileManager standard = javac.getStandardFileManager(diagnostics, null, null);
    Map<String, ByteArrayOutputStream> out = new LinkedHashMap<>();
    JavaFileManager manager = new ForwardingJavaFileManager<>(standard) {
      @Override
      public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
                                                 FileObject sibling) {
        return new SimpleJavaFileObject(URI.create("mem:///" + className.replace('.', '/') + kind.extension), kind) {
          @Override
          public OutputStream openOutputStream() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            out.put(className, bytes);
            return bytes;
          }
        };
      }
    };
    List<JavaFileObject> units = new ArrayList<>();
    sources.forEach((name, text) -> units.add(
        new SimpleJavaFileObject(URI.create("mem:///" + name.replace('.', '/') + ".java"), JavaFileObject.Kind.SOURCE) {
          @Override
          public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
          }
        }));
    List<String> options = List.of("-classpath", classpath(classpathAnchors), "-proc:none", "-g",
        "-Xlint:-options", "--release", "17");
    StringWriter log = new StringWriter();
    boolean ok = javac.getTask(log, manager, diagnostics, options, null, units).call();
    try {
      manager.close();
    } catch (IOException e) {
      throw new IllegalStateException("closing the in-memory file manager failed", e);
    }
    if (!ok) {
      StringBuilder msg = new StringBuilder("the generated procedures did not compile (an Apiary bug, please report):");
      diagnostics.getDiagnostics().forEach(d -> msg.append("\n  ").append(d));
      msg.append(log);
      throw new IllegalStateException(msg.toString());
    }
    Map<String, byte[]> classes = new LinkedHashMap<>();
    out.forEach((name, bytes) -> classes.put(name, bytes.toByteArray()));
    return classes;
  }

  private static String classpath(List<Class<?>> anchors) {
    Set<String> entries = new LinkedHashSet<>();
    for (Class<?> c : anchors) {
      codeLocation(c).ifPresent(f -> entries.add(f.getAbsolutePath()));
    }
    for (String e : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
      if (!e.isBlank()) {
        entries.add(e);
      }
    }
    return String.join(File.pathSeparator, entries);
  }

  static java.util.Optional<File> codeLocation(Class<?> c) {
    var source = c.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return java.util.Optional.empty();
    }
    try {
      return java.util.Optional.of(new File(source.getLocation().toURI()));
    } catch (URISyntaxException | IllegalArgumentException e) {
      return java.util.Optional.empty();
    }
  }
}

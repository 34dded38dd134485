package org.apiary.cli;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.apiary.Application;

/**
 * An application jar: the classes of a user's application, and in its manifest the attribute
 * {@value #ATTRIBUTE}{@code : com.example.ShopApp} naming the class that declares the {@link Application} (its schema
 * and graphs) through one public static member: a method without parameters returning {@code Application}, or a
 * field of type {@code Application}. The jar's classes are loaded by a class loader of their own whose parent holds
 * Apiary, so the jar needs (and should contain) none of Apiary's classes.
 */
final class ApplicationJar implements AutoCloseable {
  /** The manifest attribute naming the declaring class. */
  static final String ATTRIBUTE = "Apiary-Application";

  private final Path path;
  private final URLClassLoader loader;
  private final String declaringClass;
  private final String member;
  private final Application application;

  private ApplicationJar(Path path, URLClassLoader loader, String declaringClass, String member,
                         Application application) {
    this.path = path;
    this.loader = loader;
    this.declaringClass = declaringClass;
    this.member = member;
    this.application = application;
  }

  /**
   * Loads the jar and the application it declares.
   *
   * @throws CliException saying what is wrong with the jar and how to fix it
   */
  static ApplicationJar open(Path path) {
    Path jar = path.toAbsolutePath().normalize();
    if (!Files.isRegularFile(jar)) {
      throw new CliException(jar + " does not exist or is not a file: give the path of an application jar");
    }
    String className = declaredClass(jar);
    URLClassLoader loader;
    try {
      loader = new URLClassLoader("apiary-application", new URL[] {jar.toUri().toURL()},
          ApplicationJar.class.getClassLoader());
    } catch (MalformedURLException e) {
      throw new CliException("cannot make a URL of " + jar + ": " + e.getMessage(), e);
    }
    try {
      Class<?> declaring;
      try {
        declaring = Class.forName(className, true, loader);
      } catch (ClassNotFoundException e) {
        throw new CliException(jar + " names " + className + " in its manifest (" + ATTRIBUTE + "), but neither the "
            + "jar nor Apiary's classpath has that class: check the name (fully qualified, with its package)");
      } catch (LinkageError e) {
        throw new CliException("loading " + className + " from " + jar + " failed: " + e
            + " (does the jar need a library that is not on Apiary's classpath? Put it into the jar)", e);
      }
      List<Member> members = applicationMembers(declaring);
      if (members.isEmpty()) {
        throw new CliException(className + " (named by " + ATTRIBUTE + " in " + jar + ") has no public static method "
            + "without parameters returning org.apiary.Application and no public static field of that type: add one, "
            + "for example `public static Application application() { return Application.of(SCHEMA, graphs...); }`");
      }
      if (members.size() > 1) {
        throw new CliException(className + " declares several applications (" + String.join(", ",
            members.stream().map(ApplicationJar::describe).toList()) + "): keep one public static member of type "
            + "Application, or name another class in " + ATTRIBUTE);
      }
      Member m = members.get(0);
      Application app = read(m);
      if (app == null) {
        throw new CliException(className + "." + describe(m) + " is null: it must give the application");
      }
      return new ApplicationJar(jar, loader, className, describe(m), app);
    } catch (RuntimeException e) {
      closeQuietly(loader);
      throw e;
    }
  }

  private static String declaredClass(Path jar) {
    try (JarFile file = new JarFile(jar.toFile())) {
      Manifest manifest = file.getManifest();
      String name = manifest == null ? null : manifest.getMainAttributes().getValue(ATTRIBUTE);
      if (name == null || name.isBlank()) {
        throw new CliException(jar + " declares no application: its manifest (META-INF/MANIFEST.MF) needs the "
            + "attribute `" + ATTRIBUTE + ": <fully qualified class>` naming the class with the application's public "
            + "static Application method or field (with Maven: an <" + ATTRIBUTE + "> entry in maven-jar-plugin's "
            + "<archive><manifestEntries>)");
      }
      return name.strip();
    } catch (IOException e) {
      throw new CliException(jar + " is not a readable jar: " + e.getMessage(), e);
    }
  }

  private static List<Member> applicationMembers(Class<?> c) {
    List<Member> found = new ArrayList<>();
    for (Method m : c.getMethods()) {
      if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
          && Application.class.isAssignableFrom(m.getReturnType())) {
        found.add(m);
      }
    }
    for (Field f : c.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && Application.class.isAssignableFrom(f.getType())) {
        found.add(f);
      }
    }
    return found;
  }

  private static String describe(Member m) {
    return m instanceof Method ? m.getName() + "()" : m.getName();
  }

  private static Application read(Member m) {
    String what = m.getDeclaringClass().getName() + "." + describe(m);
    try {
      return (Application) (m instanceof Method method ? method.invoke(null) : ((Field) m).get(null));
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      throw new CliException(what + " threw " + cause.getClass().getName() + ": " + cause.getMessage(), cause);
    } catch (IllegalAccessException e) {
      throw new CliException("cannot read " + what + ": " + e.getMessage() + " (make it and its class public)", e);
    }
  }

  Path path() {
    return path;
  }

  ClassLoader loader() {
    return loader;
  }

  /** Where the application comes from, e.g. {@code com.example.ShopApp.application()}. */
  String source() {
    return declaringClass + "." + member;
  }

  Application application() {
    return application;
  }

  @Override
  public void close() {
    closeQuietly(loader);
  }

  private static void closeQuietly(URLClassLoader loader) {
    try {
      loader.close();
    } catch (IOException e) {
      // nothing was written; the jar is only read
    }
  }
}

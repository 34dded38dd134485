package org.apiary.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The architecture document's table of what each module may depend on matches the poms: it names every module of
 * the build, and for each the Apiary modules it depends on outside its tests, no more and no fewer. And the
 * libraries an application's build meets bring no command-line parser and no logging binding.
 */
class ModuleTableTest {
  private static final Pattern NAME = Pattern.compile("`([^`]+)`");
  /** The modules an application or its tests depend on, and so everything they bring with them. */
  private static final List<String> LIBRARIES = List.of("apiary-core", "apiary-journal", "apiary-http", "apiary-provenance", "apiary-compiler",
      "apiary-frontend", "apiary-testing");
  /** What only a program (the CLI, the drills, the benchmarks) may choose, never a library. */
  private static final Set<String> PROGRAMS_ONLY = Set.of("info.picocli:picocli", "org.slf4j:slf4j-nop",
      "org.slf4j:slf4j-simple", "ch.qos.logback:logback-classic", "org.apiary:apiary-cli", "org.apiary:apiary-drills");

  @Test
  void theArchitectureDocsDependencyTableMatchesThePoms() throws Exception {
    Path root = ProjectRoot.find();
    Map<String, Set<String>> documented = documentedDependencies(root.resolve("docs/architecture.md"));
    Map<String, Set<String>> built = new TreeMap<>();
    for (String module : modules(root.resolve("pom.xml"))) {
      built.put(module, apiaryDependencies(root.resolve(module).resolve("pom.xml")));
    }
    assertEquals(built, documented, "docs/architecture.md's 'may depend on' table (left: the poms)");
  }

  @Test
  void noLibraryBringsPicocliOrALoggingBindingOrTheCommandLine() throws Exception {
    Path root = ProjectRoot.find();
    List<String> found = new ArrayList<>();
    for (String module : LIBRARIES) {
      for (String dependency : dependencies(root.resolve(module).resolve("pom.xml"), null)) {
        if (PROGRAMS_ONLY.contains(dependency)) {
          found.add(module + " -> " + dependency);
        }
      }
    }
    assertEquals(List.of(), found, "libraries that bring what only a program may choose");
  }

  /** Module name to the Apiary modules named in its "may depend on" column. */
  private static Map<String, Set<String>> documentedDependencies(Path doc) throws Exception {
    List<String> lines = Files.readAllLines(doc);
    int header = lines.indexOf("| module | may depend on | never on |");
    assertTrue(header >= 0, "docs/architecture.md has no '| module | may depend on | never on |' table");
    Map<String, Set<String>> table = new TreeMap<>();
    for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
      String[] cells = lines.get(i).split("\\|");
      Matcher module = NAME.matcher(cells[1]);
      assertTrue(module.find(), "a row names no module: " + lines.get(i));
      Set<String> dependencies = new TreeSet<>();
      Matcher dependency = NAME.matcher(cells[2].replaceAll("\\(.*?\\)", ""));
      while (dependency.find()) {
        if (dependency.group(1).startsWith("apiary-")) {
          dependencies.add(dependency.group(1));
        }
      }
      table.put(module.group(1), dependencies);
    }
    return table;
  }

  private static List<String> modules(Path parentPom) throws Exception {
    NodeList modules = parse(parentPom).getElementsByTagName("module");
    List<String> names = new ArrayList<>();
    for (int i = 0; i < modules.getLength(); i++) {
      names.add(modules.item(i).getTextContent().strip());
    }
    return names;
  }

  /** The org.apiary artifacts a pom depends on at compile or runtime scope (test jars and test scope left out). */
  private static Set<String> apiaryDependencies(Path pom) throws Exception {
    Set<String> names = new TreeSet<>();
    for (String dependency : dependencies(pom, "org.apiary")) {
      names.add(dependency.substring("org.apiary:".length()));
    }
    return names;
  }

  /** groupId:artifactId of what a pom depends on outside its tests, of one group or (null) of every group. */
  private static Set<String> dependencies(Path pom, String group) throws Exception {
    Set<String> names = new TreeSet<>();
    Element project = parse(pom).getDocumentElement();
    NodeList dependencies = project.getElementsByTagName("dependency");
    for (int i = 0; i < dependencies.getLength(); i++) {
      Element d = (Element) dependencies.item(i);
      if (d.getParentNode().getParentNode() != project) {
        continue; // dependencyManagement and plugins' dependencies are not the module's own
      }
      String scope = child(d, "scope");
      String type = child(d, "type");
      String groupId = child(d, "groupId");
      if ((group == null || group.equals(groupId)) && !"test".equals(scope) && !"test-jar".equals(type)) {
        names.add(groupId + ":" + child(d, "artifactId"));
      }
    }
    return names;
  }

  private static String child(Element e, String tag) {
    NodeList l = e.getElementsByTagName(tag);
    return l.getLength() == 0 ? null : l.item(0).getTextContent().strip();
  }

  private static Document parse(Path pom) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return factory.newDocumentBuilder().parse(pom.toFile());
  }
}

package org.apiary.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * The programming guide's pom snippet ("Your own application") builds as written: it is well-formed XML, sets the
 * Java release, gives every plugin a version and the JVM flags as a Maven property, and each of its lines is a line of
 * examples/shop/pom.xml, which the root build compiles, tests and deploys (ShopJarIT). Issue 44: the snippet once
 * had no plugin versions or release and the flags only as a shell-brace expression.
 */
class GuidePomSnippetTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  @Test
  void theGuidesPomSnippetIsWellFormedCompleteAndTheShopsOwn() throws Exception {
    String snippet = xmlBlock(ROOT.resolve("docs/programming-guide.md"));
    Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new InputSource(new StringReader("<project>" + snippet + "</project>")));
    assertEquals("17", text(doc, "maven.compiler.release"), "the snippet sets the Java release");
    assertTrue(text(doc, "voltdb.jvm.flags").contains("--add-opens java.base/sun.nio.ch=ALL-UNNAMED"),
        "the JVM flags as a property, in Maven's form");
    NodeList plugins = doc.getElementsByTagName("plugin");
    assertTrue(plugins.getLength() >= 3, "compiler, jar and surefire plugins");
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      assertEquals(1, plugin.getElementsByTagName("version").getLength(),
          "plugin " + plugin.getElementsByTagName("artifactId").item(0).getTextContent() + " names its version");
    }
    NodeList deps = doc.getElementsByTagName("dependency");
    for (int i = 0; i < deps.getLength(); i++) {
      assertEquals(1, ((Element) deps.item(i)).getElementsByTagName("version").getLength(), "every dependency's version");
    }
    assertTrue(snippet.contains("<argLine>${voltdb.jvm.flags}"), "surefire's argLine uses the flags");

    Set<String> shopLines = Files.readAllLines(ROOT.resolve("examples/shop/pom.xml")).stream().map(String::strip)
        .collect(Collectors.toSet());
    List<String> foreign = new ArrayList<>();
    for (String line : snippet.split("\n")) {
      String t = line.strip();
      if (!t.isEmpty() && !shopLines.contains(t)) {
        foreign.add(t);
      }
    }
    assertEquals(List.of(), foreign, "lines of the guide's pom snippet that examples/shop/pom.xml (built by CI) lacks");
  }

  private static String text(Document doc, String tag) {
    NodeList n = doc.getElementsByTagName(tag);
    assertEquals(1, n.getLength(), "<" + tag + "> once in the snippet");
    return n.item(0).getTextContent();
  }

  /** The one ```xml block of a document. */
  private static String xmlBlock(Path doc) throws IOException {
    String text = Files.readString(doc);
    int start = text.indexOf("```xml\n");
    assertTrue(start >= 0, "no ```xml block in " + doc);
    assertEquals(-1, text.indexOf("```xml\n", start + 1), "one ```xml block in " + doc);
    int end = text.indexOf("\n```", start + 7);
    return text.substring(start + 7, end);
  }
}

package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * sluice-bom has no parent (so users import none of the build's own tools), which leaves its
 * versions written twice; these tests hold them to the parent's. The consumer check module is a
 * user's project importing the BOM, and its resolved versions are what users get.
 */
class BomIntegrationTests {

  static final Path ROOT = DistributionIntegrationTests.ROOT;
  static final Path BOM = ROOT.resolve("sluice-bom/pom.xml");
  static final Path RESOLVED = ROOT.resolve("sluice-bom/consumer-check/target/dependencies.txt");
  /** Modules of the parent that are not libraries users depend on. */
  static final Set<String> UNPUBLISHED = Set.of("sluice-bench", "sluice-bom", "sluice-bom/consumer-check",
      "sluice-dist", "examples/spring-boot");

  @Test
  void bom_versionsEqualTheParents() throws Exception {
    Document bom = parse(BOM);
    Element project = bom.getDocumentElement();
    assertThat(child(project, "version")).as("sluice-bom version").isEqualTo(System.getProperty("sluice.version"));
    Element props = first(project, "properties");
    for (String p : List.of("netty.version", "lettuce.version", "snakeyaml.version", "icu4j.version",
        "slf4j.version")) {
      assertThat(child(props, p)).as("sluice-bom property " + p + " (the parent pom's)")
          .isEqualTo(System.getProperty(p));
    }
    assertThat(child(props, "sluice.version")).isEqualTo(System.getProperty("sluice.version"));
  }

  @Test
  void bom_listsEveryPublishedModule_andOnlyWhatUsersNeed() throws Exception {
    List<String> published = new ArrayList<>();
    for (Element m : all(first(parse(ROOT.resolve("pom.xml")).getDocumentElement(), "modules"), "module")) {
      if (!UNPUBLISHED.contains(m.getTextContent().strip())) {
        published.add(m.getTextContent().strip());
      }
    }
    Map<String, String> managed = new LinkedHashMap<>();
    Element deps = first(first(parse(BOM).getDocumentElement(), "dependencyManagement"), "dependencies");
    for (Element d : all(deps, "dependency")) {
      managed.put(child(d, "groupId") + ":" + child(d, "artifactId"), child(d, "version"));
    }
    for (String module : published) {
      assertThat(managed).as("sluice-bom manages " + module).containsEntry("dev.sluice:" + module, "${sluice.version}");
    }
    assertThat(managed).containsEntry("io.netty:netty-bom", "${netty.version}");
    assertThat(managed.keySet()).allSatisfy(ga -> assertThat(ga.substring(0, ga.indexOf(':')))
        .as(ga).isIn("dev.sluice", "io.netty", "io.lettuce", "org.yaml", "com.ibm.icu", "org.slf4j"));
  }

  @Test
  void consumer_ofTheBom_getsTheTestedNettyAndLettuce() throws Exception {
    assertThat(RESOLVED).as("written by sluice-bom/consumer-check at package").isRegularFile();
    Pattern line = Pattern.compile("^\\s*([\\w.-]+):([\\w.-]+):(?:[\\w-]+)(?::[\\w.-]+)?:([\\w.-]+):(\\w+)");
    Map<String, String> versions = new LinkedHashMap<>();
    for (String l : Files.readAllLines(RESOLVED)) {
      Matcher m = line.matcher(l);
      if (m.find()) {
        versions.put(m.group(1) + ":" + m.group(2), m.group(3));
      }
    }
    assertThat(versions).containsEntry("io.lettuce:lettuce-core", System.getProperty("lettuce.version"))
        .containsEntry("org.slf4j:slf4j-api", System.getProperty("slf4j.version"))
        .containsKeys("io.netty:netty-common", "io.netty:netty-codec-http", "dev.sluice:sluice-redis");
    versions.forEach((ga, v) -> {
      if (ga.startsWith("io.netty:")) {
        assertThat(v).as(ga).isEqualTo(System.getProperty("netty.version"));
      }
    });
  }

  static Document parse(Path pom) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return f.newDocumentBuilder().parse(pom.toFile());
  }

  static Element first(Element parent, String name) {
    List<Element> found = all(parent, name);
    assertThat(found).as("<" + name + "> in <" + parent.getTagName() + ">").isNotEmpty();
    return found.get(0);
  }

  static String child(Element parent, String name) {
    return first(parent, name).getTextContent().strip();
  }

  /** Direct children named {@code name}. */
  static List<Element> all(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }
}

package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's module table and the poms cannot drift: every module of the build has a row, and
 * the row's "may use" column names exactly the project modules its pom depends on outside tests.
 */
class ModuleTableTest {
  private static final Pattern CODE = Pattern.compile("`(se-[a-z]+(?:-[a-z]+)*)`");
  private static final Pattern MODULE = Pattern.compile("<module>(se-[a-z]+(?:-[a-z]+)*)</module>");
  private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);
  private static final Pattern ARTIFACT = Pattern.compile("<artifactId>(se-[a-z]+(?:-[a-z]+)*)</artifactId>");
  private static final Pattern SCOPE = Pattern.compile("<scope>(\\w+)</scope>");

  @Test
  void everyModuleHasARowNamingExactlyWhatItsPomUses() throws IOException {
    Map<String, TreeSet<String>> readme = readmeTable();
    Map<String, TreeSet<String>> poms = new TreeMap<>();
    for (String module : modules()) {
      poms.put(module, pomDependencies(Path.of("..", module, "pom.xml")));
    }
    assertThat(readme.keySet()).as("modules in the README table").containsExactlyInAnyOrderElementsOf(poms.keySet());
    for (Map.Entry<String, TreeSet<String>> e : poms.entrySet()) {
      assertThat(readme.get(e.getKey())).as("modules %s may use (README) vs its pom", e.getKey())
          .containsExactlyElementsOf(e.getValue());
    }
  }

  private static List<String> modules() throws IOException {
    List<String> modules = new ArrayList<>();
    Matcher m = MODULE.matcher(Files.readString(Path.of("..", "pom.xml")));
    while (m.find()) {
      modules.add(m.group(1));
    }
    assertThat(modules).as("modules of the root pom").isNotEmpty();
    return modules;
  }

  /** Project modules the pom depends on outside tests (profiles and the parent left out). */
  private static TreeSet<String> pomDependencies(Path pom) throws IOException {
    String text = Files.readString(pom)
        .replaceAll("(?s)<parent>.*?</parent>", "")
        .replaceAll("(?s)<profiles>.*?</profiles>", "")
        .replaceAll("(?s)<!--.*?-->", "");
    TreeSet<String> uses = new TreeSet<>();
    Matcher d = DEPENDENCY.matcher(text);
    while (d.find()) {
      String dependency = d.group(1);
      Matcher artifact = ARTIFACT.matcher(dependency);
      Matcher scope = SCOPE.matcher(dependency);
      boolean test = (scope.find() && scope.group(1).equals("test"))
          || dependency.contains("<type>test-jar</type>") || dependency.contains("<classifier>tests</classifier>");
      if (artifact.find() && !test) {
        uses.add(artifact.group(1));
      }
    }
    return uses;
  }

  /** Module -> the modules named in its "may use" cell, from the table under "## Architecture: modules". */
  private static Map<String, TreeSet<String>> readmeTable() throws IOException {
    List<String> lines = Files.readAllLines(Path.of("..", "README.md"));
    int start = lines.indexOf("## Architecture: modules");
    assertThat(start).as("README has a ## Architecture: modules section").isNotNegative();
    Map<String, TreeSet<String>> rows = new TreeMap<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("## ")) {
        break;
      }
      if (!line.startsWith("| `se-")) {
        continue;
      }
      String[] cells = line.split("\\|", -1);
      assertThat(cells).as("three cells: %s", line).hasSize(5);
      Matcher name = CODE.matcher(cells[1]);
      assertThat(name.find()).as("module name in %s", line).isTrue();
      TreeSet<String> uses = new TreeSet<>();
      Matcher use = CODE.matcher(cells[3]);
      while (use.find()) {
        uses.add(use.group(1));
      }
      assertThat(rows.put(name.group(1), uses)).as("a second row for %s", name.group(1)).isNull();
    }
    return rows;
  }
}

package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.common.config.Setting;
import io.storageengine.server.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's "Configuration" tables and the settings cannot drift: every setting has a row with
 * its flags, variable and default, and every row is a setting.
 */
class ConfigurationTableTest {
  private static final Pattern CODE = Pattern.compile("`([^`]*)`");

  private record Row(List<String> flags, String variable, String defaultCell, String line) {}

  @Test
  void everySettingHasItsRowAndEveryRowIsASetting() throws IOException {
    Map<String, Row> rows = new LinkedHashMap<>();
    for (Row row : rows()) {
      assertThat(rows.put(row.variable(), row)).as("a second row for %s", row.variable()).isNull();
    }
    Map<String, Setting<?>> settings = new LinkedHashMap<>();
    ServerConfig.ALL_SETTINGS.forEach(s -> settings.put(s.environmentVariable(), s));
    assertThat(rows.keySet()).as("variables in the README").containsExactlyInAnyOrderElementsOf(settings.keySet());
    for (Setting<?> setting : settings.values()) {
      Row row = rows.get(setting.environmentVariable());
      assertThat(row.flags()).as(row.line()).containsExactlyInAnyOrderElementsOf(setting.flags());
      if (setting.defaultValue().isEmpty()) {
        assertThat(row.defaultCell()).as("%s has no default: empty, or an explanation in parentheses", row.line())
            .matches("|\\(.*\\)");
      } else {
        assertThat(row.defaultCell()).as(row.line()).isEqualTo("`" + setting.defaultValue() + "`");
      }
    }
  }

  /** The rows of every table under "## Configuration", up to the next section. */
  private static List<Row> rows() throws IOException {
    List<String> lines = Files.readAllLines(Path.of("..", "README.md"));
    int start = lines.indexOf("## Configuration");
    assertThat(start).as("README has a ## Configuration section").isNotNegative();
    List<Row> rows = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("## ")) {
        break;
      }
      if (!line.startsWith("|") || line.startsWith("| flag ") || line.startsWith("|---")) {
        continue;
      }
      String[] cells = line.split("\\|", -1);
      assertThat(cells.length).as("flag, environment, default and meaning: %s", line).isGreaterThanOrEqualTo(6);
      List<String> flags = new ArrayList<>();
      Matcher m = CODE.matcher(cells[1]);
      while (m.find()) {
        flags.add(m.group(1));
      }
      Matcher variable = CODE.matcher(cells[2]);
      assertThat(variable.find()).as("a variable in %s", line).isTrue();
      rows.add(new Row(flags, variable.group(1), cells[3].trim(), line));
    }
    return rows;
  }
}

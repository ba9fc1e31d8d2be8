package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Every command and command group of {@code se} answers {@code --help}; mistakes get suggestions. */
class CommandHelpTest {
  /** Every command path ("se", "se table", "se table create", ...), from picocli's own model. */
  static Stream<List<String>> commandPaths() {
    List<List<String>> paths = new ArrayList<>();
    collect(new CommandLine(new Main()), new ArrayList<>(), paths);
    return paths.stream();
  }

  private static void collect(CommandLine command, List<String> path, List<List<String>> paths) {
    paths.add(List.copyOf(path));
    for (CommandLine sub : command.getSubcommands().values().stream().distinct().toList()) {
      List<String> subPath = new ArrayList<>(path);
      subPath.add(sub.getCommandName());
      collect(sub, subPath, paths);
    }
  }

  @Test
  void theTreeHasEveryCommandGroup() {
    List<String> names = commandPaths().map(p -> String.join(" ", p)).toList();
    assertThat(names).contains("", "dev", "start", "start server", "catalog", "catalog create", "table",
        "table create", "ingest", "sql", "reconcile", "maintain");
  }

  @ParameterizedTest(name = "se {0} --help")
  @MethodSource("commandPaths")
  void helpExitsZeroAndPrintsUsage(List<String> path) {
    List<String> args = new ArrayList<>(path);
    args.add("--help");
    Result result = run(args.toArray(String[]::new));
    assertThat(result.rc).as("se %s --help; stderr: %s", String.join(" ", path), result.err).isZero();
    assertThat(result.out).contains("Usage: se" + (path.isEmpty() ? "" : " " + String.join(" ", path)));
  }

  @Test
  void versionNamesTheVersionAndCommit() {
    Result result = run("--version");
    assertThat(result.rc).isZero();
    assertThat(result.out).matches("(?s)se \\S+ \\(commit \\S+, Java \\S+\\)\\s*");
  }

  @Test
  void aMistypedOptionGetsTheRightOneSuggested() {
    Result result = run("ingest", "--catalog-id", "warehouse", "--tabel", "crm.customers", "f.csv");
    assertThat(result.rc).isEqualTo(2);
    assertThat(result.err).contains("Unknown option: '--tabel'").contains("Possible solutions: --table");
  }

  private record Result(int rc, String out, String err) {}

  private static Result run(String... args) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    System.setOut(new PrintStream(outBytes, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
    try {
      int rc = Main.execute(args);
      System.out.flush();
      System.err.flush();
      return new Result(rc, outBytes.toString(StandardCharsets.UTF_8), errBytes.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
  }
}

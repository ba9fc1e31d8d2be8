package io.storageengine.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The README quickstart with the real {@code ./se} launcher, each command a separate process:
 * start {@code se dev}, wait for {@code /health}, create the tables, ingest a CSV and wait until
 * {@code se sql} shows the rows, upsert, partially update and delete entity rows, stop the
 * server, and run a one-shot {@code se reconcile} on the same data directory, which finds
 * everything already published. Maven built the engine before this module's tests, so the
 * launcher runs with {@code SE_SKIP_BUILD=1}.
 *
 * <p>It runs once on the Java runtime of the tests and once more, every command of it, on each
 * other runtime named in {@code -Dse.test.java-homes} (comma-separated), by default on the newest
 * JDK under {@code /usr/lib/jvm} if it is newer than the tests' own: the README promises
 * "Java 17+", and JDK 23 and later broke the engine once already (Hadoop's
 * {@code Subject.getSubject}).
 */
class EndToEndTest {
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);

  @TempDir Path work;
  /** {@code JAVA_HOME} of every command: the runtime under test. */
  private String javaHome;

  /** A finished command: exit code and output. */
  record Result(int exitCode, String stdout, String stderr) {
    @Override
    public String toString() {
      return "exit " + exitCode + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr;
    }
  }

  /** The test JVM's own runtime, then the others to try (see the class comment). */
  static List<String> javaHomes() throws IOException {
    List<String> homes = new ArrayList<>(List.of(System.getProperty("java.home")));
    String named = System.getProperty("se.test.java-homes");
    if (named != null) {
      Arrays.stream(named.split(",")).map(String::strip).filter(h -> !h.isEmpty()).forEach(homes::add);
      return homes;
    }
    int own = Runtime.version().feature();
    Path jvms = Path.of("/usr/lib/jvm");
    if (Files.isDirectory(jvms)) {
      try (Stream<Path> dirs = Files.list(jvms)) {
        dirs.filter(d -> Files.isExecutable(d.resolve("bin/java")) && !Files.isSymbolicLink(d))
            .filter(d -> majorVersion(d) > own)
            .max(Comparator.comparingInt(EndToEndTest::majorVersion))
            .ifPresent(d -> homes.add(d.toString()));
      }
    }
    return homes;
  }

  /** The feature version in a JDK's {@code release} file ({@code JAVA_VERSION="25.0.3"}), or 0. */
  private static int majorVersion(Path home) {
    try {
      Matcher m = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)").matcher(Files.readString(home.resolve("release")));
      return m.find() ? Integer.parseInt(m.group(1)) : 0;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("javaHomes")
  void readmeQuickstartWorksWithTheRealLauncher(String javaHome) throws Exception {
    this.javaHome = javaHome;
    Path root = Path.of("").toAbsolutePath().getParent();
    Path se = root.resolve("se");
    assertThat(se).as("the se launcher at the repository root").isExecutable();
    assertThat(root.resolve("se-cli/target/se-cli.jar"))
        .as("se-cli must be packaged before this test runs (mvn verify does that)").exists();
    Path data = work.resolve("data");
    int port = DevProcess.freePort();
    String server = "http://127.0.0.1:" + port;

    try (DevProcess dev = DevProcess.start(se, port, data, work.resolve("dev.log"), List.of(), "-Xmx1g",
        Map.of("JAVA_HOME", javaHome))) {
      dev.awaitHealthy(Duration.ofSeconds(120));

      Result created = se(root, "table", "create", "--server-address", server,
          "--catalog-id", "warehouse", "--table", "analytics.events.page_views",
          "--schema", "id bigint not null, url string, ts timestamptz", "--partition-by", "day(ts)");
      assertThat(created.exitCode()).as(created.toString()).isZero();
      assertThat(created.stdout()).startsWith("created append table analytics.events.page_views (uuid ");

      Result entity = se(root, "table", "create", "--server-address", server,
          "--catalog-id", "warehouse", "--table", "crm.customers", "--mode", "entity",
          "--schema", "id bigint not null, name string, email string, updated_at timestamptz not null",
          "--primary-key", "id", "--version-column", "updated_at");
      assertThat(entity.exitCode()).as(entity.toString()).isZero();
      assertThat(entity.stdout()).startsWith("created entity table crm.customers (uuid ");

      Path csv = write("views.csv", "id,url,ts\n1,/home,2026-01-01T10:00:00Z\n2,/cart,2026-01-01T10:00:05Z\n");
      Result ingested = se(root, "ingest", "--server-address", server, "--catalog-id", "warehouse",
          "--table", "analytics.events.page_views", csv.toString());
      assertThat(ingested.exitCode()).as(ingested.toString()).isZero();
      assertThat(ingested.stdout()).contains(csv + ": 2 rows acknowledged")
          .contains("2 rows acknowledged in ");

      assertThat(awaitQuery(root, server,
          "SELECT id, url FROM default.\"analytics.events\".page_views ORDER BY id LIMIT 10",
          "id,url", "1,/home", "2,/cart")).isTrue();

      // The entity table: upserts, a partial update (only email), a delete (key + version).
      Path c1 = write("c1.csv", "id,name,email,updated_at\n1,Ann,ann@x.io,2026-01-01T00:00:00Z\n"
          + "2,Bob,bob@x.io,2026-01-01T00:00:00Z\n");
      Path c2 = write("c2.csv", "id,email,updated_at\n1,ann@new.io,2026-01-02T00:00:00Z\n");
      Path gone = write("gone.csv", "id,updated_at\n2,2026-01-03T00:00:00Z\n");
      Result upserts = se(root, "ingest", "--server-address", server, "--catalog-id", "warehouse",
          "--table", "crm.customers", c1.toString(), c2.toString());
      assertThat(upserts.exitCode()).as(upserts.toString()).isZero();
      assertThat(upserts.stdout()).contains(c1 + ": 2 rows acknowledged", c2 + ": 1 rows acknowledged");
      Result delete = se(root, "ingest", "--server-address", server, "--catalog-id", "warehouse",
          "--table", "crm.customers", "--operation", "delete", gone.toString());
      assertThat(delete.exitCode()).as(delete.toString()).isZero();
      assertThat(delete.stdout()).contains(gone + ": 1 rows acknowledged");
      assertThat(awaitQuery(root, server,
          "SELECT id, name, email FROM default.crm.customers ORDER BY id",
          "id,name,email", "1,Ann,ann@new.io")).isTrue();
    }

    // The server is stopped; a one-shot reconcile on its data finds nothing left to publish.
    Result reconcile = se(root, "reconcile", "--data-dir", data.toString());
    assertThat(reconcile.exitCode()).as(reconcile.toString()).isZero();
    assertThat(reconcile.stdout()).doesNotContain("committed").doesNotContain("FAILED")
        .containsAnyOf("up to date", "nothing to reconcile");
  }

  private Path write(String name, String content) throws IOException {
    return Files.writeString(work.resolve(name), content, StandardCharsets.UTF_8);
  }

  /** Runs {@code se sql --format csv} until it prints exactly {@code lines} (at most 90 s). */
  private boolean awaitQuery(Path root, String server, String sql, String... lines) throws Exception {
    Result query = null;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      query = se(root, "sql", "--server-address", server, "--catalog-id", "warehouse",
          "--format", "csv", sql);
      if (query.exitCode() == 0 && query.stdout().strip().lines().toList().equals(List.of(lines))) {
        return true;
      }
      Thread.sleep(500);
    }
    throw new AssertionError("`se sql " + sql + "` never printed " + List.of(lines) + "; last: " + query);
  }

  /** Runs {@code ./se args...} from the repository root and waits for it. */
  private Result se(Path root, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(root.resolve("se").toString());
    command.addAll(List.of(args));
    Path out = Files.createTempFile(work, "out", ".txt");
    Path err = Files.createTempFile(work, "err", ".txt");
    ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile())
        .redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().put("SE_SKIP_BUILD", "1");
    builder.environment().put("JAVA_HOME", javaHome);
    Process process = builder.start();
    if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError("se " + String.join(" ", args) + " did not finish within " + COMMAND_TIMEOUT);
    }
    return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
  }
}

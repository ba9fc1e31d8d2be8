package io.storageengine.stress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** se-stress against an in-process server: short append and entity runs that must verify. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StressMainTest {
  @TempDir static Path dir;
  TestServer server;

  @BeforeAll
  void start() {
    server = TestServer.start(dir.resolve("data"), Map.of());
  }

  @AfterAll
  void stop() {
    server.close();
  }

  @Test
  void appendRunVerifiesEveryAcknowledgedRowThroughBothReaders() throws Exception {
    Path json = dir.resolve("append.json");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    JsonNode summary = run(err, "--mode", "append", "--tables", "2", "--concurrency", "2",
        "--batch-rows", "200", "--rate", "4000", "--duration", "3s", "--row-bytes", "50",
        "--json", json.toString());
    assertThat(summary.path("verification").path("result").asText()).as(summary.toPrettyString())
        .isEqualTo("passed");
    assertThat(summary.path("rows_acked").asLong()).isPositive();
    assertThat(summary.path("rows_unknown").asLong()).isZero();
    assertThat(summary.path("throughput").path("rows_per_s").asLong()).isPositive();
    assertThat(summary.path("ack_latency_ms").path("p50").asDouble()).isPositive();
    assertThat(summary.path("ack_latency_ms").has("p99")).isTrue();
    assertThat(summary.path("freshness_ms").path("count").asLong()).isPositive();
    JsonNode tables = summary.path("verification").path("tables");
    assertThat(tables).hasSize(4); // two tables, each through Flight SQL and Iceberg's reader
    for (JsonNode t : tables) {
      assertThat(t.path("verified").asLong()).isEqualTo(t.path("expected").asLong()).isPositive();
      assertThat(t.path("missing").asLong()).isZero();
      assertThat(t.path("duplicated").asLong()).isZero();
    }
    long acked = 0;
    for (int i = 0; i < 4; i += 2) {
      acked += tables.get(i).path("expected").asLong();
    }
    assertThat(acked).isEqualTo(summary.path("rows_acked").asLong());
    assertThat(Json.parse(Files.readAllBytes(json))).isEqualTo(summary);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("rows/s");
  }

  @Test
  void entityRunWithUpdatesAndDeletesMatchesTheModel() throws Exception {
    JsonNode summary = run(new ByteArrayOutputStream(), "--mode", "entity", "--concurrency", "2",
        "--batch-rows", "100", "--rate", "3000", "--duration", "3s", "--key-space", "300",
        "--update-ratio", "0.7", "--delete-ratio", "0.2");
    assertThat(summary.path("verification").path("result").asText()).as(summary.toPrettyString())
        .isEqualTo("passed");
    assertThat(summary.path("mode").asText()).isEqualTo("entity");
    for (JsonNode t : summary.path("verification").path("tables")) {
      assertThat(t.path("expected").asLong()).isBetween(1L, 300L);
      assertThat(t.path("wrong").asLong()).isZero();
    }
  }

  @Test
  void badOptionsExitWithTwoAndNameTheOption() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = StressMain.execute(new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(err, true, StandardCharsets.UTF_8), "--mode", "append", "--delete-ratio", "0.1",
        "--server-address", server.endpoint.toString());
    assertThat(code).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--update-ratio and --delete-ratio apply to --mode entity only");
  }

  @Test
  void missingTableWithoutCreateTablesFailsAtOnceSayingWhatToDo() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    long start = System.nanoTime();
    int code = StressMain.execute(new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(err, true, StandardCharsets.UTF_8), "--mode", "append", "--duration", "20s",
        "--namespace", "fresh", "--table-prefix", "absent", "--server-address", server.endpoint.toString());
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertThat(code).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("table fresh.absent_append_0 does not exist in catalog 'warehouse': create it or pass --create-tables")
        .doesNotContain("NoSuchTableException");
    assertThat(millis).as("failed after %d ms", millis).isLessThan(10_000);
  }

  /** Runs se-stress against the test server, each run on tables of its own; returns the summary. */
  private JsonNode run(ByteArrayOutputStream err, String... options) {
    List<String> args = new ArrayList<>(List.of(options));
    args.addAll(List.of("--server-address", server.endpoint.toString(), "--create-tables",
        "--table-prefix", "t" + System.nanoTime(), "--settle", "1s", "--verify-timeout", "60s"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code = StressMain.execute(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), args.toArray(String[]::new));
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(code).as(text + err.toString(StandardCharsets.UTF_8)).isZero();
    return Json.parse(text.getBytes(StandardCharsets.UTF_8));
  }
}

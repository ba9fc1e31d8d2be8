package io.storageengine.stress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Distributed mode as separate processes through the real launcher: a broker, two workers, two
 * servers and a load balancer on one cluster storage, loaded through the load balancer, with the
 * broker, a worker and a server each killed with SIGKILL (in a seeded random order, at random
 * moments) and restarted. The producers ingest idempotently and resend until acknowledged; every
 * row sent, acknowledged or not, must be present exactly once at the end.
 */
class ClusterSuiteTest {
  @TempDir Path work;

  @Test
  void killedRolesLoseAndDuplicateNothing() throws Exception {
    Path root = Path.of("").toAbsolutePath().getParent();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = new CommandLine(new ClusterSuite(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8))).execute(
        "--se", root.resolve("se").toString(), "--work-dir", work.toString(),
        "--duration", "20s", "--min-kills", "3", "--min-gap", "3s", "--max-gap", "5s",
        "--rate", "1500", "--tables", "1", "--seed", "42", "--java-opts", "-Xmx512m",
        // The ingest warm-up is tested on its own (IngestWarmupTest, the quickstart test); here it
        // would only add its 7-14 s to every server start and restart.
        "--warmup-streams", "0");
    String log = err.toString(StandardCharsets.UTF_8);
    assertThat(exit).as("cluster suite exit code; its log:\n%s\nreport:\n%s", log, out).isZero();

    System.out.println(out.toString(StandardCharsets.UTF_8)); // the report, for the build log
    JsonNode report = Json.MAPPER.readTree(out.toByteArray());
    assertThat(report.path("result").asText()).isEqualTo("passed");
    assertThat(report.path("exactly_once").asBoolean()).isTrue();
    assertThat(report.path("missing").asLong()).isZero();
    assertThat(report.path("duplicated").asLong()).isZero();
    assertThat(report.path("wrong").asLong()).isZero();
    List<String> killed = new ArrayList<>();
    report.path("kills").forEach(k -> killed.add(k.path("role").asText().replaceAll("-\\d+$", "")));
    assertThat(killed).as("roles killed").contains("broker", "worker", "server");
    assertThat(report.path("throughput").path("rows_acked").asLong()).isPositive();
    assertThat(report.path("worst_failover_s").asDouble()).as("a server kill was failed over").isPositive();
  }
}

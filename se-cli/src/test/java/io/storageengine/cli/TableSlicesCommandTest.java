package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.server.EngineServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se table create --slices} makes a sliced entity table that {@code se dev} reconciles
 * per slice; {@code se table describe} and {@code "t$slices"} list the slices, also after
 * {@code se maintain --split-slice} split one.
 */
class TableSlicesCommandTest {
  @TempDir Path dir;

  @Test
  void createdWithSlicesDescribedWithTheirProgressFilesAndRows() throws Exception {
    try (EngineServer server = Cli.startServer(dir.resolve("data"))) {
      String address = Cli.address(server);
      Cli.ok("table", "create", "--server-address", address, "--catalog-id", "warehouse", "--table", "crm.users",
          "--mode", "entity", "--primary-key", "id", "--schema", "id bigint not null, name string", "--slices", "2");
      StringBuilder csv = new StringBuilder("id,name\n");
      for (int i = 0; i < 100; i++) {
        csv.append(i).append(",n").append(i).append('\n');
      }
      Path file = dir.resolve("users.csv");
      Files.writeString(file, csv);
      Cli.ok("ingest", "--server-address", address, "--catalog-id", "warehouse", "--table", "crm.users",
          file.toString());

      // Describing a sliced table scans its files through the REST client, whose scan metrics
      // report (sent in the background) once found the client closed and logged a stack trace.
      ch.qos.logback.classic.Logger reporter = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
          "org.apache.iceberg.rest.RESTMetricsReporter");
      ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> reported =
          new ch.qos.logback.core.read.ListAppender<>();
      reported.start();
      reporter.addAppender(reported);
      String described = Cli.await(out -> out.matches("(?s).*\n  0 +00000000-7fffffff +1 .*\n  1 +80000000-ffffffff +1 .*"),
          "table", "describe", "--server-address", address, "--catalog-id", "warehouse", "--table", "crm.users");
      Thread.sleep(1_000);
      reporter.detachAppender(reported);
      assertThat(reported.list).as("scan metrics reports of a closed client").isEmpty();
      assertThat(described).contains("slices:         2 (by hash of the primary key)\n")
          .contains("  id   hash range          wal seq    files    rows\n");
      long rows = 0;
      for (String line : described.split("\n")) {
        if (line.matches("  [01] +[0-9a-f]{8}-[0-9a-f]{8} .*")) {
          String[] cells = line.trim().split("\\s+");
          assertThat(Integer.parseInt(cells[3])).as("files of slice %s", cells[0]).isPositive();
          rows += Long.parseLong(cells[4]);
        }
      }
      assertThat(rows).isEqualTo(100);

      String sql = Cli.ok("sql", "--server-address", address, "--catalog-id", "warehouse",
          "--format", "csv", "SELECT count(*) AS n, sum(rows) AS r, min(wal_seq) AS s FROM crm.\"users$slices\"");
      assertThat(sql).contains("2,100,1");

      // Split slice 0 online: describe and "t$slices" read the new layout from the slices-meta.
      String split = Cli.ok("maintain", "--data-dir", dir.resolve("data").toString(), "--catalog-id", "warehouse",
          "--table", "crm.users", "--split-slice", "0");
      assertThat(split).contains("split [0] -> [2, 3]");
      String after = Cli.await(out -> out.contains("slices:         3 "),
          "table", "describe", "--server-address", address, "--catalog-id", "warehouse", "--table", "crm.users");
      assertThat(after).containsPattern("\n  2 +00000000-3fffffff +1 ").containsPattern("\n  3 +40000000-7fffffff +1 ")
          .containsPattern("\n  1 +80000000-ffffffff +1 ");
      assertThat(Cli.ok("sql", "--server-address", address, "--catalog-id", "warehouse", "--format", "csv",
          "SELECT count(*) AS n, sum(rows) AS r, min(wal_seq) AS s FROM crm.\"users$slices\"")).contains("3,100,1");
      assertThat(Cli.ok("sql", "--server-address", address, "--catalog-id", "warehouse", "--format", "csv",
          "SELECT count(*) AS n FROM crm.users")).contains("100");
    }
  }
}

package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se table describe} shows whether the table's reconciliation is healthy or stuck, and
 * why, from a real {@code se dev} server whose reconcile loop keeps failing on a damaged WAL.
 */
class TableDescribeReconcileTest {
  @TempDir Path dir;
  private EngineServer server;

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.RECONCILE_INTERVAL, "100ms"), Role.DEV);
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void describeShowsHealthyThenFailingWithTheCauseAndPendingRange() throws Exception {
    TableIdentifier id = TableIdentifier.parse("ops.events");
    Table table = Tables.create(server.registry().catalog("warehouse"), id,
        TableDefinition.builder("id bigint not null").build());
    assertThat(describe()).contains("reconcile:      healthy\n");

    // A segment that cannot be decoded: every pass over the table fails on it.
    TableWal wal = new TableWal("warehouse", UUID.fromString(table.uuid().toString()));
    server.store().put(wal.segmentKey(1), "not a WAL segment".getBytes(StandardCharsets.UTF_8));
    // As a writer does after each segment: the pending marker makes the next tick look at it.
    new ObjectStoreWal(server.store(), "test").markPending(wal);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String described = describe();
    while (!described.contains("failing since")) {
      assertThat(System.nanoTime()).as("describe never showed the failure: %s", described)
          .isLessThan(deadline);
      Thread.sleep(100);
      described = describe();
    }
    assertThat(described).containsPattern("reconcile:      failing since \\d{4}-\\d\\d-\\d\\dT[^ ]+Z: "
        + "INTERNAL: corrupt WAL segment tenants/warehouse/tables/" + table.uuid()
        + "/wal/00000000000000000001.seg: .+ \\(\\d+ consecutive failures?, WAL 1..1 pending\\)\n");
  }

  private String describe() {
    PrintStream original = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    int rc;
    try {
      rc = Main.execute(new String[] {"table", "describe", "--server-address",
          "127.0.0.1:" + server.port(), "--catalog-id", "warehouse", "--table", "ops.events"});
    } finally {
      System.setOut(original);
    }
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(rc).as("se table describe printed: %s", printed).isZero();
    return printed;
  }
}

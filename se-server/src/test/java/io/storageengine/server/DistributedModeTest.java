package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Distributed mode with its roles as separate components on one cluster storage: a server that
 * only writes the WAL and schedules reconcile tasks, a broker, and a worker that publishes.
 */
class DistributedModeTest {
  @TempDir Path dir;

  private ServerConfig config(String address) {
    return ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, address)
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms");
  }

  @Test
  void serverSchedulesAndWorkerReconciles() throws Exception {
    try (BrokerProcess broker = BrokerProcess.start(config("127.0.0.1:0"));
        EngineServer server = EngineServer.start(config("127.0.0.1:0"), Role.SERVER);
        WorkerProcess worker = WorkerProcess.start(config("127.0.0.1:0"), 1);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", io.storageengine.catalog.CatalogConfig.embedded());
      Catalog catalog = server.registry().catalog("warehouse");
      TableIdentifier ident = TableIdentifier.parse("events.clicks");
      Table table = Tables.create(catalog, ident, TableDefinition.builder("id bigint not null, page string").build());
      try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
          VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
          IngestStream stream = client.open("warehouse", List.of("events"), "clicks", WalOperation.UPSERT, root.getSchema())) {
        root.allocateNew();
        for (int i = 0; i < 5; i++) {
          ((BigIntVector) root.getVector(0)).setSafe(i, i);
          ((VarCharVector) root.getVector(1)).setSafe(i, ("/p" + i).getBytes(StandardCharsets.UTF_8));
        }
        root.setRowCount(5);
        stream.send(root).get();
        stream.finish();
      }
      // The server itself never reconciles: the worker publishes through the broker's task.
      assertThat(server.reconcileLoop()).isEmpty();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      Snapshot snapshot = null;
      while (System.nanoTime() < deadline) {
        table.refresh();
        snapshot = table.currentSnapshot();
        if (snapshot != null) {
          break;
        }
        Thread.sleep(100);
      }
      assertThat(snapshot).as("the worker committed the WAL").isNotNull();
      assertThat(snapshot.summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ, "1");
      assertThat(snapshot.summary()).containsEntry("added-records", "5");
    }
  }
}

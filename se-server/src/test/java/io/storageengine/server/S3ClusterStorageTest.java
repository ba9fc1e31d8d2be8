package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.S3ProxyFixture;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster storage on S3 (S3Proxy, a real S3 server, in-process): catalog configs, the WAL and
 * state.json live in the bucket; an acknowledged batch is a segment object in the bucket and is
 * reconciled into the tenant's Iceberg table.
 */
class S3ClusterStorageTest {
  @TempDir Path dir;

  @Test
  void ingestIntoWalOnS3AndReconcile() throws Exception {
    S3ProxyFixture s3 = S3ProxyFixture.shared();
    ObjectStore store = s3.newStore("cluster-" + UUID.randomUUID());
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms");
    try (EngineServer server = EngineServer.start(config, Role.DEV, store);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("lake", CatalogConfig.sql("jdbc:sqlite:" + dir.resolve("lake.db"),
          dir.resolve("warehouse").toUri().toString()));
      Catalog catalog = server.registry().catalog("lake");
      Table table = Tables.create(catalog, TableIdentifier.parse("raw.events"),
          TableDefinition.builder("id bigint not null, body string").build());
      try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
          VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
          IngestStream stream = client.open("lake", List.of("raw"), "events", WalOperation.UPSERT, root.getSchema())) {
        root.allocateNew();
        for (int i = 0; i < 100; i++) {
          ((BigIntVector) root.getVector(0)).setSafe(i, i);
          ((VarCharVector) root.getVector(1)).setSafe(i, ("e" + i).getBytes(StandardCharsets.UTF_8));
        }
        root.setRowCount(100);
        stream.send(root).get();
        // Acknowledged means the segment object exists in the bucket.
        assertThat(store.list("tenants/lake/tables/" + table.uuid() + "/wal/")).isNotEmpty();
        stream.finish();
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (System.nanoTime() < deadline && table.currentSnapshot() == null) {
        Thread.sleep(100);
        table.refresh();
      }
      assertThat(table.currentSnapshot()).isNotNull();
      assertThat(table.currentSnapshot().summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ, "1");
      long rows = 0;
      try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
        for (Record ignored : records) {
          rows++;
        }
      }
      assertThat(rows).isEqualTo(100);
      assertThat(store.list("secrets/")).isNotEmpty();
    }
  }
}

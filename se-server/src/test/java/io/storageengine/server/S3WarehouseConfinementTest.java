package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.LoggingCatalog;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.S3ProxyFixture;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;

/**
 * Storage confinement with a tenant warehouse on S3 (S3Proxy, a real S3 server, in-process):
 * the tenant's FileIO refuses keys outside its root and other buckets, and orphan cleanup of a
 * table some outside client placed on another table's location deletes none of that table's
 * objects.
 */
class S3WarehouseConfinementTest {
  @TempDir Path dir;

  @Test
  void s3TenantIsHeldToItsRootAndCleanupSparesAnotherTablesObjects() throws Exception {
    // S3Proxy rejects the SDK's default flexible checksums (chunked trailers).
    System.setProperty("aws.requestChecksumCalculation", "when_required");
    System.setProperty("aws.responseChecksumValidation", "when_required");
    S3ProxyFixture s3 = S3ProxyFixture.shared();
    String prefix = "lake-" + UUID.randomUUID();
    String root = "s3://" + s3.bucket() + "/" + prefix;
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(ConfigKey.MAINTENANCE_INTERVAL, "1s");
    try (EngineServer server = EngineServer.start(config, Role.DEV);
        BufferAllocator allocator = new RootAllocator();
        S3Client client = s3.newClient()) {
      server.registry().create("lake", new CatalogConfig(CatalogConfig.Type.SQL,
          "jdbc:sqlite:" + dir.resolve("lake.db"), root, Map.of(
              "s3.endpoint", s3.endpoint().toString(),
              "s3.path-style-access", "true",
              "s3.access-key-id", s3.accessKey(),
              "s3.secret-access-key", s3.secretKey(),
              "client.region", S3ProxyFixture.REGION)));
      Catalog catalog = server.registry().catalog("lake");
      TableIdentifier events = TableIdentifier.parse("raw.events");
      Table table = Tables.create(catalog, events, TableDefinition.builder("id bigint not null, body string").build());
      assertThat(table.location()).startsWith(root + "/");
      try (var out = table.io().newOutputFile(table.location() + "/data/probe.bin").createOrOverwrite()) {
        out.write(new byte[] {1, 2, 3});
      }
      try (var out = table.io().newOutputFile(table.location() + "/data/probe2.parquet").createOrOverwrite();
          var in = new java.io.ByteArrayInputStream(new byte[5000])) {
        in.transferTo(out);
      }
      try (var in = table.io().newInputFile(table.location() + "/data/probe.bin").newStream()) {
        assertThat(in.readAllBytes()).containsExactly(1, 2, 3);
      }
      assertThat(table.io().newInputFile(table.location() + "/data/probe.bin").getLength()).isEqualTo(3);
      ingest(server, allocator, events, 3);
      awaitSnapshot(table);

      // Outside the root: another prefix of the same bucket, another bucket.
      for (String outside : List.of("s3://" + s3.bucket() + "/other-tenant/t/metadata/v1.metadata.json",
          "s3://" + s3.bucket() + "/" + prefix + "-b/x", "s3://another-bucket/" + prefix + "/x")) {
        assertThatThrownBy(() -> table.io().newInputFile(outside)).as(outside)
            .hasMessageContaining("outside the catalog's storage root");
        assertThatThrownBy(() -> table.io().deleteFile(outside)).as(outside)
            .hasMessageContaining("outside the catalog's storage root");
      }
      assertThatThrownBy(() -> catalog.buildTable(TableIdentifier.parse("raw.escape"), table.schema())
          .withLocation("s3://" + s3.bucket() + "/other-tenant/escape").create())
          .hasMessageContaining("outside the catalog's storage root");

      // An outside client places a table on the same location, with a one-second orphan age.
      List<String> before = keys(client, s3.bucket(), prefix + "/raw/events/");
      assertThat(before).anyMatch(k -> k.endsWith(".parquet")).noneMatch(k -> k.contains("//"));
      Catalog raw = ((LoggingCatalog) catalog).delegate();
      ((SupportsNamespaces) raw).createNamespace(Namespace.of("other"));
      raw.buildTable(TableIdentifier.parse("other.overlap"), table.schema()).withLocation(table.location())
          .withProperty("se.maintenance.orphan-age", "PT1S").create();
      ingest(server, allocator, TableIdentifier.parse("other.overlap"), 1);
      awaitSnapshot(catalog.loadTable(TableIdentifier.parse("other.overlap")));
      Thread.sleep(4_000); // several maintenance passes
      assertThat(keys(client, s3.bucket(), prefix + "/raw/events/")).containsAll(before);
      long rows = 0;
      try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(events)).build()) {
        for (Record r : records) {
          rows++;
        }
      }
      assertThat(rows).isEqualTo(3);
    }
  }

  private static void ingest(EngineServer server, BufferAllocator allocator, TableIdentifier id, int rows)
      throws Exception {
    Table table = server.registry().catalog("lake").loadTable(id);
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("lake", List.of(id.namespace().levels()), id.name(),
            WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < rows; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, i);
        ((VarCharVector) root.getVector(1)).setSafe(i, ("e" + i).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      stream.send(root).get();
      stream.finish();
    }
  }

  private static void awaitSnapshot(Table table) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline && table.currentSnapshot() == null) {
      Thread.sleep(100);
      table.refresh();
    }
    assertThat(table.currentSnapshot()).isNotNull();
  }

  private static List<String> keys(S3Client client, String bucket, String prefix) {
    return client.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).build())
        .contents().stream().map(o -> o.key()).toList();
  }
}

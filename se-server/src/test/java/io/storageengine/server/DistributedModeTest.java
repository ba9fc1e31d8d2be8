package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.auth.AuthConfig;
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
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import java.util.stream.StreamSupport;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
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
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        // se start roles default to --auth.mode tokens; the test calls without credentials, on loopback.
        .with(AuthConfig.MODE, "none")
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
      ingest(server, allocator, table, 0, 5);
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

  @Test
  void segmentsWrittenWithoutABrokerArePublishedOnceOneIsBack() throws Exception {
    try (EngineServer server = EngineServer.start(config("127.0.0.1:0"), Role.SERVER);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", io.storageengine.catalog.CatalogConfig.embedded());
      Table table = Tables.create(server.registry().catalog("warehouse"), TableIdentifier.parse("events.late"),
          TableDefinition.builder("id bigint not null, page string").build());
      // No broker anywhere: ingestion still acknowledges (WAL only).
      ingest(server, allocator, table, 0, 4);
      Thread.sleep(2 * ReconcileScheduler.RETRY.toMillis());
      try (BrokerProcess broker = BrokerProcess.start(config("127.0.0.1:0"));
          WorkerProcess worker = WorkerProcess.start(config("127.0.0.1:0"), 1)) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline && table.currentSnapshot() == null) {
          Thread.sleep(100);
          table.refresh();
        }
        assertThat(table.currentSnapshot()).as("the server asked again once a broker was there").isNotNull();
        assertThat(table.currentSnapshot().summary()).containsEntry("added-records", "4");
      }
    }
  }

  @Test
  void workersMaintainTablesAfterTheirCommits() throws Exception {
    ServerConfig everyCommit = config("127.0.0.1:0").with(ConfigKey.MAINTENANCE_INTERVAL, "0s");
    try (BrokerProcess broker = BrokerProcess.start(config("127.0.0.1:0"));
        EngineServer server = EngineServer.start(config("127.0.0.1:0"), Role.SERVER);
        WorkerProcess worker = WorkerProcess.start(everyCommit, 2);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", io.storageengine.catalog.CatalogConfig.embedded());
      Catalog catalog = server.registry().catalog("warehouse");
      Table table = Tables.create(catalog, TableIdentifier.parse("events.views"),
          TableDefinition.builder("id bigint not null, page string").build());
      // Compact as soon as two small files exist, so a few commits are enough.
      table.updateProperties().set(MaintenancePolicy.MIN_INPUT_FILES, "2").commit();
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      boolean compacted = false;
      int ingested = 0;
      for (int round = 0; !compacted && System.nanoTime() < deadline; round++) {
        ingest(server, allocator, table, round * 10L, 3);
        ingested += 3;
        for (int i = 0; i < 20 && !compacted; i++) {
          Thread.sleep(100);
          table.refresh();
          compacted = StreamSupport.stream(table.snapshots().spliterator(), false)
              .anyMatch(s -> DataOperations.REPLACE.equals(s.operation()));
        }
      }
      assertThat(compacted).as("a worker ran a maintenance task that compacted the table").isTrue();
      // Maintenance never changes what the table holds: every ingested row, once, after the
      // worker published the rest of the WAL.
      long expected = ingested;
      long rows = 0;
      while (System.nanoTime() < deadline) {
        table.refresh();
        try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
          rows = StreamSupport.stream(records.spliterator(), false).count();
        }
        if (rows == expected) {
          break;
        }
        Thread.sleep(200);
      }
      assertThat(rows).isEqualTo(expected);
    }
  }

  @Test
  void slicesOfOneTableAreBrokerTasksOfTheirOwnRunByTwoWorkers() throws Exception {
    try (BrokerProcess broker = BrokerProcess.start(config("127.0.0.1:0"));
        EngineServer server = EngineServer.start(config("127.0.0.1:0"), Role.SERVER);
        WorkerProcess first = WorkerProcess.start(config("127.0.0.1:0"), 1);
        WorkerProcess second = WorkerProcess.start(config("127.0.0.1:0"), 1);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", io.storageengine.catalog.CatalogConfig.embedded());
      Catalog catalog = server.registry().catalog("warehouse");
      Table table = Tables.create(catalog, TableIdentifier.parse("events.users"),
          TableDefinition.builder("id bigint not null, page string").mode(TableDefinition.Mode.ENTITY)
              .primaryKey(List.of("id")).property(TableProperties.SLICE_COUNT, "4").build());
      ingest(server, allocator, table, 0, 300);
      ingest(server, allocator, table, 200, 300); // 100 updates of existing keys
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      java.util.Map<Integer, Long> marks = java.util.Map.of();
      while (System.nanoTime() < deadline) {
        table.refresh();
        marks = io.storageengine.catalog.TableSlices.marks(table, table.currentSnapshot());
        if (marks.size() == 4 && marks.values().stream().allMatch(m -> m == 2)) {
          break;
        }
        Thread.sleep(200);
      }
      assertThat(marks).as("every slice reconciled both segments").containsOnlyKeys(0, 1, 2, 3)
          .allSatisfy((slice, mark) -> assertThat(mark).isEqualTo(2));
      assertThat(table.currentSnapshot().summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ, "2");
      java.util.Set<Long> ids = new java.util.HashSet<>();
      long rows = 0;
      try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
        for (Record r : it) {
          ids.add((Long) r.getField("id"));
          rows++;
        }
      }
      assertThat(rows).as("no key twice").isEqualTo(500);
      assertThat(ids).hasSize(500);
      long sliceCommits = StreamSupport.stream(table.snapshots().spliterator(), false)
          .filter(s -> s.summary().keySet().stream().anyMatch(k -> k.startsWith("se.wal.seq.")))
          .count();
      assertThat(sliceCommits).as("one commit per slice and WAL range at least").isGreaterThanOrEqualTo(4);
    }
  }

  @Test
  void workersSplitSlicesDuringTheLoadWithoutLosingOrDuplicatingARow() throws Exception {
    ServerConfig everyCommit = config("127.0.0.1:0").with(ConfigKey.MAINTENANCE_INTERVAL, "0s");
    try (BrokerProcess broker = BrokerProcess.start(config("127.0.0.1:0"));
        EngineServer server = EngineServer.start(config("127.0.0.1:0"), Role.SERVER);
        WorkerProcess first = WorkerProcess.start(everyCommit, 1);
        WorkerProcess second = WorkerProcess.start(everyCommit, 1);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", io.storageengine.catalog.CatalogConfig.embedded());
      Catalog catalog = server.registry().catalog("warehouse");
      // Split a slice above 80 rows: a few rounds of the load split both slices, maybe more.
      Table table = Tables.create(catalog, TableIdentifier.parse("events.people"),
          TableDefinition.builder("id bigint not null, page string").mode(TableDefinition.Mode.ENTITY)
              .primaryKey(List.of("id")).property(TableProperties.SLICE_COUNT, "2")
              .property(TableProperties.SLICE_TARGET_ROWS, "40").build());
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      int rounds = 0;
      boolean split = false;
      while ((!split || rounds < 6) && System.nanoTime() < deadline) {
        ingest(server, allocator, table, rounds * 50L, 100); // 50 new keys, 50 updates
        rounds++;
        Thread.sleep(300);
        table.refresh();
        split = io.storageengine.catalog.TableSlices.marks(table, table.currentSnapshot()).keySet().stream()
            .anyMatch(id -> id >= 2);
      }
      assertThat(split).as("a worker's maintenance split a slice during the load").isTrue();
      long keys = (rounds - 1) * 50L + 100;
      long segments = rounds;
      long least = 0;
      long rows = -1;
      java.util.Set<Long> ids = new java.util.HashSet<>();
      while (System.nanoTime() < deadline) {
        table.refresh();
        least = io.storageengine.catalog.TableSlices.marks(table, table.currentSnapshot()).values().stream()
            .mapToLong(Long::longValue).min().orElse(0);
        if (least >= segments) {
          ids.clear();
          rows = 0;
          try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
            for (Record r : it) {
              ids.add((Long) r.getField("id"));
              rows++;
            }
          }
          if (rows == keys) {
            break;
          }
        }
        Thread.sleep(200);
      }
      assertThat(least).as("every slice reconciled every segment").isEqualTo(segments);
      assertThat(rows).as("no key lost or twice").isEqualTo(keys);
      assertThat(ids).hasSize((int) keys);
    }
  }

  private static void ingest(EngineServer server, BufferAllocator allocator, Table table, long firstId, int rows)
      throws Exception {
    String[] name = table.name().split("\\.");
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("warehouse", List.of(name[name.length - 2]), name[name.length - 1],
            WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < rows; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, firstId + i);
        ((VarCharVector) root.getVector(1)).setSafe(i, ("/p" + i).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      stream.send(root).get();
      stream.finish();
    }
  }
}

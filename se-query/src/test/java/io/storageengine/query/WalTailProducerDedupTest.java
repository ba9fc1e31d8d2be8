package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WAL tail of an append table whose segments carry an idempotent producer's resent batches:
 * each batch counted once, and {@code producers.json} read once per query whatever the tail's
 * length (one de-duplication pass, not one per segment); an entity table's next fold layer
 * resumes the pass where the layer before left it.
 */
class WalTailProducerDedupTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  @TempDir Path dir;

  @Test
  void resentBatchesAreCountedOnceWithOneReadOfProducersJsonPerQuery() throws Exception {
    tail(false, WalTail.MAX_KEPT_BYTES);
  }

  /** An entity table's next fold layer resumes the dedup pass of the layer before it. */
  @Test
  void anEntityTailsNextLayerReadsNoProducersJson() throws Exception {
    tail(true, WalTail.MAX_KEPT_BYTES);
  }

  /**
   * A tail longer than a query keeps from finding its end (gigabytes after a stalled
   * reconciliation) is read again segment by segment as it is folded or staged: the same rows.
   */
  @Test
  void segmentsAQueryDoesNotKeepAreReadAgainWithTheSameRows() throws Exception {
    tail(false, 0);
    tail(true, 0);
  }

  private void tail(boolean entity, long keptBytes) throws Exception {
    Path dir = Files.createTempDirectory(this.dir, "tail");
    TestWarehouse warehouse = new TestWarehouse();
    Schema schema = entity ? new Schema(SCHEMA.columns(), Set.of(1)) : SCHEMA;
    Table table = TestWarehouse.createTable(warehouse.localCatalog("t", dir.resolve("t")), "n", "events", schema,
        PartitionSpec.unpartitioned());
    if (entity) {
      table.updateProperties().set(TableProperties.MODE, "entity").commit();
    }
    try (BufferAllocator allocator = new RootAllocator();
        DuckRuntime duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("local")),
            DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
        FaultInjectingObjectStore store = new FaultInjectingObjectStore(
            new FsObjectStore(Files.createDirectories(dir.resolve("cluster"))))) {
      ObjectStoreWal wal = new ObjectStoreWal(store, "test");
      TableWal tableWal = new TableWal("t", table.uuid());
      wal.catchUpProducerWindows(tableWal, null, Duration.ofDays(7));
      long now = System.currentTimeMillis();
      int batches = 30;
      for (int s = 0; s < batches; s++) {
        // Batch s, and a resend of batch s - 1 (a duplicate the tail must skip).
        List<WalFrame> frames = new ArrayList<>();
        if (s > 0) {
          frames.add(frame(allocator, 10L * (s - 1), new ProducerStamp("p", s - 1, now)));
        }
        frames.add(frame(allocator, 10L * s, new ProducerStamp("p", s, now)));
        wal.append(tableWal, frames);
      }
      AtomicLong producerReads = new AtomicLong();
      store.before(FaultInjectingObjectStore.Operation.GET, key -> key.equals(tableWal.producersKey()),
          (op, key) -> producerReads.incrementAndGet());
      AtomicLong segmentReads = new AtomicLong();
      store.before(FaultInjectingObjectStore.Operation.GET, key -> key.contains("/wal/"),
          (op, key) -> segmentReads.incrementAndGet());
      ReconcileOptions options = ReconcileOptions.defaults().withDuckdbThreads(1);
      try (QueryFlightSqlProducer producer = new QueryFlightSqlProducer(allocator, warehouse, duckdb,
          QueryConfig.defaults().withThreads(1).withTailWarmInterval(java.time.Duration.ZERO), wal,
          new WalTailRows(duckdb, allocator, store, TombstoneCache.create(), options))) {
        producer.engine().tail().keptBytes(keptBytes);
        assertThat(count(producer, allocator)).as("each of %d batches of 2 rows once", batches).isEqualTo(2L * batches);
        assertThat(producerReads).as("producers.json, for a tail of %d segments", batches).hasValue(1);
        assertThat(segmentReads).as("each segment read %s, and the first missing one", keptBytes == 0
            ? "twice: to find the tail's end, and to read its rows" : "once")
            .hasValue((keptBytes == 0 ? 2L * batches : batches) + 1);

        producerReads.set(0);
        for (int s = batches; s < batches + 3; s++) {
          wal.append(tableWal, List.of(frame(allocator, 10L * (s - 1), new ProducerStamp("p", s - 1, now)),
              frame(allocator, 10L * s, new ProducerStamp("p", s, now))));
        }
        assertThat(count(producer, allocator)).isEqualTo(2L * (batches + 3));
        if (entity) {
          assertThat(producerReads).as("the 3 new segments: a new layer, resuming the pass").hasValue(0);
        } else {
          assertThat(producerReads).as("the 3 new segments: one pass").hasValue(1);
        }
      }
    }
  }

  private static long count(QueryFlightSqlProducer producer, BufferAllocator allocator) throws Exception {
    try (PreparedQuery query = producer.engine().prepare("t", "SELECT count(DISTINCT id), count(*) FROM n.events",
        Map.of(), QueryParameters.NONE, ReadMode.LATEST)) {
      try (ArrowReader reader = query.execute(allocator, 1024)) {
        assertThat(reader.loadNextBatch()).isTrue();
        long distinct = ((BigIntVector) reader.getVectorSchemaRoot().getVector(0)).get(0);
        long all = ((BigIntVector) reader.getVectorSchemaRoot().getVector(1)).get(0);
        assertThat(all).as("no row twice").isEqualTo(distinct);
        return all;
      }
    }
  }

  /** A frame of rows {@code firstId} and {@code firstId + 1}, as ingestion writes it. */
  private static WalFrame frame(BufferAllocator allocator, long firstId, ProducerStamp stamp) throws Exception {
    return frame(allocator, firstId, "", stamp);
  }

  /**
   * A frame upserting rows {@code firstId} and {@code firstId + 1}, named {@code n<id><suffix>},
   * as ingestion writes it; {@code stamp} null: not idempotent.
   */
  static WalFrame frame(BufferAllocator allocator, long firstId, String suffix, ProducerStamp stamp)
      throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(SCHEMA), allocator)) {
      root.allocateNew();
      for (int i = 0; i < 2; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, firstId + i);
        ((VarCharVector) root.getVector(1)).setSafe(i, ("n" + (firstId + i) + suffix)
            .getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(2);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      return new WalFrame(WalOperation.UPSERT, 0, new long[] {1}, 2, out.toByteArray(), stamp);
    }
  }
}

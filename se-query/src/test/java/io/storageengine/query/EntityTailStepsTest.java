package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An entity table's long WAL tail is folded in steps of bounded size, a layer each, with the rows
 * one fold of the whole tail gives; a query that stops partway (its timeout, its client, a failed
 * read) leaves the steps it finished to the next query, which folds only the rest.
 */
class EntityTailStepsTest {
  static final int SEGMENTS = 30;
  static final int KEYS = 20;

  @TempDir Path dir;

  @Test
  void aLongTailIsFoldedInStepsWithTheRowsOfOneFold() throws Exception {
    Map<Long, String> oneFold;
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "one"))) {
      oneFold = tail.rows();
      assertThat(tail.layerEnds()).as("the default step holds this whole tail").containsExactly((long) SEGMENTS);
    }
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "steps"))) {
      tail.folds().layerBytes(tail.segmentBytes * 4);
      assertThat(tail.rows()).as("every key's last upsert").isEqualTo(expected()).isEqualTo(oneFold);
      List<Long> ends = tail.layerEnds();
      assertThat(ends).as("steps of 4 segments").hasSize(SEGMENTS / 4 + 1).isSorted().doesNotHaveDuplicates()
          .endsWith((long) SEGMENTS);
      assertThat(ends.get(0)).isEqualTo(4L);

    }
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "capped"))) {
      // Steps of one segment: the last layer a fold may have takes the rest.
      tail.folds().layerBytes(1);
      assertThat(tail.rows()).isEqualTo(expected());
      List<Long> ends = tail.layerEnds();
      assertThat(ends).hasSize(EntityTailFolds.MAX_LAYERS).endsWith((long) SEGMENTS);
      assertThat(ends.get(EntityTailFolds.MAX_LAYERS - 2)).isEqualTo(EntityTailFolds.MAX_LAYERS - 1L);

      // A new segment cannot be a layer of its own any more: the tail is folded again.
      tail.append(SEGMENTS);
      assertThat(tail.rows()).isEqualTo(expected(SEGMENTS + 1));
      assertThat(tail.layerEnds()).hasSize(EntityTailFolds.MAX_LAYERS).endsWith(SEGMENTS + 1L);
      assertThat(tail.folds().growingTables()).as("no table's turn to grow outlives its queries").isZero();
    }
  }

  @Test
  void aFoldStoppedPartwayLeavesItsStepsToTheNextQuery() throws Exception {
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "stopped"))) {
      tail.folds().layerBytes(tail.segmentBytes * 4);
      tail.tail().keptBytes(0); // the fold reads each segment again after finding the tail's end
      TableWal wal = new TableWal("t", tail.table.uuid());
      String failing = wal.segmentKey(22);
      AtomicLong reads = new AtomicLong();
      FaultInjectingObjectStore.Registration failure = tail.store.before(FaultInjectingObjectStore.Operation.GET,
          failing::equals, (op, key) -> {
            if (reads.incrementAndGet() == 2) {
              throw new IOException("segment 22 cannot be read");
            }
          });
      assertThatThrownBy(tail::rows).hasMessageContaining("00000000000000000022.seg");
      failure.close();
      assertThat(tail.folds().growingTables()).as("a failed fold leaves its turn too").isZero();
      List<Long> kept = tail.layerEnds();
      assertThat(kept).as("the steps finished before segment 22").containsExactly(4L, 8L, 12L, 16L, 20L);

      AtomicLong segmentReads = new AtomicLong();
      tail.store.before(FaultInjectingObjectStore.Operation.GET, key -> key.contains("/wal/") && key.endsWith(".seg"),
          (op, key) -> segmentReads.incrementAndGet());
      assertThat(tail.rows()).isEqualTo(expected());
      assertThat(tail.layerEnds()).as("the kept steps, then the rest").startsWith(4L, 8L, 12L, 16L, 20L)
          .endsWith((long) SEGMENTS);
      assertThat(segmentReads).as("the first missing segment (the end is known from the query before) and 21..30"
          + " to fold them: none of the kept steps again").hasValue(1 + (SEGMENTS - 20));
    }
  }

  /**
   * A query whose WHERE keeps one key folds the tail for that key alone and keeps no fold; a kept
   * fold that reaches the tail's end serves it, and it never grows one. The same keys read the
   * same on one DuckDB thread (a small tail's) and on the passes' threads.
   */
  @Test
  void aPointQueryFoldsTheTailForItsKeyAloneAndKeepsNothing() throws Exception {
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "point"))) {
      Map<Long, String> all = expected();
      for (long oneThreadBytes : List.of(EntityTailFolds.ONE_THREAD_KEY_FOLD_BYTES, -1L)) {
        tail.folds().oneThreadKeyFoldBytes(oneThreadBytes);
        for (long id : List.of(0L, 7L, 19L, 1_000L)) {
          assertThat(tail.rows(" WHERE id = " + id)).as("key %d, one thread up to %d bytes", id, oneThreadBytes)
              .isEqualTo(all.containsKey(id) ? Map.of(id, all.get(id)) : Map.of());
        }
        assertThat(tail.rows(" WHERE id IN (2, 5, 1000)")).isEqualTo(Map.of(2L, all.get(2L), 5L, all.get(5L)));
      }
      tail.folds().oneThreadKeyFoldBytes(EntityTailFolds.ONE_THREAD_KEY_FOLD_BYTES);
      assertThat(tail.layerEnds()).as("point queries keep no fold").isEmpty();
      AtomicLong segmentReads = new AtomicLong();
      tail.store.before(FaultInjectingObjectStore.Operation.GET, key -> key.contains("/wal/") && key.endsWith(".seg"),
          (op, key) -> segmentReads.incrementAndGet());
      assertThat(tail.rows(" WHERE id = 3")).isEqualTo(Map.of(3L, all.get(3L)));
      assertThat(segmentReads).as("the probe for the tail's end only: its segments are kept from the queries before")
          .hasValue(1);
      assertThat(tail.tail().recentSegments()[0]).isEqualTo(SEGMENTS);
      assertThat(tail.rows()).isEqualTo(all);
      assertThat(tail.layerEnds()).endsWith((long) SEGMENTS);

      tail.append(SEGMENTS);
      long id = firstId(SEGMENTS);
      Map<Long, String> one = Map.of(id, "n" + id + "-" + SEGMENTS);
      assertThat(tail.rows(" WHERE id = " + id)).isEqualTo(one);
      assertThat(tail.layerEnds()).as("the kept fold is not grown by a point query").endsWith((long) SEGMENTS);
      // Not a key equality: the whole tail is folded (the kept fold grows).
      assertThat(tail.rows(" WHERE id >= 0")).isEqualTo(expected(SEGMENTS + 1));
      assertThat(tail.layerEnds()).endsWith(SEGMENTS + 1L);
      assertThat(tail.rows(" WHERE id = " + id + " AND name IS NOT NULL")).as("read from the kept fold").isEqualTo(one);
      assertThat(tail.folds().growingTables()).isZero();

      // A tail longer than a fold for some keys may stage grows the kept fold instead.
      tail.tail().keyFoldBytes(tail.segmentBytes / 2);
      tail.append(SEGMENTS + 1);
      long next = firstId(SEGMENTS + 1);
      assertThat(tail.rows(" WHERE id = " + next)).isEqualTo(Map.of(next, "n" + next + "-" + (SEGMENTS + 1)));
      assertThat(tail.layerEnds()).as("the kept fold grown").endsWith(SEGMENTS + 2L);
    }
  }

  /**
   * Once a query read the table whole, a segment acknowledged after it is folded in the
   * background: the next query finds the fold at the tail's end and reads no segment but the
   * probe for the tail's end, with the rows a fold of its own would give. Point queries warm
   * nothing.
   */
  @Test
  void theFoldOfATableReadWholeGrowsInTheBackground() throws Exception {
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "warm"), Duration.ofMillis(20))) {
      TailWarmer warmer = tail.producer.engine().warmer();
      long id = firstId(3);
      assertThat(tail.rows(" WHERE id = " + id)).containsOnlyKeys(id);
      Thread.sleep(100);
      assertThat(warmer.tables()).as("a point query warms nothing").isEmpty();
      assertThat(tail.layerEnds()).isEmpty();

      assertThat(tail.rows()).isEqualTo(expected());
      assertThat(warmer.tables()).hasSize(1);
      long warmedBefore = warmer.warmed();
      for (int s = SEGMENTS; s < SEGMENTS + 3; s++) {
        tail.append(s);
        int through = s + 1;
        await(() -> !tail.layerEnds().isEmpty() && tail.layerEnds().get(tail.layerEnds().size() - 1) == through,
            "the fold grown through segment " + through + " with no query");
      }
      assertThat(warmer.warmed()).as("grown by the warmer").isGreaterThanOrEqualTo(warmedBefore + 1);
      TableWal wal = new TableWal("t", tail.table.uuid());
      Set<String> folded = Set.of(wal.segmentKey(SEGMENTS + 1), wal.segmentKey(SEGMENTS + 2),
          wal.segmentKey(SEGMENTS + 3));
      AtomicLong segmentReads = new AtomicLong();
      tail.store.before(FaultInjectingObjectStore.Operation.GET, folded::contains,
          (op, key) -> segmentReads.incrementAndGet());
      assertThat(tail.rows()).as("the rows a fold of its own gives").isEqualTo(expected(SEGMENTS + 3));
      assertThat(segmentReads).as("the newest segments were folded before the query: it reads none of them")
          .hasValue(0);
      assertThat(tail.folds().growingTables()).isZero();
    }
    try (Tail tail = new Tail(Files.createTempDirectory(dir, "cold"))) {
      assertThat(tail.producer.engine().warmer()).as("interval 0: no warmer").isNull();
      assertThat(tail.rows()).isEqualTo(expected());
      tail.append(SEGMENTS);
      Thread.sleep(200);
      assertThat(tail.layerEnds()).as("nothing folds without a query").endsWith((long) SEGMENTS);
      assertThat(tail.rows()).isEqualTo(expected(SEGMENTS + 1));
    }
  }

  private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  /** Every key's name after segments 0 .. {@code SEGMENTS - 1}. */
  private static Map<Long, String> expected() {
    return expected(SEGMENTS);
  }

  private static Map<Long, String> expected(int segments) {
    Map<Long, String> rows = new TreeMap<>();
    for (int s = 0; s < segments; s++) {
      long first = firstId(s);
      rows.put(first, "n" + first + "-" + s);
      rows.put(first + 1, "n" + (first + 1) + "-" + s);
    }
    return rows;
  }

  /** Segment {@code s} upserts keys {@code firstId(s)} and the next: every key three times over 30 segments. */
  private static long firstId(int s) {
    return (2L * s) % KEYS;
  }

  /** An entity table with {@value #SEGMENTS} segments in its WAL and a query engine over it. */
  private static final class Tail implements AutoCloseable {
    final Table table;
    final BufferAllocator allocator = new RootAllocator();
    final DuckRuntime duckdb;
    final FaultInjectingObjectStore store;
    final ObjectStoreWal wal;
    final QueryFlightSqlProducer producer;
    final long segmentBytes;

    /** A table whose queries fold the tail themselves (no warming: the tests count what queries read). */
    Tail(Path dir) throws Exception {
      this(dir, Duration.ZERO);
    }

    /** As above, the tail folds of tables read whole warmed every {@code warmInterval} (zero: never). */
    Tail(Path dir, Duration warmInterval) throws Exception {
      TestWarehouse warehouse = new TestWarehouse();
      Schema schema = new Schema(WalTailProducerDedupTest.SCHEMA.columns(), Set.of(1));
      table = TestWarehouse.createTable(warehouse.localCatalog("t", dir.resolve("t")), "n", "events", schema,
          PartitionSpec.unpartitioned());
      table.updateProperties().set(TableProperties.MODE, "entity").commit();
      duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("local")), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
      store = new FaultInjectingObjectStore(new FsObjectStore(Files.createDirectories(dir.resolve("cluster"))));
      wal = new ObjectStoreWal(store, "test");
      for (int s = 0; s < SEGMENTS; s++) {
        append(s);
      }
      segmentBytes = wal.read(new TableWal("t", table.uuid()), 1).orElseThrow().frameBytes();
      producer = new QueryFlightSqlProducer(allocator, warehouse, duckdb, QueryConfig.defaults().withThreads(1).withTailWarmInterval(warmInterval), wal,
          new WalTailRows(duckdb, allocator, store, TombstoneCache.create(),
              ReconcileOptions.defaults().withDuckdbThreads(1)));
    }

    void append(int s) throws Exception {
      wal.append(new TableWal("t", table.uuid()),
          List.of(WalTailProducerDedupTest.frame(allocator, firstId(s), "-" + s, null)));
    }

    WalTail tail() {
      return producer.engine().tail();
    }

    EntityTailFolds folds() {
      return tail().entityFolds();
    }

    List<Long> layerEnds() {
      return folds().layerEnds("t", table.uuid());
    }

    /** Every row of the table, by id, as a query reads it. */
    Map<Long, String> rows() throws Exception {
      return rows("");
    }

    /** The rows of the table a query with {@code where} (a WHERE clause or nothing) reads, by id. */
    Map<Long, String> rows(String where) throws Exception {
      Map<Long, String> rows = new TreeMap<>();
      try (PreparedQuery query = producer.engine().prepare("t", "SELECT id, name FROM n.events" + where, Map.of(),
          QueryParameters.NONE, ReadMode.LATEST);
          ArrowReader reader = query.execute(allocator, 1024)) {
        while (reader.loadNextBatch()) {
          BigIntVector ids = (BigIntVector) reader.getVectorSchemaRoot().getVector(0);
          VarCharVector names = (VarCharVector) reader.getVectorSchemaRoot().getVector(1);
          for (int i = 0; i < reader.getVectorSchemaRoot().getRowCount(); i++) {
            assertThat(rows.put(ids.get(i), new String(names.get(i)))).as("id %d once", ids.get(i)).isNull();
          }
        }
      }
      return rows;
    }

    @Override
    public void close() throws Exception {
      producer.close();
      store.close();
      duckdb.close();
      allocator.close();
    }
  }
}

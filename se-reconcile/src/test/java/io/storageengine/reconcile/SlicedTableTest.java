package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSlices;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sliced entity tables (ARCHITECTURE.md 9.1): passes of different slices racing on one table
 * both land, passes of one slice racing never apply a range twice, a crash between a slice's
 * commit and {@code published_seq} is not re-applied, and the WAL tail of a table whose slices
 * are at different progress folds exactly the rows not reconciled yet.
 */
class SlicedTableTest {
  private static final List<String> NON_KEY = EntityModelTest.NON_KEY;

  @TempDir Path dir;

  @Test
  void passesOfTwoSlicesRacingBothLandWithoutRestart() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = sliced(env, 2);
      TableWal tw = env.walOf(table, "sliced");
      EntityModel model = new EntityModel(NON_KEY);
      List<EntityModel.Op> all = new ArrayList<>();
      all.addAll(append(env, tw, upserts(0, 300, 1)));
      all.addAll(append(env, tw, upserts(100, 400, 2)));
      model.applyBatch(all);

      CyclicBarrier bothMaterialized = new CyclicBarrier(2);
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          await(bothMaterialized);
        }
      };
      Reconciler reconciler = env.reconciler(TestEnvironment.options(), hooks);
      List<ReconcileResult> results = concurrently(() -> reconciler.reconcileSlice(tw, 0),
          () -> reconciler.reconcileSlice(tw, 1));

      for (ReconcileResult r : results) {
        assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        assertThat(r.attempts()).as("an Iceberg retry on the other slice's commit, not a restart").isEqualTo(1);
        assertThat(r.toSeq()).isEqualTo(2);
      }
      assertThat(results.get(0).walRows() + results.get(1).walRows()).isEqualTo(all.size());
      EntityModelTest.assertMatches(table, model, "after the race");
      assertSlicesConsistent(table, 2);
      table.refresh();
      assertThat(table.currentSnapshot().summary()).containsEntry("se.wal.seq.0", "2")
          .containsEntry("se.wal.seq.1", "2").containsEntry(TableProperties.SUMMARY_WAL_SEQ, "2");
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(2);

      // A second race with updates and deletes of existing keys in both slices.
      List<EntityModel.Op> next = new ArrayList<>(append(env, tw, upserts(0, 200, 3)));
      next.addAll(append(env, tw, deletes(150, 250, 4)));
      model.applyBatch(next);
      results = concurrently(() -> reconciler.reconcileSlice(tw, 0), () -> reconciler.reconcileSlice(tw, 1));
      assertThat(results).allSatisfy(r -> assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED));
      EntityModelTest.assertMatches(table, model, "after the second race");
      assertSlicesConsistent(table, 2);
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(4);
    }
  }

  @Test
  void slicePassesReportRowsAndProgressPerSlice() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("metered", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver", TableProperties.SLICE_COUNT, "2"));
      TableWal tw = env.walOf(table, "metered");
      List<EntityModel.Op> ops = append(env, tw, upserts(0, 300, 1));
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      ReconcileResult first = reconciler.reconcileSlice(tw, 0);
      ReconcileResult second = reconciler.reconcileSlice(tw, 1);
      String metrics = reconciler.telemetry().metrics().scrape();
      String labels = "catalog=\"" + TestEnvironment.CATALOG + "\",slice=\"%d\",table=\"db.metered\"";
      assertThat(metrics)
          .contains("se_reconcile_slice_rows_total{" + String.format(labels, 0) + "} " + (double) first.walRows())
          .contains("se_reconcile_slice_rows_total{" + String.format(labels, 1) + "} " + (double) second.walRows())
          .contains("se_reconcile_slice_wal_seq{" + String.format(labels, 0) + "} 1.0")
          .contains("se_reconcile_slice_wal_seq{" + String.format(labels, 1) + "} 1.0");
      assertThat(first.walRows() + second.walRows()).isEqualTo(ops.size());
      assertThat(first.walRows()).isPositive();
      assertThat(second.walRows()).isPositive();
    }
  }

  @Test
  void passesOfOneSliceRacingApplyTheRangeOnce() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = sliced(env, 2);
      TableWal tw = env.walOf(table, "sliced");
      EntityModel model = new EntityModel(NON_KEY);
      model.applyBatch(append(env, tw, upserts(0, 200, 1)));

      CyclicBarrier bothMaterialized = new CyclicBarrier(2);
      AtomicBoolean first = new AtomicBoolean(true);
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          if (first.get()) {
            await(bothMaterialized);
          }
        }
      };
      Reconciler reconciler = env.reconciler(TestEnvironment.options(), hooks);
      List<ReconcileResult> results = concurrently(() -> reconciler.reconcileSlice(tw, 0),
          () -> reconciler.reconcileSlice(tw, 0));
      first.set(false);
      assertThat(results).extracting(ReconcileResult::outcome).containsExactlyInAnyOrder(
          ReconcileResult.Outcome.COMMITTED, ReconcileResult.Outcome.UP_TO_DATE);
      assertThat(env.reconciler(TestEnvironment.options()).reconcileSlice(tw, 1).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      EntityModelTest.assertMatches(table, model, "after the same-slice race");
      assertSlicesConsistent(table, 2);
    }
  }

  @Test
  void crashBetweenSliceCommitAndPublishIsNotReapplied() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = sliced(env, 2);
      TableWal tw = env.walOf(table, "sliced");
      EntityModel model = new EntityModel(NON_KEY);
      model.applyBatch(append(env, tw, upserts(0, 200, 1)));
      ReconcileHooks crash = new ReconcileHooks() {
        @Override
        public void afterCommit(TableWal table, long fromSeq, long toSeq) {
          throw new IllegalStateException("crash after the commit of slice 0");
        }
      };
      assertThatThrownBy(() -> env.reconciler(TestEnvironment.options(), crash).reconcileSlice(tw, 0))
          .hasMessageContaining("crash");
      assertThat(env.wal.state(tw).publishedSeq()).isZero();
      table.refresh();
      long snapshots = countSnapshots(table);

      ReconcileResult whole = env.reconciler(TestEnvironment.options()).reconcile(tw);
      assertThat(whole.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(whole.message()).isEqualTo("1 of 2 slices committed");
      table.refresh();
      assertThat(countSnapshots(table)).as("only slice 1 committed").isEqualTo(snapshots + 1);
      EntityModelTest.assertMatches(table, model, "after the crash and the next pass");
      assertSlicesConsistent(table, 2);
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(1);
    }
  }

  @Test
  void walTailOfSlicesAtDifferentProgressFoldsOnlyUnreconciledRows() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = sliced(env, 2);
      TableWal tw = env.walOf(table, "sliced");
      EntityModel model = new EntityModel(NON_KEY);
      model.applyBatch(append(env, tw, upserts(0, 100, 1)));
      model.applyBatch(append(env, tw, deletes(0, 10, 2)));
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      List<EntityModel.Op> tail = new ArrayList<>(append(env, tw, upserts(50, 150, 3)));
      tail.addAll(append(env, tw, upserts(0, 20, 1))); // below the tombstones of 0..9: ignored
      tail.addAll(append(env, tw, deletes(90, 95, 4)));
      Map<Long, Map<String, Object>> before = copy(model.rows);
      model.applyBatch(tail);
      // Slice 0 reconciles the tail; slice 1 stays at seq 2.
      assertThat(env.reconciler(TestEnvironment.options()).reconcileSlice(tw, 0).toSeq()).isEqualTo(5);
      table.refresh();
      Snapshot snapshot = table.currentSnapshot();
      assertThat(WalHighWaterMark.of(table)).isEqualTo(2);

      List<WalSegment> segments = new ArrayList<>();
      for (long seq = 3; seq <= 5; seq++) {
        segments.add(env.wal.read(tw, seq).orElseThrow());
      }
      WalTailRows rows = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options());
      Path target = dir.resolve("tail.parquet");
      WalTailRows.EntityLayer folded = rows.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 2,
          List.of(), 0, segments, target, rows.newEntityState()).orElseThrow();

      // The tail holds the final rows of slice 1's touched keys only; slice 0's are in the snapshot.
      List<TableSlices.Slice> slices = TableSlices.uniform(2);
      Map<Long, Map<String, Object>> expected = new TreeMap<>();
      long replaced = 0;
      for (EntityModel.Op op : tail) {
        if (TableSlices.owner(slices, TableSlices.hash(Long.toString(op.key()))).id() != 1) {
          continue;
        }
        if (model.rows.containsKey(op.key())) {
          expected.put(op.key(), model.rows.get(op.key()));
        }
      }
      for (Long key : before.keySet()) {
        boolean touched = tail.stream().anyMatch(op -> op.key() == key);
        boolean inSlice1 = TableSlices.owner(slices, TableSlices.hash(Long.toString(key))).id() == 1;
        if (touched && inSlice1) {
          replaced++;
        }
      }
      Map<Long, Map<String, Object>> actual = new TreeMap<>();
      for (Record r : readParquet(table, target)) {
        Map<String, Object> values = new HashMap<>();
        values.put("ver", r.getField("ver"));
        for (String c : NON_KEY) {
          values.put(c, r.getField(c));
        }
        assertThat(actual.put((Long) r.getField("id"), values)).as("duplicate key in the tail").isNull();
      }
      assertThat(actual).isEqualTo(expected);
      assertThat(folded.rows()).isEqualTo(expected.size());
      assertThat(folded.replacedPositions().values().stream().mapToLong(p -> p.length).sum())
          .as("positions of slice 1's snapshot rows the tail replaces or deletes").isEqualTo(replaced);

      // And the tail is what reconciling slice 1 yields.
      env.reconciler(TestEnvironment.options()).reconcileSlice(tw, 1);
      EntityModelTest.assertMatches(table, model, "after slice 1 reconciled the tail");
      assertSlicesConsistent(table, 2);
    }
  }

  @Test
  void compactionRewritesEachSliceIntoItsOwnFilesAndCarriesEveryProgress() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("sliced", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver", TableProperties.SLICE_COUNT, "3",
              io.storageengine.reconcile.maintenance.MaintenancePolicy.MIN_INPUT_FILES, "2"));
      TableWal tw = env.walOf(table, "sliced");
      EntityModel model = new EntityModel(NON_KEY);
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int round = 1; round <= 4; round++) {
        model.applyBatch(append(env, tw, upserts(round * 20, round * 20 + 60, round)));
        reconciler.reconcile(tw);
      }
      table.refresh();
      Map<String, String> before = new TreeMap<>(WalMarks.carried(table));
      io.storageengine.reconcile.maintenance.MaintenanceResult result =
          new io.storageengine.reconcile.maintenance.Maintainer(env.catalogs, env.wal, env.store, env.tombstones,
              env.allocator, env.duckdb, TestEnvironment.options(),
              io.storageengine.reconcile.maintenance.MaintenancePolicy.defaults()).maintain(tw);
      assertThat(result.compaction().groups()).isEqualTo(3);
      assertThat(result.compaction().dataFilesAdded()).isEqualTo(3);
      EntityModelTest.assertMatches(table, model, "after compaction");
      assertSlicesConsistent(table, 3);
      table.refresh();
      assertThat(WalMarks.carried(table)).isEqualTo(before).containsEntry("se.wal.seq.2", "4");

      // Passes after the rewrite find the current rows in the rewritten files.
      model.applyBatch(append(env, tw, upserts(0, 200, 9)));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      EntityModelTest.assertMatches(table, model, "after a pass over the compacted slices");
      assertSlicesConsistent(table, 3);
    }
  }

  @Test
  void sliceCountSetAfterUnslicedPassesIsRefused() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("late", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver"));
      TableWal tw = env.walOf(table, "late");
      append(env, tw, upserts(0, 10, 1));
      env.reconciler(TestEnvironment.options()).reconcile(tw);
      table.updateProperties().set(TableProperties.SLICE_COUNT, "2").commit();
      append(env, tw, upserts(0, 10, 2));
      ReconcileResult r = env.reconciler(TestEnvironment.options()).reconcileReportingFailure(tw);
      assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.FAILED);
      assertThat(r.message()).contains("fixed when it is created");
    }
  }

  /**
   * Every data file of {@code table} is named for a slice of {@code count} uniform slices and
   * holds only keys whose slice hash that slice owns; the newest snapshot carries every slice's
   * progress and {@code se.wal.seq} = their least.
   */
  static void assertSlicesConsistent(Table table, int count) {
    assertSlicesConsistent(table, TableSlices.uniform(count));
  }

  /**
   * As {@link #assertSlicesConsistent(Table, int)} for the slices of the table's current
   * snapshot as its slices-meta gives them, which must also list them as active once settled.
   */
  static void assertSlicesConsistent(TestEnvironment env, TableWal tw, Table table) {
    table.refresh();
    SliceMeta.Layout layout = SliceMeta.read(env.store, tw).orElseThrow();
    List<TableSlices.Slice> slices = layout.asOf(TableSlices.marks(table, table.currentSnapshot()));
    assertSlicesConsistent(table, slices);
  }

  /** As {@link #assertSlicesConsistent(Table, int)} for the slices {@code slices}. */
  static void assertSlicesConsistent(Table table, List<TableSlices.Slice> slices) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return;
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        OptionalInt slice = TableSlices.sliceOfFile(task.file().location());
        assertThat(slice).as("slice of %s", task.file().location()).isPresent();
        for (Record r : readParquet(table, task.file().location())) {
          long hash = TableSlices.hash(Long.toString((Long) r.getField("id")));
          assertThat(TableSlices.owner(slices, hash).id())
              .as("key %s in a file of slice %s", r.getField("id"), slice.getAsInt()).isEqualTo(slice.getAsInt());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<Integer, Long> marks = TableSlices.marks(table, current);
    assertThat(marks.keySet()).containsExactlyInAnyOrderElementsOf(slices.stream().map(TableSlices.Slice::id).toList());
    assertThat(WalHighWaterMark.of(table)).isEqualTo(marks.values().stream().mapToLong(Long::longValue).min()
        .orElseThrow());
  }

  private static Table sliced(TestEnvironment env, int slices) {
    return env.createTable("sliced", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
        Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY, TableProperties.VERSION_COLUMN, "ver",
            TableProperties.SLICE_COUNT, Integer.toString(slices)));
  }

  static List<EntityModel.Op> upserts(int from, int to, long version) {
    List<EntityModel.Op> ops = new ArrayList<>();
    for (long k = from; k < to; k++) {
      Map<String, Object> values = new LinkedHashMap<>();
      values.put("a", "v" + version + "-" + k);
      values.put("b", (int) (k % 1000));
      values.put("c", List.of((int) version));
      ops.add(new EntityModel.Op(false, k, version, values));
    }
    return ops;
  }

  static List<EntityModel.Op> deletes(int from, int to, long version) {
    List<EntityModel.Op> ops = new ArrayList<>();
    for (long k = from; k < to; k++) {
      ops.add(new EntityModel.Op(true, k, version, Map.of()));
    }
    return ops;
  }

  /** Appends one segment of one frame; returns the operations. */
  static List<EntityModel.Op> append(TestEnvironment env, TableWal tw, List<EntityModel.Op> ops) {
    boolean delete = ops.get(0).delete();
    env.append(tw, EntityModelTest.frame(env, delete, NON_KEY, ops));
    return ops;
  }

  private static List<Record> readParquet(Table table, Object location) {
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> it = Parquet.read(location instanceof Path p
            ? org.apache.iceberg.Files.localInput(p.toFile()) : table.io().newInputFile((String) location))
        .project(table.schema())
        .createReaderFunc(fs -> GenericParquetReaders.buildReader(table.schema(), fs)).build()) {
      for (Record r : it) {
        rows.add(r.copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  private static Map<Long, Map<String, Object>> copy(Map<Long, Map<String, Object>> rows) {
    Map<Long, Map<String, Object>> copy = new HashMap<>();
    rows.forEach((k, v) -> copy.put(k, new HashMap<>(v)));
    return copy;
  }

  private static long countSnapshots(Table table) {
    long n = 0;
    for (Snapshot s : table.snapshots()) {
      n++;
    }
    return n;
  }

  static void await(CyclicBarrier barrier) {
    try {
      barrier.await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("the other pass did not reach its commit", e);
    }
  }

  @SafeVarargs
  static List<ReconcileResult> concurrently(java.util.concurrent.Callable<ReconcileResult>... passes)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(passes.length);
    try {
      List<Future<ReconcileResult>> futures = new ArrayList<>();
      for (java.util.concurrent.Callable<ReconcileResult> p : passes) {
        futures.add(pool.submit(p));
      }
      List<ReconcileResult> results = new ArrayList<>();
      for (Future<ReconcileResult> f : futures) {
        results.add(f.get(120, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }
}

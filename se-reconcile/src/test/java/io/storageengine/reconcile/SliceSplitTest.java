package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSlices;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Online split and merge of slices ({@link SliceMeta}, {@code maintenance.SliceResizer}): a split
 * keeps every row and its lineage and hands the parent's progress to its children; a crash at
 * every step boundary, with ingestion and passes going on, leaves a consistent table that the
 * next passes finish or roll back; a parent pass racing the split never loses or duplicates a
 * row; merges undo splits.
 */
class SliceSplitTest {
  @TempDir Path dir;

  /** A table, its WAL, the model of every operation appended so far and the next version. */
  private static final class Load {
    final TestEnvironment env;
    final Table table;
    final TableWal tw;
    final EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
    long version = 1;
    long segments;

    Load(TestEnvironment env, int slices, long targetRows) {
      this.env = env;
      this.table = env.createTable("sliced", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver", TableProperties.SLICE_COUNT, Integer.toString(slices),
              TableProperties.SLICE_TARGET_ROWS, Long.toString(targetRows)));
      this.tw = env.walOf(table, "sliced");
    }

    /** Appends upserts of keys {@code [from, to)} and deletes of {@code [delFrom, delTo)}. */
    void ingest(int from, int to, int delFrom, int delTo) {
      long v = version++;
      model.applyBatch(SlicedTableTest.append(env, tw, SlicedTableTest.upserts(from, to, v)));
      segments++;
      if (delTo > delFrom) {
        segments++;
        model.applyBatch(SlicedTableTest.append(env, tw, SlicedTableTest.deletes(delFrom, delTo, v)));
      }
    }

    ReconcileResult reconcile() {
      return env.reconciler(TestEnvironment.options()).reconcile(tw);
    }

    /** Reconciles until nothing is left and checks the table against every operation appended. */
    void drainAndCheck(String context) {
      for (int i = 0; i < 10 && reconcile().outcome() == ReconcileResult.Outcome.COMMITTED; i++) {
        // again, until up to date
      }
      EntityModelTest.assertMatches(table, model, context);
      SlicedTableTest.assertSlicesConsistent(env, tw, table);
    }

    Maintainer maintainer(MaintenanceHooks hooks) {
      return new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb,
          TestEnvironment.options(), MaintenancePolicy.defaults(), hooks);
    }

    SliceMeta.Layout layout() {
      return SliceMeta.read(env.store, tw).orElseThrow();
    }

    Map<Integer, Long> marks() {
      table.refresh();
      return TableSlices.marks(table, table.currentSnapshot());
    }
  }

  @Test
  void splitAboveTwiceTheTargetKeepsEveryRowItsLineageAndTheParentsProgress() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 100, 0, 0);
      load.ingest(50, 150, 140, 150);
      load.drainAndCheck("before the split");
      Map<Long, Long> rowIds = rowIds(load.table);
      long mark = load.marks().get(0);

      MaintenanceResult r = load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      assertThat(r.errors()).isEmpty();
      assertThat(r.sliceChanges()).singleElement().asString().matches("split \\[[01]\\] -> \\[2, 3\\]");
      SliceMeta.Layout layout = load.layout();
      assertThat(layout.pending()).isEmpty();
      assertThat(layout.retired()).hasSize(1);
      int parent = layout.retired().get(0).id();
      assertThat(layout.slices()).extracting(TableSlices.Slice::id)
          .containsExactlyElementsOf(parent == 0 ? List.of(2, 3, 1) : List.of(0, 2, 3));
      assertThat(layout.slice(2).lo()).isEqualTo(layout.retired().get(0).lo());
      assertThat(layout.slice(3).hi()).isEqualTo(layout.retired().get(0).hi());
      assertThat(load.marks()).containsOnlyKeys(1 - parent, 2, 3).containsEntry(2, mark).containsEntry(3, mark);
      EntityModelTest.assertMatches(load.table, load.model, "after the split");
      SlicedTableTest.assertSlicesConsistent(env, load.tw, load.table);
      assertThat(rowIds(load.table)).as("row lineage kept by the rewrite").isEqualTo(rowIds);

      // Further passes split slice 1, then stop: every slice at most twice the target.
      for (int i = 0; i < 6; i++) {
        load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      }
      table(load).refresh();
      for (TableSlices.SliceStats s : TableSlices.stats(load.table, load.table.currentSnapshot(),
          load.layout().slices())) {
        assertThat(s.rows()).as("rows of slice %s", s.slice().id()).isLessThanOrEqualTo(60);
      }
      assertThat(rowIds(load.table)).isEqualTo(rowIds);

      // The children reconcile on from the parent's progress: updates, deletes, new keys.
      load.ingest(0, 200, 10, 40);
      load.drainAndCheck("after passes over the split slices");
      assertThat(env.wal.state(load.tw).publishedSeq()).isEqualTo(load.segments);
      assertThat(env.reconciler(TestEnvironment.options()).slicesOf(load.tw))
          .containsExactlyElementsOf(load.layout().slices().stream().map(TableSlices.Slice::id).toList());
    }
  }

  /** Where the first split attempt crashes. */
  @ParameterizedTest
  @ValueSource(strings = {"afterSliceProposal", "beforeSliceCommit", "afterSliceCommit"})
  void crashAtEveryStepOfASplitLeavesAConsistentTableThatTheNextPassesFinish(String step) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 100, 0, 0);
      load.ingest(50, 150, 140, 150);
      load.drainAndCheck("before the crash");
      AtomicBoolean crashed = new AtomicBoolean();
      MaintenanceHooks crash = new MaintenanceHooks() {
        @Override
        public void afterSliceProposal(Table table, SliceMeta.Change change) {
          crashAt("afterSliceProposal");
        }

        @Override
        public void beforeSliceCommit(Table table, SliceMeta.Change change) {
          // Ingestion goes on while the split rewrites, and other slices' passes commit.
          load.ingest(100, 160, 0, 5);
          assertThat(env.reconciler(TestEnvironment.options()).reconcileSlice(load.tw,
              1 - change.from().get(0)).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
          crashAt("beforeSliceCommit");
        }

        @Override
        public void afterSliceCommit(Table table, SliceMeta.Change change) {
          crashAt("afterSliceCommit");
        }

        private void crashAt(String at) {
          if (at.equals(step) && crashed.compareAndSet(false, true)) {
            throw new IllegalStateException("crash at " + at);
          }
        }
      };
      MaintenanceResult crashedPass = load.maintainer(crash).maintain(load.tw);
      assertThat(crashed).isTrue();
      assertThat(crashedPass.errors()).singleElement().asString().contains("crash at " + step);
      SliceMeta.Layout left = load.layout();
      assertThat(left.pending()).as("the crash left the change pending").isPresent();
      int parent = left.pending().get().from().get(0);
      SlicedTableTest.assertSlicesConsistent(env, load.tw, load.table);
      boolean committed = step.equals("afterSliceCommit");
      assertThat(load.marks().containsKey(parent)).as("parent still in the snapshot").isEqualTo(!committed);

      // Ingestion and passes go on: a pending split holds back its parent's passes only.
      load.ingest(0, 30, 20, 25);
      load.reconcile();
      SlicedTableTest.assertSlicesConsistent(env, load.tw, load.table);
      if (committed) {
        assertThat(load.layout().pending()).as("a pass settled the committed split").isEmpty();
        assertThat(load.layout().slices()).extracting(TableSlices.Slice::id).contains(2, 3).doesNotContain(parent);
      } else {
        assertThat(load.layout().pending()).as("fresh: only maintenance rolls it back").isPresent();
      }

      // The next maintenance pass rolls back (or has nothing pending) and splits again.
      MaintenanceResult next = load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      assertThat(next.errors()).isEmpty();
      SliceMeta.Layout after = load.layout();
      assertThat(after.pending()).isEmpty();
      if (!committed) {
        assertThat(after.retired()).extracting(TableSlices.Slice::id).contains(2, 3);
        assertThat(next.sliceChanges()).singleElement().asString().endsWith("-> [4, 5]");
      }
      load.ingest(0, 200, 60, 70);
      load.drainAndCheck("after the crash at " + step + " and the next passes");
    }
  }

  @Test
  void splitLandingBetweenAParentPassMaterializingAndCommittingRestartsThePass() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 150, 0, 0);
      load.drainAndCheck("before");
      load.ingest(0, 200, 30, 60);
      AtomicBoolean once = new AtomicBoolean(true);
      ReconcileHooks splitFirst = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          if (once.getAndSet(false)) {
            assertThat(load.maintainer(MaintenanceHooks.NONE).splitSlice(TestEnvironment.CATALOG,
                TableIdentifier.of("db", "sliced"), 0)).contains("split [0] -> [2, 3]");
          }
        }
      };
      ReconcileResult parent = env.reconciler(TestEnvironment.options(), splitFirst).reconcileSlice(load.tw, 0);
      assertThat(parent.outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      assertThat(parent.message()).contains("no longer exists");
      assertThat(load.marks()).containsOnlyKeys(1, 2, 3);
      load.drainAndCheck("after the children applied the parent's range");
    }
  }

  /**
   * Another slice's commit whose first attempt ran on the snapshot before a split and whose
   * Iceberg retry runs on the split's: an update's summary keeps what the first attempt set, so
   * the retry must fail (and the pass plan again) rather than carry the replaced slice's entry
   * next to its children's (seen in distributed mode: every later pass then failed on slices that
   * overlap). A snapshot that already carries such an entry is read with the children winning.
   */
  @Test
  void otherSlicesCommitRetriedAcrossASplitFailsInsteadOfKeepingTheReplacedSlice() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 150, 0, 0);
      load.drainAndCheck("before");
      long seq = load.segments;
      List<TableSlices.Slice> planned = load.layout().asOf(load.marks());
      org.apache.iceberg.RowDelta delta = load.table.newRowDelta();
      org.apache.iceberg.SnapshotAncestryValidator marks =
          WalMarks.committingSlice(delta, planned, java.util.Set.of(), 1, seq, seq);
      delta.validateWith(marks);
      // The first attempt, on the snapshot before the split; its compare-and-swap loses to the split.
      assertThat(marks.validate(org.apache.iceberg.util.SnapshotUtil.ancestorsOf(
          load.table.currentSnapshot().snapshotId(), load.table::snapshot))).isTrue();
      assertThat(load.maintainer(MaintenanceHooks.NONE).splitSlice(TestEnvironment.CATALOG,
          TableIdentifier.of("db", "sliced"), 0)).contains("split [0] -> [2, 3]");

      assertThatThrownBy(delta::commit).isInstanceOf(org.apache.iceberg.exceptions.ValidationException.class)
          .hasMessageContaining("slices changed from [0, 1] to [1, 2, 3]");
      assertThat(load.marks()).containsOnlyKeys(1, 2, 3);

      // A lineage that names the replaced slice 0 next to its children 2 and 3: the children win.
      assertThat(load.layout().asOf(Map.of(0, seq - 1, 1, seq, 2, seq, 3, seq)))
          .extracting(TableSlices.Slice::id).containsExactly(2, 3, 1);
      load.ingest(100, 200, 0, 0);
      load.drainAndCheck("after the split and a pass of every slice");
    }
  }

  @Test
  void parentPassCommittingWhileTheSplitRewritesFailsTheSplitWhichPlansAgain() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 150, 0, 0);
      load.drainAndCheck("before");
      load.ingest(0, 200, 30, 60);
      CountDownLatch parentMaterialized = new CountDownLatch(1);
      CountDownLatch mayCommit = new CountDownLatch(1);
      ReconcileHooks waitForSplit = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          parentMaterialized.countDown();
          try {
            mayCommit.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      };
      ExecutorService pool = Executors.newSingleThreadExecutor();
      try {
        // The parent's pass read the layout before the split was proposed, so it is not held back.
        Future<ReconcileResult> parent = pool.submit(() ->
            env.reconciler(TestEnvironment.options(), waitForSplit).reconcileSlice(load.tw, 0));
        assertThat(parentMaterialized.await(60, TimeUnit.SECONDS)).isTrue();
        int[] commits = {0};
        MaintenanceHooks parentCommitsFirst = new MaintenanceHooks() {
          @Override
          public void beforeSliceCommit(Table table, SliceMeta.Change change) {
            if (commits[0]++ == 0) {
              mayCommit.countDown();
              try {
                assertThat(parent.get(60, TimeUnit.SECONDS).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            }
          }
        };
        Optional<String> split = load.maintainer(parentCommitsFirst).splitSlice(TestEnvironment.CATALOG,
            TableIdentifier.of("db", "sliced"), 0);
        assertThat(split).contains("split [0] -> [2, 3]");
        assertThat(commits[0]).as("the first rewrite conflicted and was planned again").isEqualTo(2);
      } finally {
        pool.shutdownNow();
      }
      load.drainAndCheck("after the race");
    }
  }

  @Test
  void mergeUndoesSplitsOnceNeighboursAreSmall() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 1, 20);
      load.ingest(0, 120, 0, 0);
      load.drainAndCheck("before");
      for (int i = 0; i < 8; i++) {
        load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      }
      int split = load.layout().slices().size();
      assertThat(split).isGreaterThan(2);
      load.ingest(0, 10, 10, 120);
      load.drainAndCheck("after the deletes");
      load.table.updateProperties().set(TableProperties.SLICE_TARGET_ROWS, "1000").commit();
      List<String> changes = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        MaintenanceResult r = load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
        assertThat(r.errors()).isEmpty();
        changes.addAll(r.sliceChanges());
        load.ingest(i, i + 3, 0, 0);
        load.drainAndCheck("merge pass " + i);
      }
      assertThat(changes).allSatisfy(c -> assertThat(c).startsWith("merge"));
      assertThat(load.layout().slices()).hasSize(1);
      assertThat(load.layout().slices().get(0).lo()).isZero();
      assertThat(load.layout().slices().get(0).hi()).isEqualTo(TableSlices.HASH_SPACE);
    }
  }

  @Test
  void mergeOfNeighboursAtDifferentProgressFirstBringsTheOneBehindLevel() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 1, 20);
      load.ingest(0, 60, 0, 0);
      load.drainAndCheck("before");
      load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      List<TableSlices.Slice> halves = load.layout().slices();
      assertThat(halves).hasSize(2);
      // The first half reconciles three more segments; the second stays behind.
      load.ingest(0, 30, 0, 0);
      load.ingest(30, 60, 50, 55);
      assertThat(env.reconciler(TestEnvironment.options()).reconcileSlice(load.tw, halves.get(0).id()).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      Map<Integer, Long> marks = load.marks();
      assertThat(marks.get(halves.get(0).id())).isEqualTo(load.segments);
      assertThat(marks.get(halves.get(1).id())).isLessThan(load.segments);
      load.table.updateProperties().set(TableProperties.SLICE_TARGET_ROWS, "1000").commit();

      MaintenanceResult merged = load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);

      assertThat(merged.errors()).isEmpty();
      assertThat(merged.sliceChanges()).singleElement().asString().startsWith("merge");
      assertThat(load.layout().slices()).hasSize(1);
      assertThat(load.marks()).containsOnlyKeys(load.layout().slices().get(0).id())
          .containsValue(load.segments);
      EntityModelTest.assertMatches(load.table, load.model, "after the merge");
      load.ingest(0, 70, 0, 10);
      load.drainAndCheck("after a pass over the merged slice");
    }
  }

  @Test
  void mergeCrashingBeforeItsCommitIsRolledBack() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 1, 20);
      load.ingest(0, 60, 0, 0);
      load.drainAndCheck("before");
      load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      assertThat(load.layout().slices()).hasSize(2);
      load.table.updateProperties().set(TableProperties.SLICE_TARGET_ROWS, "1000").commit();
      MaintenanceHooks crash = new MaintenanceHooks() {
        @Override
        public void beforeSliceCommit(Table table, SliceMeta.Change change) {
          throw new IllegalStateException("crash before the merge commit");
        }
      };
      assertThat(load.maintainer(crash).maintain(load.tw).errors()).singleElement().asString().contains("crash");
      assertThat(load.layout().pending()).isPresent();
      load.ingest(0, 80, 5, 10);
      load.reconcile();
      SlicedTableTest.assertSlicesConsistent(env, load.tw, load.table);
      MaintenanceResult next = load.maintainer(MaintenanceHooks.NONE).maintain(load.tw);
      assertThat(next.sliceChanges()).singleElement().asString().startsWith("merge");
      load.drainAndCheck("after the rolled back merge and the next one");
      assertThat(load.layout().slices()).hasSize(1);
    }
  }

  @Test
  void pendingChangeOlderThanItsLeaseIsRolledBackByAnyPass() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 150, 0, 0);
      load.drainAndCheck("before");
      MaintenanceHooks crash = new MaintenanceHooks() {
        @Override
        public void afterSliceProposal(Table table, SliceMeta.Change change) {
          throw new IllegalStateException("crash after the proposal");
        }
      };
      load.maintainer(crash).maintain(load.tw);
      int parent = load.layout().pending().orElseThrow().from().get(0);
      load.ingest(0, 160, 0, 0);
      ReconcileResult held = env.reconciler(TestEnvironment.options()).reconcileSlice(load.tw, parent);
      assertThat(held.outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      assertThat(held.message()).contains("waits for its pending split");

      java.time.Clock later = java.time.Clock.offset(java.time.Clock.systemUTC(),
          java.time.Duration.ofMillis(SliceMeta.LEASE_MILLIS + 60_000));
      ReconcileResult pass = env.reconciler(TestEnvironment.options().withClock(later))
          .reconcileSlice(load.tw, parent);
      assertThat(pass.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(load.layout().pending()).isEmpty();
      assertThat(load.layout().retired()).extracting(TableSlices.Slice::id).containsExactly(2, 3);
      load.drainAndCheck("after the roll-back by a pass");
    }
  }

  @Test
  void walTailAfterASplitFoldsEachKeyAboveItsOwnSlicesProgress() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 150, 0, 0);
      load.drainAndCheck("before");
      String change = load.maintainer(MaintenanceHooks.NONE).splitSlice(TestEnvironment.CATALOG,
          TableIdentifier.of("db", "sliced"), 0).orElseThrow();
      assertThat(change).isEqualTo("split [0] -> [2, 3]");
      long reconciled = load.segments;
      Map<Long, Map<String, Object>> before = new HashMap<>();
      load.model.rows.forEach((k, v) -> before.put(k, new HashMap<>(v)));
      List<EntityModel.Op> tail = new ArrayList<>(SlicedTableTest.append(env, load.tw,
          SlicedTableTest.upserts(100, 200, 7)));
      tail.addAll(SlicedTableTest.append(env, load.tw, SlicedTableTest.deletes(0, 20, 7)));
      load.model.applyBatch(tail);
      load.segments += 2;
      // Slice 2 reconciles the tail; slices 3 and 1 stay where the split left them.
      assertThat(env.reconciler(TestEnvironment.options()).reconcileSlice(load.tw, 2).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      load.table.refresh();
      org.apache.iceberg.Snapshot snapshot = load.table.currentSnapshot();
      assertThat(WalHighWaterMark.of(load.table)).isEqualTo(reconciled);
      List<TableSlices.Slice> slices = load.layout().asOf(TableSlices.marks(load.table, snapshot));
      assertThat(slices).extracting(TableSlices.Slice::id).containsExactly(2, 3, 1);

      List<io.storageengine.wal.WalSegment> segments = new ArrayList<>();
      for (long seq = reconciled + 1; seq <= load.segments; seq++) {
        segments.add(env.wal.read(load.tw, seq).orElseThrow());
      }
      WalTailRows rows = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options());
      Path target = dir.resolve("tail.parquet");
      WalTailRows.EntityLayer folded = rows.foldEntityLayer(TestEnvironment.CATALOG, load.table, snapshot,
          reconciled, List.of(), 0, segments, target, rows.newEntityState()).orElseThrow();
      // The tail holds the final rows of the touched keys of slices 3 and 1 only.
      java.util.Set<Long> expected = new java.util.TreeSet<>();
      long replaced = 0;
      for (EntityModel.Op op : tail) {
        if (TableSlices.owner(slices, TableSlices.hash(Long.toString(op.key()))).id() != 2
            && load.model.rows.containsKey(op.key())) {
          expected.add(op.key());
        }
      }
      for (Long key : before.keySet()) {
        if (tail.stream().anyMatch(op -> op.key() == key)
            && TableSlices.owner(slices, TableSlices.hash(Long.toString(key))).id() != 2) {
          replaced++;
        }
      }
      assertThat(folded.rows()).isEqualTo(expected.size());
      assertThat(folded.replacedPositions().values().stream().mapToLong(p -> p.length).sum()).isEqualTo(replaced);
      load.drainAndCheck("after slices 3 and 1 reconciled the tail");
    }
  }

  @Test
  void splitSliceRefusesAMissingSlice() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Load load = new Load(env, 2, 30);
      load.ingest(0, 10, 0, 0);
      load.drainAndCheck("before");
      assertThatThrownBy(() -> load.maintainer(MaintenanceHooks.NONE).splitSlice(TestEnvironment.CATALOG,
          TableIdentifier.of("db", "sliced"), 7)).hasMessageContaining("has no slice 7");
    }
  }

  private static Table table(Load load) {
    return load.table;
  }

  /** Each key's {@code _row_id} as the table reads it. */
  private static Map<Long, Long> rowIds(Table table) {
    table.refresh();
    Map<Long, Long> ids = new HashMap<>();
    org.apache.iceberg.Schema projection = new org.apache.iceberg.Schema(table.schema().findField("id"),
        org.apache.iceberg.MetadataColumns.ROW_ID);
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> rows =
        org.apache.iceberg.data.IcebergGenerics.read(table).project(projection).build()) {
      for (org.apache.iceberg.data.Record r : rows) {
        ids.put((Long) r.getField("id"), (Long) r.getField(org.apache.iceberg.MetadataColumns.ROW_ID.name()));
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    assertThat(ids.values()).doesNotContainNull();
    return ids;
  }
}

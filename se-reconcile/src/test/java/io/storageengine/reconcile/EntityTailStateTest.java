package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The states of an entity WAL tail fold's layers ({@link WalTailRows#foldEntityLayer}): a layer
 * folds onto the states of the layers before it, and one whose earlier state is gone (dropped,
 * or its database replaced) answers empty, so the caller folds the whole tail again.
 */
class EntityTailStateTest {
  @TempDir Path dir;

  @Test
  void aLayerFoldsOntoEarlierStatesAndAnswersEmptyWhenOneIsGone() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = members(env);
      TableWal tw = env.walOf(table, "members");
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 100, 1));
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(90, 110, 2)); // 10 snapshot keys, 10 new
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(95, 120, 3)); // 15 folded keys, 10 new
      table.refresh();
      Snapshot snapshot = table.currentSnapshot();
      WalSegment second = env.wal.read(tw, 2).orElseThrow();
      WalSegment third = env.wal.read(tw, 3).orElseThrow();
      WalTailRows rows = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options());

      String first = rows.newEntityState();
      WalTailRows.EntityLayer layer0 = rows.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 1, List.of(), 0,
          List.of(second), dir.resolve("layer0.parquet"), first).orElseThrow();
      assertThat(layer0.rows()).isEqualTo(20);
      assertThat(layer0.stateRows()).isEqualTo(20);
      assertThat(layer0.replacedPositions().values().stream().mapToInt(p -> p.length).sum()).isEqualTo(10);

      String next = rows.newEntityState();
      WalTailRows.EntityLayer layer1 = rows.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 1,
          List.of(first), 1, List.of(third), dir.resolve("layer1.parquet"), next).orElseThrow();
      assertThat(layer1.rows()).isEqualTo(25);
      assertThat(layer1.replacedPositions()).as("the keys new to the fold are not in the snapshot").isEmpty();
      assertThat(layer1.replacedLayerRows()).containsOnlyKeys(0);
      assertThat(layer1.replacedLayerRows().get(0)).hasSize(15);

      rows.dropEntityStates(List.of(first, next));
      String again = rows.newEntityState();
      Optional<WalTailRows.EntityLayer> gone = rows.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 1,
          List.of(first, next), 2, List.of(third), dir.resolve("layer2.parquet"), again);
      assertThat(gone).as("an earlier state is gone").isEmpty();
      rows.dropEntityStates(List.of(again));
    }
  }

  /**
   * A fold in a process that also reconciles looks the tail's keys up in the reconciler's key
   * index (which describes the snapshot once the pass's pending change is applied) and finds
   * the same snapshot rows to replace as a fold that reads the files.
   */
  @Test
  void aFoldSharingTheReconcilersKeyIndexReplacesTheSameRows() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = members(env);
      TableWal tw = env.walOf(table, "members");
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 100, 1));
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(60, 130, 2)); // 40 snapshot keys, 30 new
      WalTailRows.EntityLayer[] folds = foldReadingAndSharing(env, reconciler, table, tw);
      WalTailRows.EntityLayer read = folds[0];
      WalTailRows.EntityLayer shared = folds[1];
      assertThat(env.keyIndexes.reads()).as("the shared fold used the index").isEqualTo(1);
      assertThat(shared.rows()).isEqualTo(read.rows()).isEqualTo(70);
      assertThat(shared.replacedPositions()).hasSameSizeAs(read.replacedPositions());
      read.replacedPositions().forEach((file, positions) ->
          assertThat(shared.replacedPositions().get(file)).as(file).containsExactly(positions));
      assertThat(read.replacedPositions().values().stream().mapToInt(p -> p.length).sum()).isEqualTo(40);

      // The next pass still finds its index describing the files (the reader applied its change).
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(env.keyIndexes.uses()).containsExactly(1, 1);
    }
  }

  /**
   * On a sliced table each slice's pass keeps a key index of its own files: a fold looks its
   * keys up in all of them at once (each key's row is in its slice's index) and finds the same
   * rows as a fold that reads the files; the passes after it still reuse their indexes.
   */
  @Test
  void aFoldOfASlicedTableLooksItsKeysUpInTheIndexesOfItsSlices() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("sliced", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver", TableProperties.SLICE_COUNT, "4"));
      TableWal tw = env.walOf(table, "sliced");
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 200, 1));
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(env.keyIndexes.held()[0]).as("one index a slice").isEqualTo(4);
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(120, 260, 2)); // 80 snapshot keys, 60 new
      WalTailRows.EntityLayer[] folds = foldReadingAndSharing(env, reconciler, table, tw);
      WalTailRows.EntityLayer read = folds[0];
      WalTailRows.EntityLayer shared = folds[1];
      assertThat(env.keyIndexes.reads()).as("the fold used the slices' indexes").isEqualTo(1);
      assertSameLayer(shared, read, 80);
      assertThat(read.replacedPositions().size()).as("rows in the files of several slices").isGreaterThan(1);

      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(env.keyIndexes.uses()).as("built once a slice, then reused").containsExactly(4, 4);
    }
  }

  /**
   * A layer onto a fold kept on an older snapshot, after a pass committed the WAL that fold
   * holds: the keys new to the fold have the same rows in both snapshots, so they are looked up
   * in the index of the newer one and the layer equals one that reads the older snapshot's files;
   * once a pass has reconciled the layer's own segment too, the index no longer stands for the
   * older snapshot and the files are read.
   */
  @Test
  void aLayerOntoAFoldCarriedPastAPassLooksItsNewKeysUpInTheNewerSnapshotsIndex() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = members(env);
      TableWal tw = env.walOf(table, "members");
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 100, 1));
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      Snapshot older = table.currentSnapshot();
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(60, 130, 2));
      WalSegment second = env.wal.read(tw, 2).orElseThrow();
      WalTailRows reading = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options());
      WalTailRows sharing = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options()).sharingKeyIndexesOf(reconciler);
      String first = reading.newEntityState();
      reading.foldEntityLayer(TestEnvironment.CATALOG, table, older, 1, List.of(), 0, List.of(second),
          dir.resolve("layer0.parquet"), first).orElseThrow();
      // A pass reconciles what the kept fold holds: the table's current snapshot is newer now.
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      assertThat(table.currentSnapshot().snapshotId()).isNotEqualTo(older.snapshotId());
      // Keys 20..40 are new to the fold with rows in the older snapshot, 100..110 folded, 200..210 new.
      List<EntityModel.Op> ops = new java.util.ArrayList<>(SlicedTableTest.upserts(20, 40, 3));
      ops.addAll(SlicedTableTest.upserts(100, 110, 3));
      ops.addAll(SlicedTableTest.upserts(200, 210, 3));
      SlicedTableTest.append(env, tw, ops);
      WalSegment third = env.wal.read(tw, 3).orElseThrow();

      long readsBefore = env.keyIndexes.reads();
      String readState = reading.newEntityState();
      String sharedState = sharing.newEntityState();
      WalTailRows.EntityLayer read = reading.foldEntityLayer(TestEnvironment.CATALOG, table, older, 1,
          List.of(first), 1, List.of(third), dir.resolve("read.parquet"), readState).orElseThrow();
      WalTailRows.EntityLayer shared = sharing.foldEntityLayer(TestEnvironment.CATALOG, table, older, 1,
          List.of(first), 1, List.of(third), dir.resolve("shared.parquet"), sharedState).orElseThrow();
      assertThat(env.keyIndexes.reads()).as("the newer snapshot's index stood for the older one")
          .isEqualTo(readsBefore + 1);
      assertSameLayer(shared, read, 20);

      // Once a pass reconciled the layer's own segment, a new layer of it must read the files.
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      String again = sharing.newEntityState();
      WalTailRows.EntityLayer afterPass = sharing.foldEntityLayer(TestEnvironment.CATALOG, table, older, 1,
          List.of(first), 1, List.of(third), dir.resolve("again.parquet"), again).orElseThrow();
      assertThat(env.keyIndexes.reads()).as("no index stands for the older snapshot").isEqualTo(readsBefore + 1);
      assertSameLayer(afterPass, read, 20);
      reading.dropEntityStates(List.of(first, readState));
      sharing.dropEntityStates(List.of(sharedState, again));
    }
  }

  /**
   * The first layer of the WAL tail after {@code table}'s current snapshot (segment 2) folded
   * twice: reading the files, and sharing {@code reconciler}'s key indexes.
   */
  private WalTailRows.EntityLayer[] foldReadingAndSharing(TestEnvironment env, Reconciler reconciler, Table table,
      TableWal tw) {
    table.refresh();
    Snapshot snapshot = table.currentSnapshot();
    WalSegment second = env.wal.read(tw, 2).orElseThrow();
    WalTailRows reading = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
        TestEnvironment.options());
    WalTailRows sharing = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
        TestEnvironment.options()).sharingKeyIndexesOf(reconciler);
    String readState = reading.newEntityState();
    String sharedState = sharing.newEntityState();
    WalTailRows.EntityLayer read = reading.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 1, List.of(),
        0, List.of(second), dir.resolve("read.parquet"), readState).orElseThrow();
    WalTailRows.EntityLayer shared = sharing.foldEntityLayer(TestEnvironment.CATALOG, table, snapshot, 1,
        List.of(), 0, List.of(second), dir.resolve("shared.parquet"), sharedState).orElseThrow();
    reading.dropEntityStates(List.of(readState));
    sharing.dropEntityStates(List.of(sharedState));
    return new WalTailRows.EntityLayer[] {read, shared};
  }

  private static void assertSameLayer(WalTailRows.EntityLayer actual, WalTailRows.EntityLayer expected,
      int snapshotRowsReplaced) {
    assertThat(actual.rows()).isEqualTo(expected.rows());
    assertThat(actual.stateRows()).isEqualTo(expected.stateRows());
    assertThat(actual.replacedPositions()).hasSameSizeAs(expected.replacedPositions());
    expected.replacedPositions().forEach((file, positions) ->
        assertThat(actual.replacedPositions().get(file)).as(file).containsExactly(positions));
    assertThat(expected.replacedPositions().values().stream().mapToInt(p -> p.length).sum())
        .isEqualTo(snapshotRowsReplaced);
    assertThat(actual.replacedLayerRows()).hasSameSizeAs(expected.replacedLayerRows());
    expected.replacedLayerRows().forEach((layer, rows) ->
        assertThat(actual.replacedLayerRows().get(layer)).containsExactly(rows));
  }

  /** The unpartitioned entity table {@code members} (schema of {@link EntityModelTest}, version {@code ver}). */
  static Table members(TestEnvironment env) {
    return env.createTable("members", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
        Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY, TableProperties.VERSION_COLUMN, "ver"));
  }
}

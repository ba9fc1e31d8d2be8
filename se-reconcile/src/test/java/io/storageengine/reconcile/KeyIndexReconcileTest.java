package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Entity passes that read their current rows from the table's key index ({@link KeyIndexReads}):
 * the index is built once and then carried from pass to pass by each pass's pending change, it is
 * rebuilt when another writer (compaction) changed the files, a change whose commit did not land
 * is dropped, and the table always holds what the model says.
 */
class KeyIndexReconcileTest {
  @TempDir Path dir;

  @Test
  void passesReuseTheIndexAndAgreeWithTheModel() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      Random rnd = new Random(7);
      for (int pass = 1; pass <= 10; pass++) {
        reconcile(env, tw, model, randomOps(env, tw, rnd, 200, 300), "pass " + pass);
        EntityModelTest.assertMatches(table, model, "pass " + pass);
      }
      assertThat(env.keyIndexes.uses()).as("built once, then reused by every pass").containsExactly(1, 9);

      // Compaction rewrites files: the next pass brings the index to the new files (or, if they
      // hold most rows, builds a new one).
      MaintenanceResult compacted = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones,
          env.allocator, env.duckdb, TestEnvironment.options(), MaintenanceFixture.compactingPolicy()).maintain(tw);
      assertThat(compacted.errors()).isEmpty();
      assertThat(compacted.compaction().dataFilesRemoved()).isPositive();
      EntityModelTest.assertMatches(table, model, "after compaction");
      reconcile(env, tw, model, randomOps(env, tw, rnd, 200, 300), "after compaction");
      EntityModelTest.assertMatches(table, model, "pass after compaction");
      reconcile(env, tw, model, randomOps(env, tw, rnd, 200, 300), "second after compaction");
      EntityModelTest.assertMatches(table, model, "second pass after compaction");
      long[] uses = env.keyIndexes.uses();
      assertThat(uses[0] + uses[1]).isEqualTo(12);
    }
  }

  /**
   * After a compaction the next pass hands bringing the index to the rewritten files (reading
   * all their rows) to a thread of its own and reads the files itself, as do the passes until
   * that sync ends; then the passes use the index again, bringing it along by their own changes.
   */
  @Test
  void aSyncAfterACompactionRunsInTheBackgroundWhilePassesReadTheFiles() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      env.keyIndexes.syncInBackgroundWith(env.duckdb, env.allocator, 2, 1_000);
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      Random rnd = new Random(27);
      for (int pass = 1; pass <= 6; pass++) {
        reconcile(env, tw, model, randomOps(env, tw, rnd, pass == 1 ? 3_000 : 300, 3_000), "pass " + pass);
      }
      assertThat(env.keyIndexes.uses()).as("built once, then reused").containsExactly(1, 5);
      MaintenanceResult compacted = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones,
          env.allocator, env.duckdb, TestEnvironment.options(), MaintenanceFixture.compactingPolicy()).maintain(tw);
      assertThat(compacted.compaction().rowsRewritten()).isGreaterThan(1_000);

      // This pass finds the index describing other files, hands it over and reads the files.
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 3_000), "pass after compaction");
      EntityModelTest.assertMatches(table, model, "pass after compaction");
      assertThat(env.keyIndexes.uses()).as("the pass used no index").containsExactly(1, 5);
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
      while (env.keyIndexes.held()[0] == 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(env.keyIndexes.held()[0]).as("the synced index, given back").isEqualTo(1);

      // Synced to the compacted files; the pass after brings it along by the pass before.
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 3_000), "second pass after compaction");
      EntityModelTest.assertMatches(table, model, "second pass after compaction");
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 3_000), "third pass after compaction");
      EntityModelTest.assertMatches(table, model, "third pass after compaction");
      assertThat(env.keyIndexes.uses()).as("reused again, never rebuilt").containsExactly(1, 7);
    }
  }

  /**
   * A compaction run through the reconcile loop of the process (its gate) reads the rows of the
   * files it writes and hands them over with its commit: the index is brought to the new files
   * from them, not by reading the files, and the rows a pass deleted while the compaction ran
   * (carried onto the new files as deletion vectors) stay out of it.
   */
  @Test
  void aCompactionHandsTheRowsOfItsFilesToTheIndex() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      Random rnd = new Random(37);
      for (int pass = 1; pass <= 5; pass++) {
        reconcile(env, tw, model, randomOps(env, tw, rnd, pass == 1 ? 2_000 : 300, 2_000), "pass " + pass);
      }
      assertThat(env.keyIndexes.uses()).as("built once, then reused").containsExactly(1, 4);
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options()), env.wal,
          TestEnvironment.CATALOG, java.time.Duration.ofHours(1), r -> { })) {
        java.util.concurrent.atomic.AtomicBoolean raced = new java.util.concurrent.atomic.AtomicBoolean();
        MaintenanceResult compacted = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator,
            env.duckdb, TestEnvironment.options(), MaintenanceFixture.compactingPolicy(),
            new io.storageengine.reconcile.maintenance.MaintenanceHooks() {
              @Override
              public void beforeRewriteCommit(Table t, List<org.apache.iceberg.DataFile> replaced) {
                if (!raced.getAndSet(true)) {
                  // Updates and deletes of rows the compaction has just rewritten.
                  reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 2_000), "pass racing the compaction");
                }
              }
            }, loop).maintain(tw);
        assertThat(compacted.errors()).isEmpty();
        assertThat(compacted.compaction().rowsCarried()).as("rows deleted while it ran").isPositive();
        assertThat(env.keyIndexes.rewritten()).as("the new files' rows, kept for the index")
            .containsExactly(compacted.compaction().dataFilesAdded(), 0);
      }
      EntityModelTest.assertMatches(table, model, "after compaction");

      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 2_000), "pass after compaction");
      EntityModelTest.assertMatches(table, model, "pass after compaction");
      long added = env.keyIndexes.rewritten()[1];
      assertThat(env.keyIndexes.rewritten()).as("all handed over to the sync").containsExactly(0, added);
      assertThat(added).isPositive();
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 2_000), "second pass after compaction");
      EntityModelTest.assertMatches(table, model, "second pass after compaction");
      // A carried-deleted row taken in would give its key two live rows: the index dropped, rebuilt.
      assertThat(env.keyIndexes.uses()).as("synced from the rows handed over, never rebuilt")
          .containsExactly(1, 7);
    }
  }

  /**
   * Two workers take turns on a table, each with its own indexes: each finds the files changed by
   * the other's passes (a new data file, new deletion vectors), and brings its index there by
   * what changed instead of building it again.
   */
  @Test
  void anotherWorkersPassesAreSyncedNotRebuilt() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      KeyIndexes other = new KeyIndexes(64L << 20);
      Reconciler otherWorker = new Reconciler(env.catalogs, env.wal, env.store, env.tombstones, env.allocator,
          env.duckdb, TestEnvironment.options(), ReconcileHooks.NONE,
          io.storageengine.common.telemetry.Telemetry.none(), other);
      Random rnd = new Random(17);
      // Pass 1 loads the table; then the workers alternate, the other worker first, with batches
      // small next to the table (a larger change is read by building the index again).
      for (int pass = 1; pass <= 9; pass++) {
        List<EntityModel.Op> ops = randomOps(env, tw, rnd, pass == 1 ? 5_000 : 200, 5_000);
        ReconcileResult r = (pass % 2 == 0 ? otherWorker : env.reconciler(TestEnvironment.options())).reconcile(tw);
        assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        model.applyBatch(ops);
        EntityModelTest.assertMatches(table, model, "pass " + pass);
      }
      assertThat(env.keyIndexes.uses()).as("built on the empty table, then synced").containsExactly(1, 4);
      assertThat(other.uses()).as("built from the files once, then synced").containsExactly(1, 3);
    }
  }

  @Test
  void aChangeWhoseCommitDidNotLandIsDropped() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      Random rnd = new Random(11);
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 100), "first");
      List<EntityModel.Op> failed = randomOps(env, tw, rnd, 300, 100);
      ReconcileHooks failing = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal t, long fromSeq, long toSeq) {
          throw new IllegalStateException("no commit this time");
        }
      };
      assertThatThrownBy(() -> env.reconciler(TestEnvironment.options(), failing).reconcile(tw))
          .hasMessageContaining("no commit this time");
      EntityModelTest.assertMatches(table, model, "after the failed pass");
      // The same range again (the index still describes the files: its pending change is dropped).
      reconcile(env, tw, model, failed, "retried");
      EntityModelTest.assertMatches(table, model, "retried");
      reconcile(env, tw, model, randomOps(env, tw, rnd, 300, 100), "next");
      EntityModelTest.assertMatches(table, model, "next");
      assertThat(env.keyIndexes.uses()).containsExactly(1, 3);
    }
  }

  @Test
  void passesWithoutAnIndexAgreeWithTheModelToo() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      Random rnd = new Random(13);
      ReconcileOptions off = TestEnvironment.options().withKeyIndexBytes(0);
      for (int pass = 1; pass <= 4; pass++) {
        reconcile(env, tw, model, randomOps(env, tw, rnd, 200, 300), "pass " + pass, off);
        EntityModelTest.assertMatches(table, model, "pass " + pass);
      }
      assertThat(env.keyIndexes.uses()).containsExactly(0, 0);
    }
  }

  /**
   * An INTEGER key and a TIMESTAMP version (with and without zone), held by the index as longs: a stale update (an older
   * timestamp than the current row's) is ignored, a partial one keeps the other columns.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void integerKeysAndTimestampVersions(boolean withZone) throws Exception {
    Schema schema = new Schema(List.of(
        required(1, "id", Types.IntegerType.get()),
        required(2, "ts", withZone ? Types.TimestampType.withZone() : Types.TimestampType.withoutZone()),
        optional(3, "a", Types.StringType.get())), Set.of(1));
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("entity", schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY, TableProperties.VERSION_COLUMN, "ts"));
      TableWal tw = env.walOf(table, "entity");
      LocalDateTime local = LocalDateTime.of(2026, 1, 1, 0, 0, 0, 123_000);
      Object t0 = withZone ? local.atOffset(java.time.ZoneOffset.UTC) : local;
      Object t1 = withZone ? local.plusSeconds(1).atOffset(java.time.ZoneOffset.UTC) : local.plusSeconds(1);
      Object t2 = withZone ? local.plusSeconds(2).atOffset(java.time.ZoneOffset.UTC) : local.plusSeconds(2);
      append(env, tw, schema, 0, 100, t1, "x");
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      append(env, tw, schema.select("id", "ts"), 0, 50, t2, null);
      append(env, tw, schema, 50, 60, t0, "stale");
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      append(env, tw, schema, 90, 110, t2, "y");
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);

      Map<Integer, List<Object>> rows = new HashMap<>();
      for (Record r : TestEnvironment.readAll(table)) {
        assertThat(rows.put((Integer) r.getField("id"), List.of(r.getField("ts"), r.getField("a")))).isNull();
      }
      assertThat(rows).hasSize(110);
      for (int id = 0; id < 110; id++) {
        List<Object> expected = id < 50 ? List.of(t2, "x") : id < 90 ? List.of(t1, "x") : List.of(t2, "y");
        assertThat(rows.get(id)).as("id %d", id).isEqualTo(expected);
      }
      assertThat(env.keyIndexes.uses()).containsExactly(1, 2);
    }
  }

  private static void append(TestEnvironment env, TableWal tw, Schema projection, int from, int to,
      Object ts, String a) {
    List<Record> rows = new ArrayList<>();
    for (int id = from; id < to; id++) {
      GenericRecord r = GenericRecord.create(projection);
      r.setField("id", id);
      r.setField("ts", ts);
      if (projection.findField("a") != null) {
        r.setField("a", a);
      }
      rows.add(r);
    }
    env.wal.append(tw, List.of(ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, projection, rows)));
  }

  /** Appends one segment of {@code count} random operations on keys below {@code keySpace}. */
  private static List<EntityModel.Op> randomOps(TestEnvironment env, TableWal tw, Random rnd, int count,
      int keySpace) {
    List<EntityModel.Op> all = new ArrayList<>();
    List<WalFrame> frames = new ArrayList<>();
    while (all.size() < count) {
      int kind = rnd.nextInt(4); // 0,1 full; 2 partial; 3 delete
      List<String> carried = new ArrayList<>(EntityModelTest.NON_KEY);
      if (kind == 2) {
        carried.removeIf(c -> rnd.nextBoolean());
      }
      List<EntityModel.Op> ops = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        Map<String, Object> values = new LinkedHashMap<>();
        if (kind != 3) {
          for (String c : carried) {
            values.put(c, EntityModelTest.randomValue(rnd, c));
          }
        }
        ops.add(new EntityModel.Op(kind == 3, rnd.nextInt(keySpace), rnd.nextInt(50), values));
      }
      frames.add(EntityModelTest.frame(env, kind == 3, carried, ops));
      all.addAll(ops);
    }
    env.wal.append(tw, frames);
    return all;
  }

  private static void reconcile(TestEnvironment env, TableWal tw, EntityModel model, List<EntityModel.Op> ops,
      String context) {
    reconcile(env, tw, model, ops, context, TestEnvironment.options());
  }

  private static void reconcile(TestEnvironment env, TableWal tw, EntityModel model, List<EntityModel.Op> ops,
      String context, ReconcileOptions options) {
    ReconcileResult r = env.reconciler(options).reconcile(tw);
    assertThat(r.outcome()).as(context).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(r.toSeq()).as(context + ": one segment a pass").isEqualTo(r.fromSeq());
    model.applyBatch(ops);
  }
}

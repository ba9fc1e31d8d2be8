package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction racing reconcile commits on the same files: nothing lost, nothing duplicated. */
class CompactionRaceTest {
  @TempDir Path dir;

  @Test
  void rowsDeletedWhileTheRewriteRanAreCarriedOntoItsFiles() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      for (int s = 0; s < 4; s++) {
        f.write(false, 1, s * 10, s * 10 + 1, s * 10 + 2);
        f.reconcile();
      }
      Map<Long, List<Long>> lineage = MaintenanceFixture.lineage(f.table);
      // A reconcile pass deletes and replaces rows of the files being rewritten.
      Once hooks = new Once(() -> {
        f.write(true, 2, 1, 11);
        f.write(false, 2, 20, 30);
        assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      }, () -> { });

      MaintenanceResult result = f.maintainer(MaintenanceFixture.compactingPolicy(), hooks).maintain(f.tw);

      assertThat(result.compaction().conflicts()).isZero();
      assertThat(result.compaction().rowsCarried()).isEqualTo(4);
      assertThat(result.compaction().groups()).isEqualTo(1);
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(4);
      assertThat(hooks.commits).hasValue(1);
      // The rewrite's file (with a vector for the 4 rows deleted meanwhile) and the pass's file.
      assertThat(MaintenanceFixture.dataFiles(f.table)).hasSize(2);
      assertThat(MaintenanceFixture.deleteFiles(f.table)).isEqualTo(1);
      assertThat(f.table.currentSnapshot().summary()).containsEntry("total-position-deletes", "4");
      f.assertMatchesModel("after the raced compaction");
      Map<Long, List<Long>> after = MaintenanceFixture.lineage(f.table);
      assertThat(after).doesNotContainKeys(1L, 11L);
      assertThat(after.get(20L).get(0)).isEqualTo(lineage.get(20L).get(0));
      assertThat(after.get(2L)).isEqualTo(lineage.get(2L));
      // The next pass finds the carried vector and replaces a row of the rewritten file.
      f.write(false, 3, 2, 21);
      assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.assertMatchesModel("after a pass over the rewritten file");
    }
  }

  /**
   * Rows deleted before the rewrite carries (while passes go on) and rows deleted between that
   * carry and the commit (carried while the passes are held back) end up in one deletion vector
   * of the new file.
   */
  @Test
  void rowsDeletedAfterTheFirstCarryAreCarriedAtTheCommit() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      for (int s = 0; s < 4; s++) {
        f.write(false, 1, s * 10, s * 10 + 1, s * 10 + 2);
        f.reconcile();
      }
      Once hooks = new Once(() -> {
        f.write(true, 2, 1, 11);
        assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      }, () -> {
        // A second pass deletes other rows of the same inputs, and replaces two.
        f.write(true, 3, 2, 21);
        f.write(false, 3, 20, 30);
        assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      });

      MaintenanceResult result = f.maintainer(MaintenanceFixture.compactingPolicy(), hooks).maintain(f.tw);

      assertThat(result.errors()).isEmpty();
      assertThat(result.compaction().conflicts()).isZero();
      assertThat(hooks.carries).hasValue(1);
      assertThat(result.compaction().rowsCarried()).as("2 before the first carry, 4 after it").isEqualTo(6);
      assertThat(MaintenanceFixture.deleteFiles(f.table)).as("one vector of the new file for all six").isEqualTo(1);
      assertThat(f.table.currentSnapshot().summary()).containsEntry("total-position-deletes", "6");
      f.assertMatchesModel("after a compaction carried in two steps");
      f.write(false, 4, 0, 10, 12);
      assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.assertMatchesModel("after a pass over the rewritten file");
    }
  }

  @Test
  void aSlicedTablesRewritesCarryTheirSlicesDeletes() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity",
          Map.of(io.storageengine.catalog.TableProperties.SLICE_COUNT, "2"));
      for (int s = 0; s < 4; s++) {
        f.write(false, 1, s * 10, s * 10 + 1, s * 10 + 2, s * 10 + 3);
        f.reconcile();
      }
      // Passes of both slices delete and replace rows of the files being rewritten.
      Once hooks = new Once(() -> {
        f.write(true, 2, 1, 11, 22, 33);
        f.write(false, 2, 0, 10, 20, 30, 3, 13, 23);
        assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      }, () -> { });

      MaintenanceResult result = f.maintainer(MaintenanceFixture.compactingPolicy(), hooks).maintain(f.tw);

      assertThat(result.errors()).isEmpty();
      assertThat(result.compaction().groups()).as("a rewrite per slice").isEqualTo(2);
      assertThat(result.compaction().conflicts()).isZero();
      // The first rewrite carries the rows of its slice the pass replaced or deleted; the
      // second was planned before that pass too and carries its own slice's.
      assertThat(result.compaction().rowsCarried()).isEqualTo(11);
      f.assertMatchesModel("after the raced compaction of a sliced table");
      f.write(false, 3, 0, 1, 2, 3, 10, 11, 12, 13);
      assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.assertMatchesModel("after a pass over the rewritten files");
    }
  }

  @Test
  void rewriteWhoseInputsWereRewrittenMeanwhileIsReplanned() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      for (int s = 0; s < 4; s++) {
        f.write(false, 1, s * 10, s * 10 + 1, s * 10 + 2);
        f.reconcile();
      }
      AtomicReference<MaintenanceResult> other = new AtomicReference<>();
      // Another maintainer (another process, say) rewrites the same files first.
      Once hooks = new Once(() -> other.set(f.maintainer(MaintenanceFixture.compactingPolicy()).maintain(f.tw)),
          () -> { });

      MaintenanceResult result = f.maintainer(MaintenanceFixture.compactingPolicy(), hooks).maintain(f.tw);

      assertThat(other.get().compaction().groups()).isEqualTo(1);
      assertThat(result.compaction().conflicts()).isEqualTo(1);
      assertThat(result.compaction().groups()).isZero(); // replanned: nothing left to compact
      assertThat(MaintenanceFixture.dataFiles(f.table)).hasSize(1);
      f.assertMatchesModel("after the second rewrite gave way");
    }
  }

  @Test
  void reconcileThatReadTheRewrittenFilesRestartsOnTheNewOnes() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      for (int s = 0; s < 3; s++) {
        f.write(false, 1, s * 10, s * 10 + 1);
        f.reconcile();
      }
      Maintainer maintainer = f.maintainer(MaintenanceFixture.compactingPolicy());
      AtomicReference<MaintenanceResult> compaction = new AtomicReference<>();
      Reconciler racing = env.reconciler(f.options(), new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          if (compaction.get() == null) {
            compaction.set(maintainer.maintain(f.tw));
          }
        }
      });
      f.write(false, 2, 0, 10, 20, 99);
      f.write(true, 3, 1);
      ReconcileResult result = racing.reconcile(f.tw);
      f.applyCommitted(result);

      assertThat(compaction.get().compaction().groups()).isEqualTo(1);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.attempts()).isEqualTo(2);
      f.assertMatchesModel("after the raced reconcile");
      assertThat(WalHighWaterMark.of(f.table)).isEqualTo(5);
    }
  }

  @Test
  void rewriteOverAnAppendCarriesTheNewMark() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(MaintenancePolicy.MIN_INPUT_FILES, "2"));
      TableWal tw = env.walOf(table, "events");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 3; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(tw);
      }
      AtomicBoolean raced = new AtomicBoolean();
      Maintainer maintainer = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb,
          TestEnvironment.options(), MaintenancePolicy.defaults(), new MaintenanceHooks() {
            @Override
            public void beforeRewriteCommit(Table t, List<DataFile> replaced) {
              if (!raced.getAndSet(true)) {
                env.append(tw, AppendTableTest.frame(env, 30, 10));
                assertThat(reconciler.reconcile(tw).toSeq()).isEqualTo(4);
              }
            }
          });

      MaintenanceResult result = maintainer.maintain(tw);

      assertThat(result.compaction().conflicts()).isZero();
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(3);
      table.refresh();
      // The rewrite landed on top of the append with the append's mark, not the one it read.
      assertThat(table.currentSnapshot().operation()).isEqualTo("replace");
      assertThat(WalHighWaterMark.of(table)).isEqualTo(4);
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 40);
    }
  }

  @Test
  void continuousReconcileWithMaintenanceInAnotherThread() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      Maintainer maintainer = f.maintainer(MaintenanceFixture.compactingPolicy());
      AtomicBoolean done = new AtomicBoolean();
      List<MaintenanceResult> results = java.util.Collections.synchronizedList(new ArrayList<>());
      java.util.concurrent.atomic.AtomicInteger compacted = new java.util.concurrent.atomic.AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread maintenance = new Thread(() -> {
        try {
          while (!done.get()) {
            MaintenanceResult result = maintainer.maintain(f.tw);
            results.add(result);
            compacted.addAndGet(result.compaction().groups());
          }
        } catch (Throwable t) {
          failure.set(t);
        }
      }, "test-maintenance");
      maintenance.start();
      int segments = 0;
      try {
        // At least 14 segments, and on until maintenance has compacted while passes ran (how
        // many passes that takes depends on how fast they are).
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (segments < 14 || (compacted.get() == 0 && System.nanoTime() < deadline && failure.get() == null)) {
          long[] keys = new long[4];
          for (int k = 0; k < keys.length; k++) {
            keys[k] = f.rnd.nextInt(25);
          }
          f.write(segments % 5 == 4, 10 + segments, keys);
          segments++;
          ReconcileResult r = f.reconcile();
          assertThat(r.outcome()).isIn(ReconcileResult.Outcome.COMMITTED);
          if (segments >= 14 && compacted.get() == 0) {
            // Back to back, passes this fast can commit between a compaction's look at the
            // table and its commit every time (it carries their deletes onto its files and tries
            // again, a bounded number of times): once the 14 racing segments are in, the next
            // pass waits for a maintenance run that started after this one ended, as a pause in
            // a real ingest would let one run.
            int seen = results.size();
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            while (results.size() < seen + 2 && System.nanoTime() < until && failure.get() == null) {
              Thread.sleep(10);
            }
          }
        }
      } finally {
        done.set(true);
        maintenance.join();
      }
      assertThat(failure.get()).isNull();
      assertThat(results).allSatisfy(r -> assertThat(r.errors()).isEmpty());
      assertThat(compacted.get()).as("groups compacted while passes ran").isPositive();
      f.assertMatchesModel("after racing maintenance");
      assertThat(WalHighWaterMark.of(f.table)).isEqualTo(segments);
    }
  }

  /**
   * Hooks that run {@code atCommit} when the first rewrite's new files are written (before it
   * carries anything) and {@code afterCarry} after its first carry, once each.
   */
  private static final class Once implements MaintenanceHooks {
    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger carries = new AtomicInteger();
    private final Runnable atCommit;
    private final Runnable afterCarry;

    Once(Runnable atCommit, Runnable afterCarry) {
      this.atCommit = atCommit;
      this.afterCarry = afterCarry;
    }

    @Override
    public void beforeRewriteCommit(Table table, List<DataFile> replaced) {
      if (commits.getAndIncrement() == 0) {
        atCommit.run();
      }
    }

    @Override
    public void afterRewriteCarried(Table table, List<DataFile> replaced) {
      if (carries.getAndIncrement() == 0) {
        afterCarry.run();
      }
    }
  }
}

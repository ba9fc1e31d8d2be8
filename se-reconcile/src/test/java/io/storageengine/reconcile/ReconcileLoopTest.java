package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import io.storageengine.wal.WalState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background loop publishes new segments, backs off a failing table, runs passes of
 * different tables concurrently (one at a time per table), reruns a table triggered during its
 * pass, lists the WAL only on its interval tick, and waits for passes in flight on close.
 */
class ReconcileLoopTest {
  /** Long enough that only triggers drive passes after the first tick. */
  private static final Duration NO_TICK = Duration.ofHours(1);

  @TempDir Path dir;

  @Test
  void publishesContinuouslyBacksOffAndCloses() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      ReconcileLoop loop = new ReconcileLoop(reconciler, env.wal, TestEnvironment.CATALOG,
          Duration.ofMillis(50), results::add).start();
      try {
        env.append(tw, AppendTableTest.frame(env, 0, 10));
        loop.trigger(tw);
        await(() -> env.wal.state(tw).publishedSeq() == 1);

        env.servedCatalog = new TestingCatalogs.Unreachable();
        env.append(tw, AppendTableTest.frame(env, 10, 10));
        await(() -> results.stream().filter(r -> r.outcome() == ReconcileResult.Outcome.FAILED).count() >= 2);
        assertThat(results).filteredOn(r -> r.outcome() == ReconcileResult.Outcome.FAILED)
            .allSatisfy(r -> assertThat(r.message()).isEqualTo(
                "UNAVAILABLE: catalog 'tenant1' is unavailable: RuntimeException"));

        env.servedCatalog = env.catalog;
        await(() -> env.wal.state(tw).publishedSeq() == 2);
      } finally {
        loop.close();
      }
      assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t ->
          t.getName().startsWith("se-reconcile-loop-" + TestEnvironment.CATALOG)
              || t.getName().startsWith("se-reconcile-pass-" + TestEnvironment.CATALOG));
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 20);
    }
  }

  @Test
  void slowTableDoesNotDelayOthersAndTriggerDuringPassRunsAgain() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      TableWal slow = env.walOf(env.createTable("slow", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of()), "slow");
      TableWal fast = env.walOf(env.createTable("fast", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of()), "fast");
      CountDownLatch slowEntered = new CountDownLatch(1);
      CountDownLatch releaseSlow = new CountDownLatch(1);
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          if (table.equals(slow) && fromSeq == 1) {
            slowEntered.countDown();
            awaitLatch(releaseSlow);
          }
        }
      };
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), hooks), env.wal,
          TestEnvironment.CATALOG, NO_TICK, r -> {}, 2).start()) {
        env.append(slow, AppendTableTest.frame(env, 0, 10));
        loop.trigger(slow);
        assertThat(slowEntered.await(60, TimeUnit.SECONDS)).isTrue();

        env.append(fast, AppendTableTest.frame(env, 0, 10));
        loop.trigger(fast);
        await(() -> env.wal.state(fast).publishedSeq() == 1);
        assertThat(env.wal.state(slow).publishedSeq()).isZero();

        // Segment 2 lands while the pass over segment 1 runs: the trigger must not be lost.
        env.append(slow, AppendTableTest.frame(env, 10, 10));
        loop.trigger(slow);
        releaseSlow.countDown();
        await(() -> env.wal.state(slow).publishedSeq() == 2);
      }
      AppendTableTest.assertIds(TestEnvironment.readAll(env.catalog.loadTable(
          org.apache.iceberg.catalog.TableIdentifier.of("db", "slow"))), 20);
    }
  }

  @Test
  void atMostOnePassPerTableUnderConcurrentTriggers() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      AtomicInteger active = new AtomicInteger();
      AtomicInteger maxActive = new AtomicInteger();
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal t, long fromSeq, long toSeq) {
          maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
          sleep(30); // widens the window in which a second pass of the table would show up
        }

        @Override
        public void afterCommit(TableWal t, long fromSeq, long toSeq) {
          active.decrementAndGet();
        }
      };
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), hooks), env.wal,
          TestEnvironment.CATALOG, NO_TICK, r -> {}, 4).start()) {
        Thread[] triggerers = new Thread[3];
        for (int i = 0; i < triggerers.length; i++) {
          triggerers[i] = new Thread(() -> {
            for (int n = 0; n < 200; n++) {
              loop.trigger(tw);
              sleep(2);
            }
          });
          triggerers[i].start();
        }
        for (int s = 0; s < 6; s++) {
          env.append(tw, AppendTableTest.frame(env, s * 10L, 10));
          loop.trigger(tw);
          sleep(40);
        }
        for (Thread t : triggerers) {
          t.join();
        }
        await(() -> env.wal.state(tw).publishedSeq() == 6);
      }
      assertThat(maxActive.get()).isEqualTo(1);
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 60);
    }
  }

  @Test
  void exclusiveWorkWaitsForThePassHoldsNewOnesBackAndIsNotStarvedByTriggers() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      AtomicInteger active = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      CountDownLatch passEntered = new CountDownLatch(1);
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal t, long fromSeq, long toSeq) {
          if (active.incrementAndGet() > 1) {
            overlaps.incrementAndGet();
          }
          passEntered.countDown();
          sleep(30);
        }

        @Override
        public void afterCommit(TableWal t, long fromSeq, long toSeq) {
          active.decrementAndGet();
        }
      };
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), hooks), env.wal,
          TestEnvironment.CATALOG, NO_TICK, r -> {}, 2).start()) {
        // Steady ingestion: a segment and a trigger every 10 ms, so a pass is always pending.
        Thread ingest = new Thread(() -> {
          for (int s = 0; s < 60; s++) {
            env.append(tw, AppendTableTest.frame(env, s * 10L, 10));
            loop.trigger(tw);
            sleep(10);
          }
        });
        ingest.start();
        assertThat(passEntered.await(60, TimeUnit.SECONDS)).isTrue();
        for (int round = 0; round < 3; round++) {
          long before = env.wal.state(tw).publishedSeq();
          String answer = loop.exclusive(tw, () -> {
            if (active.incrementAndGet() > 1) {
              overlaps.incrementAndGet();
            }
            long during = env.wal.state(tw).publishedSeq();
            sleep(100);
            // Triggers arrived meanwhile, but no pass published anything during the work.
            assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(during);
            active.decrementAndGet();
            return "done";
          });
          assertThat(answer).isEqualTo("done");
          assertThat(env.wal.state(tw).publishedSeq()).isGreaterThanOrEqualTo(before);
        }
        ingest.join();
        // Passes triggered during the exclusive work ran afterwards: everything is published.
        await(() -> env.wal.state(tw).publishedSeq() == 60);
      }
      assertThat(overlaps.get()).isZero();
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 600);
    }
  }

  @Test
  void triggersNeverListTheWal() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      CountingWal wal = new CountingWal(env.wal);
      Reconciler reconciler = new Reconciler(env.catalogs, wal, env.store, env.tombstones, env.allocator, env.duckdb, TestEnvironment.options());
      try (ReconcileLoop loop = new ReconcileLoop(reconciler, wal, TestEnvironment.CATALOG, NO_TICK, r -> {})
          .start()) {
        await(() -> wal.listings.get() == 1); // the first tick
        for (int s = 1; s <= 3; s++) {
          env.append(tw, AppendTableTest.frame(env, (s - 1) * 10L, 10));
          loop.trigger(tw);
          long seq = s;
          await(() -> env.wal.state(tw).publishedSeq() == seq);
        }
      }
      assertThat(wal.listings.get()).isEqualTo(1);
    }
  }

  @Test
  void normalTicksPassOnlyMarkedTablesAndTheFullSweepHealsAMissingMarker() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      CountingWal wal = new CountingWal(env.wal);
      Reconciler reconciler = new Reconciler(env.catalogs, wal, env.store, env.tombstones, env.allocator,
          env.duckdb, TestEnvironment.options());
      Duration sweepInterval = Duration.ofSeconds(3);
      try (ReconcileLoop loop = new ReconcileLoop(reconciler, wal, TestEnvironment.CATALOG,
          Duration.ofMillis(50), r -> {}).withSweepInterval(sweepInterval).start()) {
        await(() -> wal.listings.get() == 1); // the first tick is a full sweep
        long swept = System.nanoTime();

        // A marked segment is published by a normal tick, which then clears the marker.
        env.append(tw, AppendTableTest.frame(env, 0, 10));
        assertThat(env.store.head(tw.pendingKey())).isPresent();
        await(() -> env.wal.state(tw).publishedSeq() == 1);
        await(() -> env.store.head(tw.pendingKey()).isEmpty());

        // A writer that crashed between its segment and its marker: normal ticks do not see it.
        env.append(tw, AppendTableTest.frame(env, 10, 10));
        env.store.delete(tw.pendingKey());
        int ticks = wal.pendingListings.get();
        await(() -> wal.pendingListings.get() >= ticks + 3);
        if (System.nanoTime() - swept < sweepInterval.toNanos()) {
          assertThat(wal.listings.get()).isEqualTo(1);
          assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(1);
        }
        // The next full sweep finds it.
        await(() -> env.wal.state(tw).publishedSeq() == 2);
        assertThat(wal.listings.get()).isGreaterThanOrEqualTo(2);
        await(() -> env.store.head(tw.pendingKey()).isEmpty());
      }
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 20);
    }
  }

  @Test
  void closeWaitsForThePassInFlight() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      CountDownLatch entered = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      ReconcileHooks hooks = new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal t, long fromSeq, long toSeq) {
          entered.countDown();
          awaitLatch(release);
        }
      };
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), hooks), env.wal,
          TestEnvironment.CATALOG, NO_TICK, results::add).start();
      env.append(tw, AppendTableTest.frame(env, 0, 10));
      loop.trigger(tw);
      assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();

      Thread closer = new Thread(loop::close);
      closer.start();
      closer.join(300);
      assertThat(closer.isAlive()).as("close returned while a pass was in flight").isTrue();
      release.countDown();
      closer.join(60_000);
      assertThat(closer.isAlive()).isFalse();

      assertThat(results).singleElement().satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        assertThat(r.message()).isEqualTo("committed");
      });
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(1);
      loop.trigger(tw); // ignored after close
      assertThat(results).hasSize(1);
    }
  }

  @Test
  void rejectsNonPositiveParallelism() {
    assertThatThrownBy(() -> new ReconcileLoop(null, null, null, NO_TICK, r -> {}, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reconcile parallelism must be positive, got 0");
  }

  /** A WAL that counts how often the tables (all, or the marked ones) are listed. */
  private static final class CountingWal implements WalLog {
    final AtomicInteger listings = new AtomicInteger();
    final AtomicInteger pendingListings = new AtomicInteger();
    private final WalLog delegate;

    CountingWal(WalLog delegate) {
      this.delegate = delegate;
    }

    @Override
    public int deleteTable(TableWal table) {
      return delegate.deleteTable(table);
    }

    @Override
    public WalState state(TableWal table) {
      return delegate.state(table);
    }

    @Override
    public List<Long> segmentsAfter(TableWal table, long afterSeq) {
      return delegate.segmentsAfter(table, afterSeq);
    }

    @Override
    public Optional<WalSegment> read(TableWal table, long seq) {
      return delegate.read(table, seq);
    }

    @Override
    public void advancePublished(TableWal table, long seq) {
      delegate.advancePublished(table, seq);
    }

    @Override
    public int collectGarbage(TableWal table, long seq, java.time.Duration producerRetention) {
      return delegate.collectGarbage(table, seq, producerRetention);
    }

    @Override
    public io.storageengine.wal.ProducerWindows producerWindows(TableWal table, long beforeSeq,
        java.time.Duration retention) {
      return delegate.producerWindows(table, beforeSeq, retention);
    }

    @Override
    public void advanceProducerWindows(TableWal table, long throughSeq, java.time.Duration retention,
        long nowMillis, List<WalSegment> known) {
      delegate.advanceProducerWindows(table, throughSeq, retention, nowMillis, known);
    }

    @Override
    public Optional<TableName> tableName(TableWal table) {
      return delegate.tableName(table);
    }

    @Override
    public List<TableWal> tables(String catalogId) {
      listings.incrementAndGet();
      return delegate.tables(catalogId);
    }

    @Override
    public List<TableWal> pendingTables(String catalogId) {
      pendingListings.incrementAndGet();
      return delegate.pendingTables(catalogId);
    }

    @Override
    public void markPending(TableWal table) {
      delegate.markPending(table);
    }

    @Override
    public boolean clearPending(TableWal table) {
      return delegate.clearPending(table);
    }
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch not released in time");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not reached in time").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}

package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.AdmissionPressure;
import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Passes defer to a burst of stream admission: they wait while it lasts, resume when it ends,
 * and never wait past the maximum deferral after they were scheduled, however long it lasts.
 */
class ReconcileLoopAdmissionTest {
  private static final Duration NO_TICK = Duration.ofHours(1);

  @TempDir Path dir;

  /** A pressure the test sets, which counts the times it was asked and when last while high. */
  private static final class TestPressure implements AdmissionPressure {
    final AtomicBoolean high = new AtomicBoolean(true);
    final AtomicInteger askedWhileHigh = new AtomicInteger();
    final AtomicInteger asked = new AtomicInteger();
    final AtomicLong lastAskedWhileHigh = new AtomicLong();

    @Override
    public boolean high() {
      asked.incrementAndGet();
      boolean answer = high.get();
      if (answer) {
        askedWhileHigh.incrementAndGet();
        lastAskedWhileHigh.set(System.nanoTime());
      }
      return answer;
    }
  }

  /** Records when each table's first commit began. */
  private static final class CommitTimes implements ReconcileHooks {
    final Map<TableWal, Long> firstCommit = new ConcurrentHashMap<>();

    @Override
    public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
      firstCommit.putIfAbsent(table, System.nanoTime());
    }
  }

  @Test
  void passWaitsWhileTheBurstLastsAndResumesWhenItEnds() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      TableWal table = table(env, "events");
      TestPressure pressure = new TestPressure();
      CommitTimes commits = new CommitTimes();
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), commits),
          env.wal, TestEnvironment.CATALOG, NO_TICK, r -> {}, 2)
          .withAdmissionPressure(pressure, Duration.ofMinutes(10)).start()) {
        env.append(table, AppendTableTest.frame(env, 0, 10));
        loop.trigger(table);
        Thread.sleep(1000);
        assertThat(env.wal.state(table).publishedSeq()).isZero();
        assertThat(commits.firstCommit).isEmpty();
        long released = System.nanoTime();
        pressure.high.set(false);
        await(() -> env.wal.state(table).publishedSeq() == 1);
        assertThat(commits.firstCommit.get(table)).isGreaterThan(released);
        // It kept asking while it waited (every 20 ms), not once.
        assertThat(pressure.askedWhileHigh.get()).isGreaterThan(5);
      }
      AppendTableTest.assertIds(TestEnvironment.readAll(env.catalog.loadTable(
          org.apache.iceberg.catalog.TableIdentifier.of("db", "events"))), 10);
    }
  }

  @Test
  void noPassWaitsPastTheDeferralAfterItWasScheduledWhileTheBurstNeverEnds() throws Exception {
    Duration deferral = Duration.ofMillis(800);
    try (TestEnvironment env = new TestEnvironment(dir)) {
      List<TableWal> tables = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        tables.add(table(env, "t" + i));
      }
      TestPressure pressure = new TestPressure();
      CommitTimes commits = new CommitTimes();
      // One pass at a time: the second and third table queue behind the first one's wait.
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options(), commits),
          env.wal, TestEnvironment.CATALOG, NO_TICK, r -> {}, 1)
          .withAdmissionPressure(pressure, deferral).start()) {
        for (TableWal table : tables) {
          env.append(table, AppendTableTest.frame(env, 0, 10));
        }
        long beforeTriggers = System.nanoTime();
        for (TableWal table : tables) {
          loop.trigger(table);
        }
        long afterTriggers = System.nanoTime();
        for (TableWal table : tables) {
          await(() -> env.wal.state(table).publishedSeq() == 1);
        }
        // The first pass waited out its whole deferral: the burst never ended.
        assertThat(commits.firstCommit.get(tables.get(0)) - beforeTriggers)
            .isGreaterThanOrEqualTo(deferral.toNanos());
        // Nobody waited past the deferral after the last trigger: the queued passes' deadlines
        // ran while they queued, so they did not wait a deferral each.
        assertThat(pressure.lastAskedWhileHigh.get() - afterTriggers).isLessThan(deferral.toNanos());
      }
    }
  }

  @Test
  void zeroDeferralNeverAsks() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      TableWal table = table(env, "events");
      TestPressure pressure = new TestPressure();
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options()), env.wal,
          TestEnvironment.CATALOG, NO_TICK, r -> {}, 2)
          .withAdmissionPressure(pressure, Duration.ZERO).start()) {
        env.append(table, AppendTableTest.frame(env, 0, 10));
        loop.trigger(table);
        await(() -> env.wal.state(table).publishedSeq() == 1);
      }
      assertThat(pressure.asked.get()).isZero();
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options()), env.wal,
          TestEnvironment.CATALOG, NO_TICK, r -> {})) {
        assertThatThrownBy(() -> loop.withAdmissionPressure(pressure, Duration.ofMillis(-1)))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("reconcile admission deferral must not be negative, got PT-0.001S");
      }
    }
  }

  private static TableWal table(TestEnvironment env, String name) {
    return env.walOf(env.createTable(name, AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
        SortOrder.unsorted(), Map.of()), name);
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not reached in time").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}

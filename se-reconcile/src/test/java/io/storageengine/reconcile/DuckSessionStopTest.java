package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.Cancel;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session bound to a {@link Cancel} ({@link DuckSession#stopOn}): the request interrupts the
 * DuckDB statement in flight and every later statement fails with its reason; an entity tail
 * fold stopped that way keeps no state ({@link WalTailRows#foldEntityLayer}).
 */
class DuckSessionStopTest {
  @TempDir Path dir;

  @Test
  void aRequestInterruptsTheRunningStatementWithItsReasonAndRefusesTheNext() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir);
        BufferAllocator child = env.allocator.newChildAllocator("stop-test", 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(env.duckdb, child, 2, TestEnvironment.CATALOG)) {
      Cancel cancel = new Cancel();
      SeException timedOut = new SeException(ErrorCode.TIMED_OUT, "stopped by the test");
      ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
      try (Cancel.Registration ignored = duck.stopOn(cancel)) {
        timer.schedule(() -> cancel.cancel(timedOut), 300, TimeUnit.MILLISECONDS);
        long started = System.nanoTime();
        // Minutes of work when not stopped.
        assertThatThrownBy(() -> duck.queryLong("SELECT count(*) FROM range(100000000) a, range(100000) b "
            + "WHERE a.range + b.range = -1")).isSameAs(timedOut);
        long ms = (System.nanoTime() - started) / 1_000_000;
        assertThat(ms).isGreaterThanOrEqualTo(250).isLessThan(20_000);
        assertThatThrownBy(() -> duck.execute("SELECT 1")).isSameAs(timedOut);
      } finally {
        timer.shutdownNow();
      }
      // Unbound again, the session runs statements.
      assertThat(duck.queryLong("SELECT 41 + 1")).isEqualTo(42);
    }
  }

  @Test
  void anEntityTailFoldStoppedBeforeItStartsKeepsNothing() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 100, 1));
      env.reconciler(TestEnvironment.options()).reconcile(tw);
      SlicedTableTest.append(env, tw, SlicedTableTest.upserts(90, 110, 2));
      table.refresh();
      WalSegment second = env.wal.read(tw, 2).orElseThrow();
      WalTailRows rows = new WalTailRows(env.duckdb, env.allocator, env.store, env.tombstones,
          TestEnvironment.options());
      Cancel cancel = new Cancel();
      SeException gone = new SeException(ErrorCode.CANCELLED, "query cancelled");
      cancel.cancel(gone);
      String state = rows.newEntityState();
      Path target = dir.resolve("layer.parquet");
      assertThatThrownBy(() -> rows.foldEntityLayer(TestEnvironment.CATALOG, table, table.currentSnapshot(), 1,
          List.of(), 0, List.of(second), target, state, cancel)).isSameAs(gone);
      assertThat(Files.exists(target)).isFalse();
      // The state was never made: a layer folding onto it finds it gone.
      assertThat(rows.foldEntityLayer(TestEnvironment.CATALOG, table, table.currentSnapshot(), 1, List.of(state), 1,
          List.of(second), dir.resolve("next.parquet"), rows.newEntityState())).isEmpty();
    }
  }
}

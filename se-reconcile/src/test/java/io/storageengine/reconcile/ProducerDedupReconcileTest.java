package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reconciliation skips a WAL frame whose (producer, sequence) an earlier frame carries, within a
 * pass, across passes (the earlier frame already in the table) and after the earlier frame's
 * segment was garbage-collected; a pass holding nothing but duplicates still commits its range.
 */
class ProducerDedupReconcileTest {
  @TempDir Path dir;

  @Test
  void eachProducerSequenceLandsOnceWhateverTheWalHolds() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      env.wal.catchUpProducerWindows(tw, null, Duration.ofDays(7)); // what ingestion does first
      env.append(tw, stamped(env, 0, "p", 0), stamped(env, 0, "p", 0), AppendTableTest.frame(env, 100, 2));
      env.append(tw, stamped(env, 0, "p", 0), stamped(env, 10, "p", 1), stamped(env, 10, "q", 1));
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      ReconcileResult first = reconciler.reconcile(tw);
      assertThat(first.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(ids(table)).containsExactlyInAnyOrder(0L, 1L, 100L, 101L, 10L, 11L, 10L, 11L);

      long onlyDuplicates = env.append(tw, stamped(env, 10, "p", 1), stamped(env, 0, "p", 0));
      ReconcileResult second = reconciler.reconcile(tw);
      assertThat(second.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(second.toSeq()).isEqualTo(onlyDuplicates);
      assertThat(ids(table)).hasSize(8);

      assertThat(env.wal.collectGarbage(tw, onlyDuplicates, Duration.ofDays(7))).isEqualTo(3);
      env.append(tw, stamped(env, 0, "p", 0), stamped(env, 20, "p", 2));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(ids(table)).as("after GC only the new sequence lands").hasSize(10).contains(20L, 21L);
    }
  }

  private static WalFrame stamped(TestEnvironment env, long firstId, String producer, long sequence) {
    WalFrame f = AppendTableTest.frame(env, firstId, 2);
    return new WalFrame(f.operation(), f.schemaId(), f.requestIds(), f.rowCount(), f.arrowIpc(),
        new ProducerStamp(producer, sequence, System.currentTimeMillis()));
  }

  private static List<Long> ids(Table table) {
    table.refresh();
    return TestEnvironment.readAll(table).stream().map(r -> (Long) r.getField("id")).toList();
  }
}

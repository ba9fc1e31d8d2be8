package io.storageengine.reconcile.maintenance;

import io.storageengine.catalog.TableSettings;
import io.storageengine.reconcile.WalHighWaterMark;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Deletes WAL segments that are committed to the table, but only up to the WAL high-water mark
 * of a snapshot at least the safety age old, never up to the newest mark.
 *
 * <p>Why the age: a writer that stalls after creating its segment, while that segment is
 * reconciled, published and collected, would on waking see its seq at or below {@code gc_seq},
 * take the slot for recycled and write its frames again: a duplicate. Collecting only what was
 * committed long ago (longer than any writer stalls) closes that window. {@link WalLog}
 * raises {@code gc_seq} by compare-and-swap before it deletes, and never above
 * {@code published_seq}.
 */
final class WalGarbageCollector {
  private WalGarbageCollector() {}

  /** The seq up to which segments may be collected: the mark as of {@code cutoffMillis}. */
  static long collectableSeq(Table table, long cutoffMillis) {
    Snapshot s = table.currentSnapshot();
    while (s != null && s.timestampMillis() > cutoffMillis) {
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    // Walk on from the first old enough snapshot to the newest one carrying a mark.
    while (s != null) {
      Long seq = WalHighWaterMark.seqOf(s);
      if (seq != null) {
        return seq;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return 0;
  }

  /** Returns the number of segments deleted. */
  static int collect(WalLog wal, TableWal tableWal, Table table, MaintenancePolicy policy, long nowMillis) {
    table.refresh();
    long seq = collectableSeq(table, nowMillis - policy.walGcAge().toMillis());
    if (seq <= 0 || seq <= wal.state(tableWal).gcSeq()) {
      return 0;
    }
    // The table's producer retention: GC folds the deleted segments into producers.json first.
    return wal.collectGarbage(tableWal, seq, TableSettings.producerRetention(table));
  }
}

package io.storageengine.reconcile.maintenance;

import io.storageengine.reconcile.WalHighWaterMark;
import java.util.HashSet;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Expires snapshots older than the retention, keeping at least the policy's minimum of recent
 * ancestors, and always the newest ancestor carrying {@code se.wal.seq}: it is how reconcile
 * finds the table's WAL high-water mark, so the lineage stays readable whatever committed
 * after it (maintenance commits carry the mark too, but other writers' commits do not). Files
 * only the expired snapshots referenced are deleted.
 */
final class SnapshotExpiry {
  private SnapshotExpiry() {}

  /** Returns the number of snapshots expired. */
  static int expire(Table table, MaintenancePolicy policy, long nowMillis) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return 0;
    }
    int keep = Math.max(policy.minSnapshots(), markDepth(table, current));
    long cutoff = nowMillis - policy.snapshotRetention().toMillis();
    Set<Long> kept = new HashSet<>();
    Snapshot s = current;
    for (int i = 0; i < keep && s != null; i++) {
      kept.add(s.snapshotId());
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    boolean anyExpired = false;
    for (Snapshot snapshot : table.snapshots()) {
      if (!kept.contains(snapshot.snapshotId()) && snapshot.timestampMillis() < cutoff) {
        anyExpired = true;
        break;
      }
    }
    if (!anyExpired) {
      return 0; // no metadata commit when nothing would change
    }
    Set<Long> before = ids(table);
    table.expireSnapshots().expireOlderThan(cutoff).retainLast(keep).cleanExpiredFiles(true).commit();
    table.refresh();
    before.removeAll(ids(table));
    return before.size();
  }

  /** 1-based position, from the current snapshot, of the newest ancestor with {@code se.wal.seq}. */
  static int markDepth(Table table, Snapshot current) {
    int depth = 1;
    for (Snapshot s = current; s != null; depth++) {
      if (WalHighWaterMark.seqOf(s) != null) {
        return depth;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return 1;
  }

  private static Set<Long> ids(Table table) {
    Set<Long> ids = new HashSet<>();
    table.snapshots().forEach(s -> ids.add(s.snapshotId()));
    return ids;
  }
}

package io.storageengine.reconcile;

import io.storageengine.catalog.TableProperties;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;
import org.apache.iceberg.Table;

/**
 * The last WAL seq a table's state includes: {@code se.wal.seq} of the newest snapshot in the
 * current lineage that has one (maintenance commits carry it forward), 0 when none has.
 */
public final class WalHighWaterMark {
  private WalHighWaterMark() {}

  public static long of(Table table) {
    return of(table, table.currentSnapshot());
  }

  /** The last WAL seq the state at {@code snapshot} (null: none) of {@code table} includes. */
  public static long of(Table table, Snapshot snapshot) {
    Snapshot s = snapshot;
    while (s != null) {
      Long seq = seqOf(s);
      if (seq != null) {
        return seq;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return 0;
  }

  /** The {@code se.wal.seq} of one snapshot, or null when it has none. */
  public static Long seqOf(Snapshot snapshot) {
    String value = snapshot.summary() == null ? null : snapshot.summary().get(TableProperties.SUMMARY_WAL_SEQ);
    return value == null ? null : Long.parseLong(value);
  }

  /**
   * Whether {@code newer} descends from the snapshot {@code ancestorId} of {@code table} through
   * at most {@code maxCommits} commits (those after the ancestor, up to and including
   * {@code newer}), each of which {@code allowed} accepts.
   */
  public static boolean descendsThrough(Table table, Snapshot newer, long ancestorId, int maxCommits,
      java.util.function.Predicate<Snapshot> allowed) {
    Snapshot s = newer;
    for (int commits = 0; commits < maxCommits && s != null; commits++) {
      if (!allowed.test(s) || s.parentId() == null) {
        return false;
      }
      if (s.parentId() == ancestorId) {
        return true;
      }
      s = table.snapshot(s.parentId());
    }
    return false;
  }

  /**
   * Fails a commit (Iceberg re-runs it on every internal retry) unless the lineage it would
   * extend still has high-water mark {@code expected}: if another reconciler committed a WAL
   * range in the meantime, applying ours on top would duplicate it.
   */
  public static SnapshotAncestryValidator expecting(long expected) {
    return new SnapshotAncestryValidator() {
      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        for (Snapshot s : ancestors) {
          Long seq = seqOf(s);
          if (seq != null) {
            return seq == expected;
          }
        }
        return expected == 0;
      }

      @Override
      public String errorMessage() {
        return "the table's WAL high-water mark moved away from " + expected;
      }
    };
  }
}

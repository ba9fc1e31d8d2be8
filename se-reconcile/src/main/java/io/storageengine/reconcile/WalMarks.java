package io.storageengine.reconcile;

import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSlices;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;

/**
 * Every WAL progress entry of a table's lineage together: {@code se.wal.seq} and, on a sliced
 * table, the {@code se.wal.seq.<slice>} entries (see {@link TableSlices}). Maintenance commits
 * carry all of them forward onto the lineage they read them from ({@link #carried},
 * {@link #expecting}); a slice's reconcile commit moves its own entry and recomputes
 * {@code se.wal.seq} ({@link #committingSlice}).
 */
public final class WalMarks {
  private WalMarks() {}

  /**
   * The progress entries of the newest snapshot in {@code table}'s current lineage that has
   * {@code se.wal.seq}; empty when none has.
   */
  public static Map<String, String> carried(Table table) {
    return of(lineage(table, table.currentSnapshot()));
  }

  private static Iterable<Snapshot> lineage(Table table, Snapshot from) {
    return () -> new java.util.Iterator<>() {
      private Snapshot next = from;

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public Snapshot next() {
        Snapshot s = next;
        next = s.parentId() == null ? null : table.snapshot(s.parentId());
        return s;
      }
    };
  }

  private static Map<String, String> of(Iterable<Snapshot> ancestors) {
    Map<String, String> marks = new TreeMap<>();
    for (Snapshot s : ancestors) {
      if (s.summary() != null && s.summary().containsKey(TableProperties.SUMMARY_WAL_SEQ)) {
        for (Map.Entry<String, String> e : s.summary().entrySet()) {
          if (e.getKey().equals(TableProperties.SUMMARY_WAL_SEQ)
              || e.getKey().startsWith(TableProperties.SUMMARY_WAL_SEQ_SLICE_PREFIX)) {
            marks.put(e.getKey(), e.getValue());
          }
        }
        break;
      }
    }
    return marks;
  }

  /** Sets every entry of {@code marks} on {@code update}'s snapshot summary. */
  public static void carry(SnapshotUpdate<?> update, Map<String, String> marks) {
    marks.forEach(update::set);
  }

  /**
   * Fails a commit (Iceberg re-runs it on every internal retry) unless the lineage it would
   * extend still has exactly the progress entries {@code expected}: a reconcile commit landed
   * in the meantime otherwise, and carrying the old entries would make its range count as not
   * applied.
   */
  public static SnapshotAncestryValidator expecting(Map<String, String> expected) {
    return new SnapshotAncestryValidator() {
      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        return of(ancestors).equals(expected);
      }

      @Override
      public String errorMessage() {
        return "the table's WAL progress moved away from " + expected;
      }
    };
  }

  /**
   * The commit of a pass of slice {@code sliceId} over WAL {@code ..toSeq}: fails it unless the
   * lineage it would extend still has the slice's progress at {@code expected} (another pass of
   * the same slice committed otherwise), and sets on {@code update}'s summary the progress
   * entries of that lineage with the slice's moved to {@code toSeq}, for every slice of
   * {@code slices}, and {@code se.wal.seq} = their least. Passes of other slices that land in
   * between are thereby kept, not overwritten: Iceberg runs the validator, on every internal
   * retry, against the lineage the snapshot is then built on, before it computes the summary.
   */
  static SnapshotAncestryValidator committingSlice(SnapshotUpdate<?> update, List<TableSlices.Slice> slices,
      int sliceId, long expected, long toSeq) {
    return new SnapshotAncestryValidator() {
      private long found;

      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        Map<String, String> now = of(ancestors);
        String own = now.get(TableSlices.markKey(sliceId));
        found = own == null ? 0 : Long.parseLong(own);
        if (found != expected) {
          return false;
        }
        long least = Long.MAX_VALUE;
        for (TableSlices.Slice s : slices) {
          String value = now.get(TableSlices.markKey(s.id()));
          long mark = s.id() == sliceId ? toSeq : value == null ? 0 : Long.parseLong(value);
          update.set(TableSlices.markKey(s.id()), Long.toString(mark));
          least = Math.min(least, mark);
        }
        update.set(TableProperties.SUMMARY_WAL_SEQ, Long.toString(least));
        return true;
      }

      @Override
      public String errorMessage() {
        return "slice " + sliceId + "'s WAL progress moved from " + expected + " to " + found;
      }
    };
  }
}

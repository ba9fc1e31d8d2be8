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
   * the same slice committed otherwise) and still has the slice (a split or merge replaced it
   * otherwise), and sets on {@code update}'s summary the progress entries of that lineage with
   * the slice's moved to {@code toSeq}, for every slice of that lineage ({@code slices} when it
   * has none yet), and {@code se.wal.seq} = their least. Passes of other slices that land in
   * between are thereby kept, not overwritten: Iceberg runs the validator, on every internal
   * retry, against the lineage the snapshot is then built on, before it computes the summary.
   * Entries of {@code stale} (ids the planned snapshot still names though a split or merge
   * replaced them, see {@code SliceMeta.Layout#asOf}) are left out, so such a commit repairs the
   * lineage. An update's summary keeps every entry an earlier attempt set (Iceberg has no way to
   * unset one), so a retry whose lineage has other slices than the attempt before (a split or
   * merge landed in between) fails instead of carrying the replaced slice's entry.
   */
  static SnapshotAncestryValidator committingSlice(SnapshotUpdate<?> update, List<TableSlices.Slice> slices,
      java.util.Set<Integer> stale, int sliceId, long expected, long toSeq) {
    return new SnapshotAncestryValidator() {
      private String problem = "";
      private java.util.Set<Integer> written;

      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        Map<Integer, Long> now = sliceMarks(of(ancestors), slices);
        now.keySet().removeAll(stale);
        if (!sameSlicesAsBefore(now.keySet())) {
          return false;
        }
        Long own = now.get(sliceId);
        if (own == null) {
          problem = "slice " + sliceId + " no longer exists: a split or merge replaced it";
          return false;
        }
        if (own != expected) {
          problem = "slice " + sliceId + "'s WAL progress moved from " + expected + " to " + own;
          return false;
        }
        now.put(sliceId, toSeq);
        set(update, now);
        return true;
      }

      private boolean sameSlicesAsBefore(java.util.Set<Integer> ids) {
        if (written != null && !written.equals(ids)) {
          problem = "the table's slices changed from " + written + " to " + ids + " while the commit was retried";
          return false;
        }
        written = new java.util.TreeSet<>(ids);
        return true;
      }

      @Override
      public String errorMessage() {
        return problem;
      }
    };
  }

  /**
   * The commit of a split or merge ({@code maintenance.SliceResizer}) planned on snapshot
   * {@code baseId}: fails it unless the lineage it would extend still has each slice of
   * {@code from} at progress {@code expected} and no snapshot since {@code baseId} other than a
   * rewrite added a data file of them or a deletion vector on one (a pass of a replaced slice
   * committed, or a writer outside the passes touched their rows). Sets on {@code update}'s
   * summary that lineage's progress entries without {@code from}'s, each slice of {@code to} at
   * {@code expected}, and {@code se.wal.seq} = their least. {@code slices}: the slices when the
   * lineage has no progress entries yet. Like {@link #committingSlice}, a retry whose lineage
   * has other slices than the attempt before fails.
   */
  public static SnapshotAncestryValidator replacingSlices(Table table, SnapshotUpdate<?> update, Long baseId,
      List<TableSlices.Slice> slices, List<Integer> from, List<TableSlices.Slice> to, long expected) {
    return new SnapshotAncestryValidator() {
      private String problem = "";
      private java.util.Set<Integer> written;

      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        for (Snapshot s : ancestors) {
          if (baseId != null && s.snapshotId() == baseId) {
            break;
          }
          for (int id : from) {
            if (SliceCommit.touchesSlice(table, s, id)) {
              problem = "snapshot " + s.snapshotId() + " changed files of slice " + id;
              return false;
            }
          }
        }
        Map<Integer, Long> now = sliceMarks(of(ancestors), slices);
        for (int id : from) {
          Long mark = now.remove(id);
          if (mark == null || mark != expected) {
            problem = "slice " + id + "'s WAL progress is " + mark + ", not " + expected;
            return false;
          }
        }
        for (TableSlices.Slice s : to) {
          now.put(s.id(), expected);
        }
        if (written != null && !written.equals(now.keySet())) {
          // An earlier attempt's entries stay in the update's summary (see committingSlice).
          problem = "the table's slices changed from " + written + " to " + now.keySet() + " while the commit was retried";
          return false;
        }
        written = new java.util.TreeSet<>(now.keySet());
        set(update, now);
        return true;
      }

      @Override
      public String errorMessage() {
        return problem;
      }
    };
  }

  /** The per-slice entries of {@code marks}; every slice of {@code slices} at 0 when there are none. */
  private static Map<Integer, Long> sliceMarks(Map<String, String> marks, List<TableSlices.Slice> slices) {
    Map<Integer, Long> result = new TreeMap<>();
    String prefix = TableProperties.SUMMARY_WAL_SEQ_SLICE_PREFIX;
    for (Map.Entry<String, String> e : marks.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        result.put(Integer.parseInt(e.getKey().substring(prefix.length())), Long.parseLong(e.getValue()));
      }
    }
    if (result.isEmpty()) {
      slices.forEach(s -> result.put(s.id(), 0L));
    }
    return result;
  }

  private static void set(SnapshotUpdate<?> update, Map<Integer, Long> marks) {
    long least = Long.MAX_VALUE;
    for (Map.Entry<Integer, Long> e : marks.entrySet()) {
      update.set(TableSlices.markKey(e.getKey()), Long.toString(e.getValue()));
      least = Math.min(least, e.getValue());
    }
    update.set(TableProperties.SUMMARY_WAL_SEQ, Long.toString(least));
  }
}

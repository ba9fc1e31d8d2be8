package io.storageengine.reconcile;

import io.storageengine.catalog.TableSlices;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The WAL tail of a sliced entity table as of a snapshot: the staged segments start after the
 * least progress of the slices ({@code se.wal.seq}), so the rows of a key whose slice is further
 * along, at or below its slice's progress, are already in the snapshot and are dropped; a key's
 * tombstones count up to its own slice's progress.
 */
final class SliceTail {
  private final EntityColumns columns;
  private final List<TableSlices.Slice> slices;
  private final Map<Integer, Long> marks;

  private SliceTail(EntityColumns columns, List<TableSlices.Slice> slices, Map<Integer, Long> marks) {
    this.columns = columns;
    this.slices = slices;
    this.marks = marks;
  }

  /** The tail's slices as of {@code snapshot} (null: none); null for a table that is not sliced. */
  static SliceTail of(ObjectStore store, TableWal tableWal, Table table, Snapshot snapshot) {
    Optional<SliceMeta.Layout> layout = SliceMeta.load(store, tableWal, table);
    if (layout.isEmpty()) {
      return null;
    }
    Map<Integer, Long> marks = TableSlices.marks(table, snapshot);
    return new SliceTail(new EntityColumns(table), layout.get().asOf(marks), marks);
  }

  /** Drops the staged WAL rows that their key's slice has reconciled as of the snapshot. */
  void dropReconciled(DuckSession duck) {
    SliceSql.dropReconciled(duck, columns, slices, marks);
  }

  /** The ids of the tail's slices. */
  List<Integer> ids() {
    return slices.stream().map(TableSlices.Slice::id).toList();
  }

  /** The furthest progress of any slice. */
  long mostProgress() {
    long most = 0;
    for (long m : marks.values()) {
      most = Math.max(most, m);
    }
    return most;
  }

  /** The progress of a key's slice, over the key columns of alias {@code b.}. */
  String markSql() {
    return SliceSql.markOf(columns, "b.", slices, marks);
  }
}

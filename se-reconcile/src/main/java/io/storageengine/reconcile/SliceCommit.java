package io.storageengine.reconcile;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.catalog.TableSlices;
import java.util.List;
import java.util.OptionalInt;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;
import org.apache.iceberg.Table;

/**
 * The commit of one slice's reconcile pass: a {@code RowDelta} whose conflict detection is
 * limited to the slice's own files, so that passes of other slices landing meanwhile (disjoint
 * keys, disjoint files) never fail it, while everything that could make it wrong does:
 *
 * <ul>
 *   <li>another pass of the same slice committed (the slice's progress moved, see
 *       {@link WalMarks#committingSlice});</li>
 *   <li>a snapshot since {@code base} (other than a rewrite) added a data file of the slice, or
 *       a deletion vector on one (a writer outside the slice's passes touched its rows);</li>
 *   <li>a data file the pass deletes rows from was removed (a compaction rewrote it:
 *       {@code validateDataFilesExist}), or a deletion vector it replaces was removed.</li>
 * </ul>
 *
 * <p>Each failure is a {@code ValidationException}: the pass reloads and starts again.
 */
final class SliceCommit {
  private SliceCommit() {}

  static void commit(Table table, Snapshot base, List<TableSlices.Slice> slices, int sliceId, long expected,
      long toSeq, TableChanges changes, String commitId) {
    RowDelta delta = ManifestThreads.commit(changes.rowDelta(table, base), table, base);
    delta.set(io.storageengine.catalog.TableProperties.SUMMARY_COMMIT_ID, commitId);
    delta.validateDeletedFiles();
    if (!changes.referencedDataFiles().isEmpty()) {
      delta.validateDataFilesExist(changes.referencedDataFiles());
    }
    java.util.Set<Integer> stale = new java.util.HashSet<>(TableSlices.marks(table, base).keySet());
    slices.forEach(s -> stale.remove(s.id()));
    SnapshotAncestryValidator marks = WalMarks.committingSlice(delta, slices, stale, sliceId, expected, toSeq);
    Long baseId = base == null ? null : base.snapshotId();
    delta.validateWith(new SnapshotAncestryValidator() {
      private String problem = "";

      @Override
      public boolean validate(Iterable<Snapshot> ancestors) {
        for (Snapshot s : ancestors) {
          if (baseId != null && s.snapshotId() == baseId) {
            break;
          }
          if (touchesSlice(table, s, sliceId)) {
            problem = "snapshot " + s.snapshotId() + " changed files of slice " + sliceId;
            return false;
          }
        }
        if (!marks.validate(ancestors)) {
          problem = marks.errorMessage();
          return false;
        }
        return true;
      }

      @Override
      public String errorMessage() {
        return problem;
      }
    });
    delta.commit();
  }

  /** True when {@code s} (not a rewrite) added a data file of the slice or a vector on one. */
  static boolean touchesSlice(Table table, Snapshot s, int sliceId) {
    if (DataOperations.REPLACE.equals(s.operation())) {
      return false;
    }
    for (DataFile f : s.addedDataFiles(table.io())) {
      if (inSlice(f.location(), sliceId)) {
        return true;
      }
    }
    for (DeleteFile d : s.addedDeleteFiles(table.io())) {
      if (d.referencedDataFile() == null || inSlice(d.referencedDataFile(), sliceId)) {
        return true;
      }
    }
    return false;
  }

  private static boolean inSlice(String location, int sliceId) {
    OptionalInt slice = TableSlices.sliceOfFile(location);
    return slice.isEmpty() || slice.getAsInt() == sliceId;
  }
}

package io.storageengine.reconcile;

import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;

/**
 * Everything a pass produced for one commit: new data files, new deletion vectors, the vectors
 * they replace (a data file's previous vector is merged into its new one), the data files the
 * vectors reference, and the filter that bounds the rows this commit may conflict with.
 */
record TableChanges(
    List<DataFile> dataFiles,
    List<DeleteFile> deleteVectors,
    List<DeleteFile> replacedDeleteVectors,
    Set<String> referencedDataFiles,
    Expression conflictFilter,
    long rowsWritten,
    long rowsRemoved,
    List<String> writtenLocations) {

  boolean isAppendOnly() {
    return deleteVectors.isEmpty() && replacedDeleteVectors.isEmpty();
  }

  /**
   * A row delta on {@code table} (whose commit checks whether it landed when its response is
   * lost, see {@link CommitOutcome}) with these files added and the replaced vectors removed,
   * validated from {@code base} (null: the table had no snapshot); the caller adds its own
   * conflict checks and commits it.
   */
  RowDelta rowDelta(Table table, Snapshot base) {
    RowDelta delta = CommitOutcome.checkingLanded(table).newRowDelta();
    for (DataFile f : dataFiles) {
      delta.addRows(f);
    }
    for (DeleteFile dv : deleteVectors) {
      delta.addDeletes(dv);
    }
    for (DeleteFile old : replacedDeleteVectors) {
      delta.removeDeletes(old);
    }
    if (base != null) {
      delta.validateFromSnapshot(base.snapshotId());
    }
    return delta;
  }
}

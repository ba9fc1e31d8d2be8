package io.storageengine.reconcile;

import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
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
}

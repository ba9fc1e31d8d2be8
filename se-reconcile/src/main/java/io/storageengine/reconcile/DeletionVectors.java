package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * Deletion-vector building for an entity batch: the current rows that the fold replaced or
 * deleted ({@link EntityFold#TABLE} rows with a {@code __file}) become positions in one new
 * deletion vector (Puffin) per touched data file. A file's previous vector is merged into its new
 * one and is then among the result's rewritten delete files; files not touched keep theirs.
 */
final class DeletionVectors {
  private DeletionVectors() {}

  /**
   * Writes the vectors; the result is empty when no current row was replaced.
   *
   * @param files the candidate files the current rows were read from (and their previous deletes)
   * @throws SeException (unavailable) when a vector cannot be written
   */
  static DeleteWriteResult write(DuckSession duck, Table table, CurrentRows files) {
    Map<String, long[]> positions = duck.positionsByFile("SELECT __file, __pos FROM " + EntityFold.TABLE
        + " WHERE __max_ord > 0 AND __file IS NOT NULL", "__file", "__pos");
    if (positions.isEmpty()) {
      return new DeleteWriteResult(List.of());
    }
    Map<String, FileScanTask> candidates = files.byLocalPath();
    Map<String, FileScanTask> byLocation = new HashMap<>();
    for (FileScanTask task : candidates.values()) {
      byLocation.put(task.file().location(), task);
    }
    OutputFileFactory outputs = OutputFileFactory.builderFor(table, 0, System.nanoTime())
        .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(outputs, location -> {
      FileScanTask task = byLocation.get(location);
      return task == null || task.deletes().isEmpty() ? null : files.deletes(task);
    });
    try (writer) {
      for (Map.Entry<String, long[]> e : positions.entrySet()) {
        DataFile file = candidates.get(e.getKey()).file();
        for (long pos : e.getValue()) {
          writer.delete(file.location(), pos, table.specs().get(file.specId()), file.partition());
        }
      }
    } catch (IOException e) {
      throw SeException.unavailable("cannot write deletion vectors for " + table.name() + ": " + e.getMessage(), e);
    }
    return writer.result();
  }
}

package io.storageengine.reconcile;

import io.storageengine.catalog.TableSlices;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.apache.iceberg.FileScanTask;

/** The scan tasks of one slice's data files ({@link TableSlices#sliceOfFile}). */
final class SliceFiles {
  private SliceFiles() {}

  static List<FileScanTask> of(List<FileScanTask> tasks, int sliceId) {
    List<FileScanTask> result = new ArrayList<>();
    for (FileScanTask t : tasks) {
      OptionalInt slice = TableSlices.sliceOfFile(t.file().location());
      if (slice.isPresent() && slice.getAsInt() == sliceId) {
        result.add(t);
      }
    }
    return result;
  }
}

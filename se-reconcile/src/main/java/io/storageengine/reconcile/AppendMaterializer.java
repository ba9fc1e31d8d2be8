package io.storageengine.reconcile;

import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;

/** Append tables: every staged WAL row becomes a row of new data files. */
final class AppendMaterializer {
  private AppendMaterializer() {}

  static TableChanges materialize(DuckSession duck, Table table, ReconcileOptions options) {
    DataFileWriter writer = new DataFileWriter(duck, table, options);
    try {
      List<DataFile> files = writer.write(WalStaging.TABLE, false, null);
      long rows = files.stream().mapToLong(DataFile::recordCount).sum();
      return new TableChanges(files, List.of(), List.of(), Set.of(), Expressions.alwaysTrue(), rows, 0,
          writer.writtenLocations());
    } catch (RuntimeException e) {
      Cleanup.deleteQuietly(table.io(), writer.writtenLocations());
      throw e;
    }
  }
}

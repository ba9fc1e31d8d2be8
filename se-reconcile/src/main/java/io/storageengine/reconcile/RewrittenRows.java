package io.storageengine.reconcile;

import io.storageengine.catalog.TableSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;

/**
 * What a key index holds of the data files a compaction wrote (per row its key, position, version
 * and explicit row id), read from their local copies before they are committed. Handed to this
 * process's passes after the commit ({@link TableGate#rewritten}), the sync that brings the
 * table's key index to the new files takes them from memory instead of reading every new file
 * back (9.5 M rows: 4-6 s under load, while the passes read the files instead of the index).
 */
public final class RewrittenRows {
  private final List<KeyIndex.WrittenFile> files;

  private RewrittenRows(List<KeyIndex.WrittenFile> files) {
    this.files = List.copyOf(files);
  }

  /** The memory the rows of {@code rows} rows take (four longs a row). */
  static long bytesFor(long rows) {
    return rows * 4 * Long.BYTES;
  }

  /**
   * Whether a key index may hold {@code table}'s rows (an entity table whose key is one integral
   * column, with a version column an index holds): only then are its rewritten rows worth reading.
   */
  public static boolean indexable(Table table) {
    return TableSettings.of(table).entity() && KeyIndexReads.supported(new EntityColumns(table));
  }

  /**
   * Reads the rows of the files {@code written} (location to local copy) of {@code table} (see
   * {@link #indexable}) through {@code duck}; null when a value cannot be held by an index.
   */
  public static RewrittenRows read(DuckSession duck, Table table, Map<String, Path> written) {
    EntityColumns columns = new EntityColumns(table);
    List<KeyIndex.WrittenFile> files = new ArrayList<>();
    try {
      for (Map.Entry<String, Path> e : written.entrySet()) {
        files.add(KeyIndexReads.readWritten(duck, columns.keys().get(0), columns.version(), e.getKey(), e.getValue()));
      }
    } catch (KeyIndex.Unusable e) {
      return null;
    }
    return new RewrittenRows(files);
  }

  List<KeyIndex.WrittenFile> files() {
    return files;
  }

  /** How many rows, in all files. */
  public long rows() {
    long rows = 0;
    for (KeyIndex.WrittenFile f : files) {
      rows += f.keys().length;
    }
    return rows;
  }
}

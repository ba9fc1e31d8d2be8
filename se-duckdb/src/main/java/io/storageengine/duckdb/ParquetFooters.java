package io.storageengine.duckdb;

import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;

/**
 * The Iceberg schema, with field ids, that Parquet data files were written with: a file's column
 * names are those of its time, its field ids tell which table field each column (nested ones
 * included) is. Read from the footer of a local copy; data files are immutable, so a schema is
 * kept by the file's location (bounded, least recently used first). Thread-safe.
 */
public final class ParquetFooters {
  /** Schemas kept by default. */
  public static final int DEFAULT_MAX_ENTRIES = 4096;

  private final Configuration conf = new Configuration();
  private final Map<String, Schema> cache;

  public ParquetFooters(int maxEntries) {
    this.cache = new LruMap<>(maxEntries);
  }

  /**
   * The schema of the data file at {@code location}, read from {@code local} (a local copy of it)
   * unless known. A file without field ids yields a schema without columns (nothing in it can be
   * matched by id). Throws {@code SeException(UNAVAILABLE)} when the footer cannot be read.
   */
  public Schema schema(String location, Path local) {
    synchronized (cache) {
      Schema known = cache.get(location);
      if (known != null) {
        return known;
      }
    }
    Schema schema = read(location, local);
    synchronized (cache) {
      cache.put(location, schema);
    }
    return schema;
  }

  /** Schemas kept (for tests). */
  public int size() {
    synchronized (cache) {
      return cache.size();
    }
  }

  private Schema read(String location, Path local) {
    try (ParquetFileReader reader = ParquetFileReader.open(
        HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(local.toString()), conf))) {
      MessageType type = reader.getFooter().getFileMetaData().getSchema();
      // Iceberg would number columns without ids itself; such numbers could match table fields.
      return ParquetSchemaUtil.hasIds(type) ? ParquetSchemaUtil.convert(type) : new Schema(List.of());
    } catch (IOException e) {
      throw SeException.unavailable("cannot read the footer of data file " + location + ": " + e.getMessage(), e);
    }
  }
}

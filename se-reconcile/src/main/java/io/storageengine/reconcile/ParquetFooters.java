package io.storageengine.reconcile;

import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.util.Collections;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * The Iceberg schema (with field ids) a local Parquet data file was written with. Data files are
 * immutable, so footers are cached by path (bounded).
 *
 * <p>Internal to se-reconcile; public only for its {@code maintenance} package.
 */
public final class ParquetFooters {
  private static final Configuration CONF = new Configuration();
  private static final int CACHE_SIZE = 4096;
  private static final Map<String, Schema> CACHE = Collections.synchronizedMap(new LruMap<>(CACHE_SIZE));

  private ParquetFooters() {}

  public static Schema schema(String localPath) {
    Schema cached = CACHE.get(localPath);
    if (cached != null) {
      return cached;
    }
    Schema schema = read(localPath);
    CACHE.put(localPath, schema);
    return schema;
  }

  private static Schema read(String localPath) {
    try (ParquetFileReader reader = ParquetFileReader.open(
        HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(localPath), CONF))) {
      return ParquetSchemaUtil.convert(reader.getFooter().getFileMetaData().getSchema());
    } catch (IOException e) {
      throw SeException.unavailable("cannot read the footer of data file " + localPath + ": " + e.getMessage(), e);
    }
  }
}

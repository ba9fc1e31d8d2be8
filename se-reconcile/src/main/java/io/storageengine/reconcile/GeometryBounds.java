package io.storageengine.reconcile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetricsModes;
import org.apache.iceberg.geospatial.GeospatialBound;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.statistics.geospatial.BoundingBox;
import org.apache.parquet.column.statistics.geospatial.GeospatialStatistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.LocalInputFile;

/**
 * The lower and upper bounds of geometry columns in a data file's metrics, as the Iceberg spec
 * defines them for geospatial types: the bounding box's minimum and maximum corners, each
 * {@code x:y[:z[:m]]} as little-endian doubles ({@link GeospatialBound}). Iceberg 1.12's footer
 * metrics ({@code ParquetUtil.fileMetrics}) give counts only for these columns; the bounds come
 * from the Parquet geospatial statistics DuckDB writes per column chunk, merged over the row
 * groups. A column gets no bounds when any chunk lacks valid statistics, when every value is
 * null or empty, or when its metrics mode keeps no bounds (none, counts). Geography columns get
 * none: the spec's bounds are optional, and a geography's box must take its curved edges into
 * account, which neither DuckDB (it writes geography as a plain BLOB) nor the engine computes.
 */
final class GeometryBounds {
  private GeometryBounds() {}

  /** {@code metrics} with the bounds of the top-level geometry {@code columns} of the Parquet file {@code local}. */
  static Metrics add(Metrics metrics, Path local, List<Types.NestedField> columns, MetricsConfig config) {
    Map<String, Integer> geometry = new HashMap<>();
    for (Types.NestedField c : columns) {
      MetricsModes.MetricsMode mode = config.columnMode(c.name());
      if (c.type().typeId() == Type.TypeID.GEOMETRY
          && !(mode instanceof MetricsModes.None) && !(mode instanceof MetricsModes.Counts)) {
        geometry.put(c.name(), c.fieldId());
      }
    }
    if (geometry.isEmpty()) {
      return metrics;
    }
    Map<Integer, ByteBuffer> lower = new HashMap<>(metrics.lowerBounds() == null ? Map.of() : metrics.lowerBounds());
    Map<Integer, ByteBuffer> upper = new HashMap<>(metrics.upperBounds() == null ? Map.of() : metrics.upperBounds());
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(local))) {
      for (Map.Entry<String, Integer> column : geometry.entrySet()) {
        BoundingBox box = box(reader.getFooter().getBlocks(), column.getKey());
        if (box != null) {
          lower.put(column.getValue(), bound(box.getXMin(), box.getYMin(), box.getZMin(), box.getMMin()).toByteBuffer());
          upper.put(column.getValue(), bound(box.getXMax(), box.getYMax(), box.getZMax(), box.getMMax()).toByteBuffer());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Metrics(metrics.recordCount(), metrics.columnSizes(), metrics.valueCounts(), metrics.nullValueCounts(),
        metrics.nanValueCounts(), lower, upper, metrics.avgValueSizes(), null);
  }

  /** The merged bounding box of {@code column} over every row group, or null when not known. */
  private static BoundingBox box(List<BlockMetaData> blocks, String column) {
    BoundingBox merged = null;
    for (BlockMetaData block : blocks) {
      ColumnChunkMetaData chunk = block.getColumns().stream()
          .filter(c -> c.getPath().size() == 1 && c.getPath().toArray()[0].equals(column)).findFirst().orElse(null);
      GeospatialStatistics stats = chunk == null ? null : chunk.getGeospatialStatistics();
      if (stats == null || !stats.isValid() || stats.getBoundingBox() == null) {
        return null;
      }
      if (merged == null) {
        merged = stats.getBoundingBox().copy();
      } else {
        merged.merge(stats.getBoundingBox());
      }
    }
    return merged == null || !merged.isXYValid() || merged.isXYEmpty() ? null : merged;
  }

  private static GeospatialBound bound(double x, double y, double z, double m) {
    boolean hasZ = !Double.isNaN(z) && Double.isFinite(z);
    boolean hasM = !Double.isNaN(m) && Double.isFinite(m);
    if (hasZ && hasM) {
      return GeospatialBound.createXYZM(x, y, z, m);
    }
    if (hasZ) {
      return GeospatialBound.createXYZ(x, y, z);
    }
    return hasM ? GeospatialBound.createXYM(x, y, m) : GeospatialBound.createXY(x, y);
  }
}

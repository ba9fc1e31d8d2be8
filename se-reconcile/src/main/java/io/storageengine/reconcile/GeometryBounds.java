package io.storageengine.reconcile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetricsModes;
import org.apache.iceberg.geospatial.GeospatialBound;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.statistics.geospatial.BoundingBox;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.schema.MessageType;
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
 * null or empty, or when its metrics mode keeps no bounds (none, counts). Geography columns,
 * which DuckDB writes as a plain BLOB without statistics, get the conservative box
 * {@link GeographyBounds} computes from the file's values (their curved edges and the
 * antimeridian taken into account; {@code xmin > xmax} when the box crosses it).
 */
final class GeometryBounds {
  private GeometryBounds() {}

  /** {@code metrics} with the bounds of the top-level geometry {@code columns} of the Parquet file {@code local}. */
  static Metrics add(Metrics metrics, Path local, List<Types.NestedField> columns, MetricsConfig config) {
    Map<String, Integer> geometry = new HashMap<>();
    Map<String, Types.NestedField> geography = new HashMap<>();
    for (Types.NestedField c : columns) {
      MetricsModes.MetricsMode mode = config.columnMode(c.name());
      if (mode instanceof MetricsModes.None || mode instanceof MetricsModes.Counts) {
        continue;
      }
      if (c.type().typeId() == Type.TypeID.GEOMETRY) {
        geometry.put(c.name(), c.fieldId());
      } else if (c.type().typeId() == Type.TypeID.GEOGRAPHY) {
        geography.put(c.name(), c);
      }
    }
    if (geometry.isEmpty() && geography.isEmpty()) {
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
      if (!geography.isEmpty()) {
        for (Map.Entry<Types.NestedField, GeographyBounds> e : geographyBoxes(reader, geography.values()).entrySet()) {
          if (!e.getValue().isEmpty()) {
            lower.put(e.getKey().fieldId(), e.getValue().lower().toByteBuffer());
            upper.put(e.getKey().fieldId(), e.getValue().upper().toByteBuffer());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Metrics(metrics.recordCount(), metrics.columnSizes(), metrics.valueCounts(), metrics.nullValueCounts(),
        metrics.nanValueCounts(), lower, upper, metrics.avgValueSizes(), null);
  }

  /**
   * The box of every value of each top-level geography column in {@code columns}, read from the
   * file of {@code reader} in one pass over its row groups (those columns only).
   */
  private static Map<Types.NestedField, GeographyBounds> geographyBoxes(ParquetFileReader reader,
      Collection<Types.NestedField> columns) throws IOException {
    MessageType fileSchema = reader.getFooter().getFileMetaData().getSchema();
    MessageType projection = new MessageType(fileSchema.getName(),
        columns.stream().map(c -> fileSchema.getType(c.name())).toList());
    reader.setRequestedSchema(projection);
    String createdBy = reader.getFooter().getFileMetaData().getCreatedBy();
    Map<Types.NestedField, GeographyBounds> boxes = new LinkedHashMap<>();
    for (Types.NestedField column : columns) {
      boxes.put(column, new GeographyBounds(((Types.GeographyType) column.type()).algorithm()));
    }
    PageReadStore rowGroup;
    while ((rowGroup = reader.readNextRowGroup()) != null) {
      ColumnReadStoreImpl store = new ColumnReadStoreImpl(rowGroup,
          new GroupRecordConverter(projection).getRootConverter(), projection, createdBy);
      for (Map.Entry<Types.NestedField, GeographyBounds> e : boxes.entrySet()) {
        ColumnDescriptor descriptor = projection.getColumnDescription(new String[] {e.getKey().name()});
        ColumnReader values = store.getColumnReader(descriptor);
        for (long i = 0, n = values.getTotalValueCount(); i < n; i++) {
          if (values.getCurrentDefinitionLevel() == descriptor.getMaxDefinitionLevel()) {
            e.getValue().add(values.getBinary().toByteBuffer());
          }
          values.consume();
        }
      }
    }
    return boxes;
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

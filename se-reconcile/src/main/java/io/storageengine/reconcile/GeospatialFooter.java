package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.EdgeInterpolationAlgorithm;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.GeographyType;
import org.apache.parquet.format.GeometryType;
import org.apache.parquet.format.KeyValue;
import org.apache.parquet.format.LogicalType;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.Util;

/**
 * Gives the top-level geometry and geography columns of a Parquet file DuckDB wrote the logical
 * types the Iceberg spec requires, with the table's CRS and edge algorithm: DuckDB writes a
 * geometry without a CRS (its GEOMETRY type is written with the column's WKB and bounding box
 * statistics) and a geography as a plain BLOB of WKB (it has no GEOGRAPHY type). Only the footer
 * changes: pages, offsets and row groups stay as DuckDB wrote them.
 *
 * <ul>
 *   <li>{@code geometry(C)}: {@code GEOMETRY(crs = C)}, no CRS for the default {@code OGC:CRS84}
 *       (Parquet's default); the bounding box statistics are kept;
 *   <li>{@code geography(C, A)}: {@code GEOGRAPHY(crs = C, algorithm = A)}; the byte-wise minimum
 *       and maximum DuckDB computed for the BLOB are dropped (Parquet defines no order for
 *       geospatial values), so the column has no geospatial statistics and no bounds;
 *   <li>a CRS {@code projjson:<name>} names a table property in Iceberg and a file metadata key
 *       in Parquet: the table property's PROJJSON, when set, is copied into the file's metadata
 *       under that key, so the file describes its CRS on its own.
 * </ul>
 *
 * <p>The CRS string is written as the Iceberg type holds it ({@code srid:3857}, {@code EPSG:4326}),
 * as Iceberg's own Parquet writer does.
 */
final class GeospatialFooter {
  private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
  private static final String PROJJSON = "projjson:";

  private GeospatialFooter() {}

  /** Whether any of {@code columns} needs its logical type set by {@link #annotate}. */
  static boolean needed(List<Types.NestedField> columns) {
    return columns.stream().anyMatch(c -> logicalType(c.type()) != null);
  }

  /**
   * Rewrites the footer of the local Parquet file {@code file} (written by DuckDB with the field ids
   * of {@code columns}) so its top-level geospatial columns carry their Iceberg types' logical types.
   *
   * @param tableProperties the table's properties, for the PROJJSON a {@code projjson:} CRS names
   */
  static void annotate(Path file, List<Types.NestedField> columns, Map<String, String> tableProperties) {
    Map<Integer, Types.NestedField> geospatial = new HashMap<>();
    for (Types.NestedField c : columns) {
      if (logicalType(c.type()) != null) {
        geospatial.put(c.fieldId(), c);
      }
    }
    if (geospatial.isEmpty()) {
      return;
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long size = channel.size();
      ByteBuffer tail = read(channel, size - 8, 8).order(ByteOrder.LITTLE_ENDIAN);
      int footerLength = tail.getInt(0);
      byte[] magic = new byte[4];
      tail.position(4);
      tail.get(magic);
      long footerStart = size - 8 - footerLength;
      if (!Arrays.equals(magic, MAGIC) || footerLength <= 0 || footerStart < MAGIC.length) {
        throw SeException.internal("data file " + file + " is not a plain Parquet file", null);
      }
      ByteBuffer footer = read(channel, footerStart, footerLength);
      FileMetaData metadata = Util.readFileMetaData(
          new ByteArrayInputStream(footer.array(), footer.arrayOffset(), footerLength));
      Map<String, String> keyValues = new HashMap<>();
      for (String name : annotateSchema(metadata, geospatial)) {
        Types.NestedField column = geospatial.values().stream()
            .filter(c -> c.name().equals(name)).findFirst().orElseThrow();
        if (column.type().typeId() == Type.TypeID.GEOGRAPHY) {
          dropMinMax(metadata, name);
        }
        String crs = crs(column.type());
        if (crs != null && crs.regionMatches(true, 0, PROJJSON, 0, PROJJSON.length())) {
          String key = crs.substring(PROJJSON.length());
          String projjson = tableProperties.get(key);
          if (projjson != null) {
            keyValues.put(key, projjson);
          }
        }
      }
      addKeyValues(metadata, keyValues);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      Util.writeFileMetaData(metadata, out);
      ByteBuffer rewritten = ByteBuffer.allocate(out.size() + 8).order(ByteOrder.LITTLE_ENDIAN);
      rewritten.put(out.toByteArray()).putInt(out.size()).put(MAGIC).flip();
      channel.truncate(footerStart);
      long position = footerStart;
      while (rewritten.hasRemaining()) {
        position += channel.write(rewritten, position);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot set the geospatial types of data file " + file, e);
    }
  }

  /** Sets the logical types of the top-level columns in {@code geospatial}; returns their names. */
  private static List<String> annotateSchema(FileMetaData metadata, Map<Integer, Types.NestedField> geospatial) {
    List<SchemaElement> schema = metadata.getSchema();
    List<String> annotated = new ArrayList<>();
    int children = schema.get(0).getNum_children();
    int index = 1;
    for (int child = 0; child < children; child++) {
      SchemaElement element = schema.get(index);
      Types.NestedField column = element.isSetField_id() && !element.isSetNum_children()
          ? geospatial.get(element.getField_id()) : null;
      if (column != null) {
        element.setLogicalType(logicalType(column.type()));
        annotated.add(element.getName());
      }
      index = skip(schema, index);
    }
    return annotated;
  }

  /** The index just past the subtree of the schema element at {@code index}. */
  private static int skip(List<SchemaElement> schema, int index) {
    int children = schema.get(index).isSetNum_children() ? schema.get(index).getNum_children() : 0;
    int next = index + 1;
    for (int i = 0; i < children; i++) {
      next = skip(schema, next);
    }
    return next;
  }

  /**
   * Keeps only the null count of the top-level column {@code name}'s chunk statistics, and drops
   * its page-level minimum and maximum (the column index), when DuckDB wrote one.
   */
  private static void dropMinMax(FileMetaData metadata, String name) {
    for (RowGroup group : metadata.getRow_groups()) {
      for (ColumnChunk chunk : group.getColumns()) {
        ColumnMetaData column = chunk.getMeta_data();
        if (column == null || column.getPath_in_schema().size() != 1 || !column.getPath_in_schema().get(0).equals(name)) {
          continue;
        }
        chunk.unsetColumn_index_offset();
        chunk.unsetColumn_index_length();
        if (!column.isSetStatistics()) {
          continue;
        }
        Statistics old = column.getStatistics();
        Statistics kept = new Statistics();
        if (old.isSetNull_count()) {
          kept.setNull_count(old.getNull_count());
        }
        column.setStatistics(kept);
      }
    }
  }

  private static void addKeyValues(FileMetaData metadata, Map<String, String> keyValues) {
    if (keyValues.isEmpty()) {
      return;
    }
    List<KeyValue> existing = metadata.isSetKey_value_metadata()
        ? new ArrayList<>(metadata.getKey_value_metadata()) : new ArrayList<>();
    existing.removeIf(kv -> keyValues.containsKey(kv.getKey()));
    keyValues.forEach((key, value) -> existing.add(new KeyValue(key).setValue(value)));
    metadata.setKey_value_metadata(existing);
  }

  /**
   * The Parquet logical type of a top-level column of Iceberg type {@code type} that DuckDB does
   * not write itself, or null for a type DuckDB writes as the spec says (a default-CRS geometry
   * included) or one that is not geospatial.
   */
  private static LogicalType logicalType(Type type) {
    switch (type.typeId()) {
      case GEOMETRY: {
        String crs = crs(type);
        if (crs == null) {
          return null;
        }
        LogicalType logical = new LogicalType();
        logical.setGEOMETRY(new GeometryType().setCrs(crs));
        return logical;
      }
      case GEOGRAPHY: {
        Types.GeographyType geography = (Types.GeographyType) type;
        GeographyType parquet = new GeographyType()
            .setAlgorithm(EdgeInterpolationAlgorithm.valueOf(geography.algorithm().name()));
        String crs = crs(type);
        if (crs != null) {
          parquet.setCrs(crs);
        }
        LogicalType logical = new LogicalType();
        logical.setGEOGRAPHY(parquet);
        return logical;
      }
      default:
        return null;
    }
  }

  /** The CRS of a geometry or geography type, or null for the default {@code OGC:CRS84}. */
  private static String crs(Type type) {
    String crs = type.typeId() == Type.TypeID.GEOMETRY
        ? ((Types.GeometryType) type).crs() : ((Types.GeographyType) type).crs();
    return crs == null || Types.GeometryType.DEFAULT_CRS.equalsIgnoreCase(crs) ? null : crs;
  }

  private static ByteBuffer read(FileChannel channel, long position, int length) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, position + buffer.position()) < 0) {
        throw new IOException("unexpected end of file");
      }
    }
    return buffer.flip();
  }
}

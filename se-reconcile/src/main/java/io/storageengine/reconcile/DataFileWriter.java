package io.storageengine.reconcile;

import io.storageengine.catalog.LocationConfinement;
import io.storageengine.catalog.TableSettings;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileLocations;
import io.storageengine.catalog.VariantShredding;
import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Writes the rows of a DuckDB query as Iceberg data files of a table: one group of files per
 * partition of the table's current spec (partition values from Iceberg's transforms), rows
 * ordered by the table's sort order, files cut at the target size. DuckDB writes Parquet with
 * the Iceberg field ids; Iceberg computes the column metrics; files reach the table's location
 * through its {@link FileIO}. Every file written is remembered so a failed pass can delete them.
 *
 * <p>Internal to se-reconcile; public only for its {@code maintenance} package.
 */
public final class DataFileWriter {
  private final DuckSession duck;
  private final Table table;
  private final ReconcileOptions options;
  private final List<String> written = new ArrayList<>();
  private final String runId = UUID.randomUUID().toString();
  private int fileCounter;
  /** The slice every file written belongs to (its name says so), or -1 for none. */
  private int slice = -1;
  /** The table's variant columns not shredded by DuckDB's choice, read once per writer. */
  private final Map<String, VariantShredding> shredding;
  /** Shown each file before it is published (null: none). */
  private java.util.function.BiConsumer<String, Path> beforePublish;

  public DataFileWriter(DuckSession duck, Table table, ReconcileOptions options) {
    this.duck = duck;
    this.table = table;
    this.options = options;
    this.shredding = TableSettings.of(table).variantShredding();
  }

  /**
   * Names the files written from now on as files of slice {@code sliceId}
   * ({@link io.storageengine.catalog.TableSlices#fileName}); the rows written must all be keys
   * of that slice.
   */
  public DataFileWriter forSlice(int sliceId) {
    this.slice = sliceId;
    return this;
  }

  /**
   * Shows {@code consumer} each file written from now on, as its location and the local file it
   * is published from, before it is published (a failure stops the write).
   */
  public DataFileWriter beforePublish(java.util.function.BiConsumer<String, Path> consumer) {
    this.beforePublish = consumer;
    return this;
  }

  /** Locations of every file this writer created, for cleanup of an uncommitted attempt. */
  public List<String> writtenLocations() {
    return written;
  }

  /**
   * Writes the rows of {@code staged} (a DuckDB table whose columns are the table's columns,
   * plus {@code _row_id} when {@code withRowId}) and returns the data files.
   *
   * @param defaultOrder ORDER BY used when the table has no sort order (null: keep arrival order)
   */
  List<DataFile> write(String staged, boolean withRowId, String defaultOrder) {
    return write(staged, withRowId ? List.of(MetadataColumns.ROW_ID) : List.of(), defaultOrder);
  }

  /**
   * Writes the rows of {@code staged} (a DuckDB table whose columns are the table's columns plus
   * {@code metadataColumns}, e.g. the v3 row lineage columns written explicitly so a rewritten
   * row keeps them) and returns the data files.
   *
   * @param defaultOrder ORDER BY used when the table has no sort order (null: keep arrival order)
   */
  public List<DataFile> write(String staged, List<Types.NestedField> metadataColumns, String defaultOrder) {
    if (duck.queryLong("SELECT count(*) FROM " + staged) == 0) {
      return List.of();
    }
    Schema schema = table.schema();
    PartitionSpec spec = table.spec();
    List<Types.NestedField> columns = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      // Iceberg v3: columns of type unknown are always null and never stored in data files.
      if (c.type().typeId() != Type.TypeID.UNKNOWN) {
        columns.add(c);
      }
    }
    columns.addAll(metadataColumns);
    String select = selectList(columns);
    String order = orderBy(schema, table.sortOrder(), defaultOrder);
    List<DataFile> files = new ArrayList<>();
    if (spec.isUnpartitioned()) {
      files.addAll(copy("SELECT " + select + " FROM " + staged + order, columns, spec, null));
      return files;
    }
    String parts = staged + "_parts";
    List<StructLike> tuples = PartitionAssigner.assign(duck, schema, spec, staged, parts);
    String joined = staged + "_partitioned";
    duck.execute("CREATE OR REPLACE TEMP TABLE " + joined + " AS SELECT s.*, p.pidx AS __pidx FROM "
        + staged + " s JOIN " + parts + " p ON s.rowid = p.rid");
    for (int i = 0; i < tuples.size(); i++) {
      files.addAll(copy("SELECT " + select + " FROM " + joined + " WHERE __pidx = " + i + order,
          columns, spec, tuples.get(i)));
    }
    return files;
  }

  private static String selectList(List<Types.NestedField> columns) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField c : columns) {
      names.add(SqlQuoting.identifier(c.name()));
    }
    return String.join(", ", names);
  }

  private static String orderBy(Schema schema, SortOrder sortOrder, String defaultOrder) {
    if (sortOrder == null || sortOrder.isUnsorted()) {
      return defaultOrder == null ? "" : " ORDER BY " + defaultOrder;
    }
    List<String> terms = new ArrayList<>();
    for (SortField f : sortOrder.fields()) {
      // Non-identity transforms (day, truncate, ...) are monotonic in their source, so ordering
      // by the source column yields the transform's order too; bucket is the exception.
      terms.add(DuckSql.columnPath(schema, f.sourceId())
          + (f.direction() == SortDirection.ASC ? " ASC" : " DESC")
          + (f.nullOrder() == NullOrder.NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST"));
    }
    return " ORDER BY " + String.join(", ", terms);
  }

  private List<DataFile> copy(String query, List<Types.NestedField> columns, PartitionSpec spec,
      StructLike partition) {
    Path dir = duck.newDirectory("data");
    duck.execute("COPY (" + query + ") TO " + SqlQuoting.literal(dir.toString())
        + " (FORMAT parquet, FIELD_IDS " + DuckSql.fieldIds(columns)
        + ", FILE_SIZE_BYTES " + options.targetFileSizeBytes()
        + ", ROW_GROUP_SIZE " + options.rowGroupRows()
        + ", FILENAME_PATTERN 'part_{i}', COMPRESSION zstd"
        + shreddingOption(columns)
        // Geometry as the Iceberg spec stores it: WKB with Parquet's GEOMETRY logical type (and
        // its bounding box statistics), without GeoParquet's file metadata on top; a CRS and
        // geography's logical type are set afterwards (GeospatialFooter).
        + ", GEOPARQUET_VERSION 'NONE')");
    List<Path> localFiles;
    try (Stream<Path> list = Files.list(dir)) {
      localFiles = list.filter(p -> p.toString().endsWith(".parquet")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    boolean geospatial = GeospatialFooter.needed(columns);
    List<DataFile> files = new ArrayList<>();
    for (Path local : localFiles) {
      if (geospatial) {
        GeospatialFooter.annotate(local, columns, table.properties());
      }
      String name = String.format("%05d-%s.parquet", fileCounter++, runId);
      if (slice >= 0) {
        name = io.storageengine.catalog.TableSlices.fileName(slice, name);
      }
      // An unpartitioned spec has no partition path: asking for one yields "data//name", an
      // object key with an empty segment on object stores (and a signature mismatch on some).
      String location = spec.isUnpartitioned() || partition == null
          ? table.locationProvider().newDataLocation(name)
          : table.locationProvider().newDataLocation(spec, partition, name);
      if (beforePublish != null) {
        beforePublish.accept(location, local);
      }
      publish(table.io(), local, location);
      written.add(location);
      MetricsConfig metricsConfig = MetricsConfig.forTable(table);
      Metrics metrics = GeometryBounds.add(ParquetUtil.fileMetrics(table.io().newInputFile(location), metricsConfig),
          local, columns, metricsConfig);
      DataFiles.Builder builder = DataFiles.builder(spec)
          .withPath(location)
          .withFormat(FileFormat.PARQUET)
          .withFileSizeInBytes(fileSize(table.io(), local, location))
          .withMetrics(metrics)
          .withSortOrder(table.sortOrder());
      if (partition != null) {
        builder.withPartition(partition);
      }
      files.add(builder.build());
    }
    return files;
  }

  /**
   * {@code , SHREDDING {...}} for the variant columns whose {@code se.variant.shredding.<column>}
   * is not {@code auto}: {@code 'NULL'} (no typed_value) for {@code off}, the fields' DuckDB
   * STRUCT type for typed fields; empty when every variant column is left to DuckDB.
   */
  private String shreddingOption(List<Types.NestedField> columns) {
    List<String> entries = new ArrayList<>();
    for (Types.NestedField c : columns) {
      VariantShredding s = shredding.get(c.name());
      if (s == null) {
        continue;
      }
      String type = s.mode() == VariantShredding.Mode.OFF ? "NULL" : DuckSql.type(s.fields());
      entries.add(SqlQuoting.literal(c.name()) + ": " + SqlQuoting.literal(type));
    }
    return entries.isEmpty() ? "" : ", SHREDDING {" + String.join(", ", entries) + "}";
  }

  private static long fileSize(FileIO io, Path local, String location) {
    try {
      return Files.exists(local) ? Files.size(local) : io.newInputFile(location).getLength();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Puts a local file at {@code location}: a move for local warehouses, else a FileIO copy. */
  static void publish(FileIO io, Path local, String location) {
    // Local warehouses are written here directly, not through the FileIO that would refuse it.
    LocationConfinement.of(io).check(location, "data file");
    try {
      Path target = DataFileLocations.localPath(location);
      if (target != null) {
        Files.createDirectories(target.getParent());
        Files.copy(local, target, StandardCopyOption.REPLACE_EXISTING);
        return;
      }
      OutputFile out = io.newOutputFile(location);
      try (PositionOutputStream os = out.createOrOverwrite(); InputStream in = Files.newInputStream(local)) {
        in.transferTo(os);
      }
    } catch (IOException e) {
      throw SeException.unavailable("cannot write data file " + location + ": " + e.getMessage(), e);
    }
  }
}

package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.GeoValues;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.geospatial.GeospatialBound;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.schema.EdgeInterpolationAlgorithm;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every Iceberg type written through reconciliation reads back value for value with Iceberg's reader. */
class TypeRoundTripTest {
  static final Schema SCHEMA = new Schema(
      required(1, "id", Types.LongType.get()),
      optional(2, "b", Types.BooleanType.get()),
      optional(3, "i", Types.IntegerType.get()),
      optional(4, "l", Types.LongType.get()),
      optional(5, "f", Types.FloatType.get()),
      optional(6, "d", Types.DoubleType.get()),
      optional(7, "dec", Types.DecimalType.of(12, 3)),
      optional(8, "dt", Types.DateType.get()),
      optional(9, "t", Types.TimeType.get()),
      optional(10, "ts", Types.TimestampType.withoutZone()),
      optional(11, "tstz", Types.TimestampType.withZone()),
      optional(12, "s", Types.StringType.get()),
      optional(13, "u", Types.UUIDType.get()),
      optional(14, "fx", Types.FixedType.ofLength(4)),
      optional(15, "bin", Types.BinaryType.get()),
      optional(16, "st", Types.StructType.of(
          optional(24, "a", Types.IntegerType.get()),
          optional(25, "z", Types.StringType.get()))),
      optional(17, "lst", Types.ListType.ofOptional(26, Types.StringType.get())),
      optional(18, "m", Types.MapType.ofOptional(27, 28, Types.StringType.get(), Types.IntegerType.get())),
      optional(19, "lst_st", Types.ListType.ofOptional(29, Types.StructType.of(
          optional(30, "x", Types.LongType.get())))),
      optional(20, "doc", Types.VariantType.get()),
      optional(21, "geo", Types.GeometryType.crs84()),
      optional(22, "geog", Types.GeographyType.of("srid:4326", EdgeAlgorithm.VINCENTY)),
      optional(23, "geo_srid", Types.GeometryType.of("srid:3857")));

  static Stream<Arguments> specs() {
    List<Function<PartitionSpec.Builder, PartitionSpec.Builder>> specs = List.of(
        b -> b,
        b -> b.identity("i"),
        b -> b.identity("s"),
        b -> b.identity("dt"),
        b -> b.identity("b"),
        b -> b.year("ts"),
        b -> b.month("tstz"),
        b -> b.day("dt"),
        b -> b.hour("ts"),
        b -> b.truncate("s", 2),
        b -> b.truncate("i", 100),
        b -> b.truncate("dec", 1000),
        b -> b.bucket("l", 8),
        b -> b.bucket("s", 4).bucket("u", 3),
        b -> b.bucket("dec", 5).identity("b"),
        b -> b.bucket("bin", 3).bucket("fx", 3));
    List<Arguments> args = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      PartitionSpec spec = specs.get(i).apply(PartitionSpec.builderFor(SCHEMA)).build();
      args.add(Arguments.of(i, spec));
    }
    return args.stream();
  }

  @ParameterizedTest(name = "spec {0}: {1}")
  @MethodSource("specs")
  void everyTypeRoundTrips(int index, PartitionSpec spec, @TempDir Path dir) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("types", SCHEMA, spec, SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "types");
      Random rnd = new Random(42 + index);
      List<Record> expected = new ArrayList<>();
      for (int seg = 0; seg < 2; seg++) {
        List<Record> rows = new ArrayList<>();
        for (int r = 0; r < 40; r++) {
          Record rec = Values.randomRecord(rnd, SCHEMA);
          rec.setField("id", (long) expected.size());
          rows.add(rec);
          expected.add(rec);
        }
        env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, SCHEMA, rows));
      }

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.walRows()).isEqualTo(80);

      List<Record> actual = TestEnvironment.readAll(table);
      assertThat(actual).hasSize(expected.size());
      actual.sort(Comparator.comparing(r -> (Long) r.getField("id")));
      for (int i = 0; i < expected.size(); i++) {
        assertThat(Values.normal(actual.get(i))).as("row %d", i).isEqualTo(Values.normal(expected.get(i)));
      }
      assertPartitionValuesMatchIceberg(table);
    }
  }

  /**
   * Geometry is WKB with Parquet's GEOMETRY logical type (and its bounding box statistics), and
   * Iceberg's generic reader reads the values back.
   */
  @Test
  void geometryIsWrittenAsTheSpecSays(@TempDir Path dir) throws Exception {
    Schema schema = new Schema(required(1, "id", Types.LongType.get()), optional(2, "g", Types.GeometryType.crs84()));
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("geo", schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "geo");
      List<Record> rows = new ArrayList<>();
      String[] wkt = {"POINT (1 2)", "LINESTRING (-3 4, 5 -6)", null};
      for (int i = 0; i < wkt.length; i++) {
        Record rec = GenericRecord.create(schema);
        rec.setField("id", (long) i);
        rec.setField("g", wkt[i] == null ? null
            : ByteBuffer.wrap(GeoValues.wktToWkb(wkt[i])));
        rows.add(rec);
      }
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, schema, rows));
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile file = task.file();
          // Counts, and the bounding box corners as the spec's geospatial bounds (x:y as doubles).
          assertThat(file.valueCounts()).containsEntry(2, 3L);
          assertThat(file.nullValueCounts()).containsEntry(2, 1L);
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.lowerBounds().get(2)))).isEqualTo(GeospatialBound.createXY(-3, -6));
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.upperBounds().get(2)))).isEqualTo(GeospatialBound.createXY(5, 4));
          Path local = dir.resolve("copy.parquet");
          try (InputStream in = table.io().newInputFile(file.location()).newStream()) {
            Files.copy(in, local, StandardCopyOption.REPLACE_EXISTING);
          }
          try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(local))) {
            // WKB with Parquet's GEOMETRY logical type; no CRS is Parquet's default, OGC:CRS84.
            org.apache.parquet.schema.Type g = reader.getFooter().getFileMetaData().getSchema().getType("g");
            assertThat(g.getId().intValue()).isEqualTo(2);
            assertThat(g.getLogicalTypeAnnotation())
                .isInstanceOfSatisfying(LogicalTypeAnnotation.GeometryLogicalTypeAnnotation.class,
                    geometry -> assertThat(geometry.getCrs()).isNull());
            assertThat(reader.getFooter().getFileMetaData().getKeyValueMetaData()).doesNotContainKey("geo");
            var box = reader.getFooter().getBlocks().get(0).getColumns().get(1).getGeospatialStatistics().getBoundingBox();
            assertThat(List.of(box.getXMin(), box.getXMax(), box.getYMin(), box.getYMax()))
                .containsExactly(-3.0, 5.0, -6.0, 4.0);
          }
        }
      }
      List<Record> actual = TestEnvironment.readAll(table);
      actual.sort(Comparator.comparing(r -> (Long) r.getField("id")));
      for (int i = 0; i < rows.size(); i++) {
        assertThat(Values.normal(actual.get(i))).isEqualTo(Values.normal(rows.get(i)));
      }
    }
  }

  /**
   * Geography is WKB with Parquet's GEOGRAPHY logical type carrying the CRS and edge algorithm,
   * and a geometry of another CRS has it in its GEOMETRY logical type (a {@code projjson:} CRS's
   * PROJJSON, a table property, copied into the file's metadata); Iceberg's generic reader reads
   * every value back. Geometry keeps its bounds; geography gets the box of its values computed
   * on the sphere (across the antimeridian here: xmin 0 > xmax -179), the ellipsoidal one widened.
   */
  @Test
  void geographyAndCrsAreWrittenIntoTheParquetLogicalTypes(@TempDir Path dir) throws Exception {
    String projjson = "{\"type\": \"GeographicCRS\", \"name\": \"WGS 84\"}";
    Schema schema = new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "sphere", Types.GeographyType.crs84()),
        optional(3, "karney", Types.GeographyType.of("EPSG:4326", EdgeAlgorithm.KARNEY)),
        optional(4, "mercator", Types.GeometryType.of("srid:3857")),
        optional(5, "custom", Types.GeometryType.of("projjson:geo.crs")));
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("geog", schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of("geo.crs", projjson));
      TableWal tw = env.walOf(table, "geog");
      List<Record> rows = new ArrayList<>();
      String[] wkt = {"POINT (170 -5)", "LINESTRING (-179 10, 179 12)", null, "POLYGON ((0 0, 4 0, 4 4, 0 0))"};
      for (int i = 0; i < wkt.length; i++) {
        Record rec = GenericRecord.create(schema);
        rec.setField("id", (long) i);
        for (String column : List.of("sphere", "karney", "mercator", "custom")) {
          rec.setField(column, wkt[i] == null ? null : ByteBuffer.wrap(GeoValues.wktToWkb(wkt[i])));
        }
        rows.add(rec);
      }
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, schema, rows));
      assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile file = task.file();
          for (int id = 2; id <= 5; id++) {
            assertThat(file.valueCounts()).containsEntry(id, 4L);
            assertThat(file.nullValueCounts()).containsEntry(id, 1L);
          }
          // Geography: the shortest longitude range holding 170, the edge from -179 to 179 across
          // the antimeridian and the polygon's [0, 4]; latitudes from -5 to 12 (karney: each edge
          // widened by a degree, the point not).
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.lowerBounds().get(2))))
              .isEqualTo(GeospatialBound.createXY(0, -5));
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.upperBounds().get(2))))
              .isEqualTo(GeospatialBound.createXY(-179, 12));
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.lowerBounds().get(3))))
              .isEqualTo(GeospatialBound.createXY(0, -5));
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.upperBounds().get(3))))
              .isEqualTo(GeospatialBound.createXY(-179, 13));
          // Geometry of another CRS: the bounding box corners.
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.lowerBounds().get(4))))
              .isEqualTo(GeospatialBound.createXY(-179, -5));
          assertThat(GeospatialBound.fromByteBuffer(littleEndian(file.upperBounds().get(4))))
              .isEqualTo(GeospatialBound.createXY(179, 12));
          Path local = dir.resolve("copy.parquet");
          try (InputStream in = table.io().newInputFile(file.location()).newStream()) {
            Files.copy(in, local, StandardCopyOption.REPLACE_EXISTING);
          }
          try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(local))) {
            org.apache.parquet.schema.MessageType parquet = reader.getFooter().getFileMetaData().getSchema();
            assertThat(parquet.getType("sphere").getLogicalTypeAnnotation()).isEqualTo(
                LogicalTypeAnnotation.geographyType(null, EdgeInterpolationAlgorithm.SPHERICAL));
            assertThat(parquet.getType("karney").getLogicalTypeAnnotation()).isEqualTo(
                LogicalTypeAnnotation.geographyType("EPSG:4326", EdgeInterpolationAlgorithm.KARNEY));
            assertThat(parquet.getType("mercator").getLogicalTypeAnnotation())
                .isEqualTo(LogicalTypeAnnotation.geometryType("srid:3857"));
            assertThat(parquet.getType("custom").getLogicalTypeAnnotation())
                .isEqualTo(LogicalTypeAnnotation.geometryType("projjson:geo.crs"));
            assertThat(parquet.getType("karney").getId().intValue()).isEqualTo(3);
            assertThat(reader.getFooter().getFileMetaData().getKeyValueMetaData()).containsEntry("geo.crs", projjson);
            var columns = reader.getFooter().getBlocks().get(0).getColumns();
            // Geography: no byte-wise min/max of the WKB, no geospatial statistics; geometry keeps its box.
            assertThat(columns.get(1).getStatistics().hasNonNullValue()).isFalse();
            assertThat(columns.get(1).getStatistics().getNumNulls()).isEqualTo(1);
            assertThat(columns.get(1).getGeospatialStatistics()).isNull();
            var box = columns.get(3).getGeospatialStatistics().getBoundingBox();
            assertThat(List.of(box.getXMin(), box.getXMax(), box.getYMin(), box.getYMax()))
                .containsExactly(-179.0, 179.0, -5.0, 12.0);
          }
        }
      }
      List<Record> actual = TestEnvironment.readAll(table);
      actual.sort(Comparator.comparing(r -> (Long) r.getField("id")));
      assertThat(actual).hasSize(rows.size());
      for (int i = 0; i < rows.size(); i++) {
        assertThat(Values.normal(actual.get(i))).isEqualTo(Values.normal(rows.get(i)));
      }
    }
  }

  private static ByteBuffer littleEndian(ByteBuffer b) {
    return b.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
  }

  /** Each data file's partition tuple equals Iceberg's own PartitionKey of every row in it. */
  static void assertPartitionValuesMatchIceberg(Table table) throws IOException {
    PartitionSpec spec = table.spec();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        PartitionKey key = new PartitionKey(spec, table.schema());
        InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
        try (CloseableIterable<Record> rows = Parquet.read(table.io().newInputFile(file.location()))
            .project(table.schema())
            .createReaderFunc(fs -> GenericParquetReaders.buildReader(table.schema(), fs))
            .build()) {
          for (Record r : rows) {
            // DuckDB stores fixed(n) as Parquet BINARY, which the generic reader returns as a
            // ByteBuffer; the wrapper expects the generic form of fixed, byte[].
            Record internal = r.copy();
            for (Types.NestedField f : table.schema().columns()) {
              if (f.type().typeId() == org.apache.iceberg.types.Type.TypeID.FIXED
                  && internal.getField(f.name()) instanceof java.nio.ByteBuffer b) {
                internal.setField(f.name(), org.apache.iceberg.util.ByteBuffers.toByteArray(b));
              }
            }
            key.partition(wrapper.wrap(internal));
            assertThat(partitionValues(key, spec)).isEqualTo(partitionValues(file.partition(), spec));
          }
        }
      }
    }
  }

  private static List<Object> partitionValues(StructLike s, PartitionSpec spec) {
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < spec.fields().size(); i++) {
      out.add(s.get(i, Object.class));
    }
    return out;
  }
}

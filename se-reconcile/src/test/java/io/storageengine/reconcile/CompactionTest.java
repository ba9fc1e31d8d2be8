package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.GeoValues;
import io.storageengine.catalog.TableProperties;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.schema.EdgeInterpolationAlgorithm;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction: small files and deletion vectors folded into few files, lineage and mark kept. */
class CompactionTest {
  @TempDir Path dir;

  @Test
  void entityCompactionFoldsDeletionVectorsAndKeepsRowLineage() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      for (int s = 0; s < 6; s++) {
        f.write(false, 1, s * 10, s * 10 + 1, s * 10 + 2, s * 10 + 3);
        f.reconcile();
      }
      f.write(false, 2, 0, 11, 22, 33);
      f.reconcile();
      f.write(true, 3, 1, 12, 50);
      f.reconcile();
      List<DataFile> before = MaintenanceFixture.dataFiles(f.table);
      assertThat(before).hasSize(7);
      assertThat(MaintenanceFixture.deleteFiles(f.table)).isPositive();
      Map<Long, List<Long>> lineage = MaintenanceFixture.lineage(f.table);
      long mark = WalHighWaterMark.of(f.table);

      MaintenanceResult result = f.maintainer(MaintenanceFixture.compactingPolicy()).maintain(f.tw);

      assertThat(result.outcome()).isEqualTo(MaintenanceResult.Outcome.MAINTAINED);
      assertThat(result.errors()).isEmpty();
      assertThat(result.compaction().groups()).isEqualTo(1);
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(7);
      assertThat(result.compaction().dataFilesAdded()).isEqualTo(1);
      assertThat(result.compaction().deleteVectorsFolded()).isPositive();
      assertThat(result.compaction().rowsRewritten()).isEqualTo(f.model.rows.size());
      assertThat(MaintenanceFixture.dataFiles(f.table)).hasSize(1);
      assertThat(MaintenanceFixture.deleteFiles(f.table)).isZero();
      assertThat(f.table.currentSnapshot().operation()).isEqualTo("replace");
      assertThat(f.table.currentSnapshot().summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ,
          Long.toString(mark));
      f.assertMatchesModel("after compaction");
      assertThat(MaintenanceFixture.lineage(f.table)).isEqualTo(lineage);

      // Nothing left to do: a second pass rewrites nothing.
      MaintenanceResult again = f.maintainer(MaintenanceFixture.compactingPolicy()).maintain(f.tw);
      assertThat(again.compaction().groups()).isZero();

      // Reconcile goes on from the carried mark; updated rows keep their ids in the new file too.
      f.write(false, 4, 0, 2, 99);
      ReconcileResult next = f.reconcile();
      assertThat(next.fromSeq()).isEqualTo(mark + 1);
      f.assertMatchesModel("after compaction and an update");
      Map<Long, List<Long>> after = MaintenanceFixture.lineage(f.table);
      assertThat(after.get(0L).get(0)).isEqualTo(lineage.get(0L).get(0));
      assertThat(after.get(2L).get(0)).isEqualTo(lineage.get(2L).get(0));
      assertThat(after.get(3L)).isEqualTo(lineage.get(3L));

    }
  }

  @Test
  void appendCompactionRewritesEachPartitionAndKeepsRowIds() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      PartitionSpec spec = PartitionSpec.builderFor(AppendTableTest.SCHEMA).identity("cat").build();
      Table table = env.createTable("events", AppendTableTest.SCHEMA, spec, SortOrder.unsorted(),
          Map.of(MaintenancePolicy.MIN_INPUT_FILES, "3"));
      TableWal tw = env.walOf(table, "events");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 4; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 30, 30));
        reconciler.reconcile(tw);
      }
      assertThat(MaintenanceFixture.dataFiles(table)).hasSize(12);
      Map<Long, Long> rowIds = rowIds(table);

      MaintenanceResult result = new io.storageengine.reconcile.maintenance.Maintainer(env.catalogs, env.wal,
          env.store, env.tombstones, env.allocator, env.duckdb, TestEnvironment.options(), MaintenancePolicy.defaults()).maintain(tw);

      assertThat(result.compaction().groups()).isEqualTo(3);
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(12);
      assertThat(result.compaction().dataFilesAdded()).isEqualTo(3);
      List<DataFile> files = MaintenanceFixture.dataFiles(table);
      assertThat(files).hasSize(3);
      assertThat(files).extracting(f -> f.partition().get(0, String.class)).containsExactlyInAnyOrder("c0", "c1", "c2");
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 120);
      assertThat(rowIds(table)).isEqualTo(rowIds);
      assertThat(WalHighWaterMark.of(table)).isEqualTo(4);
    }
  }

  @Test
  void compactionKeepsTheGeospatialLogicalTypes() throws Exception {
    Schema schema = new Schema(required(1, "id",
            Types.LongType.get()),
        optional(2, "geog", Types.GeographyType.of(
            "srid:4326", EdgeAlgorithm.ANDOYER)),
        optional(3, "m",
            Types.GeometryType.of("srid:3857")));
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("geo", schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(MaintenancePolicy.MIN_INPUT_FILES, "3"));
      TableWal tw = env.walOf(table, "geo");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      List<Record> expected = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        Record rec = GenericRecord.create(schema);
        rec.setField("id", (long) s);
        ByteBuffer wkb = ByteBuffer.wrap(GeoValues.wktToWkb("POINT (" + s + " 1)"));
        rec.setField("geog", wkb);
        rec.setField("m", wkb);
        expected.add(rec);
        env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, schema, List.of(rec)));
        reconciler.reconcile(tw);
      }
      assertThat(MaintenanceFixture.dataFiles(table)).hasSize(3);

      MaintenanceResult result = new Maintainer(env.catalogs, env.wal,
          env.store, env.tombstones, env.allocator, env.duckdb, TestEnvironment.options(), MaintenancePolicy.defaults()).maintain(tw);

      assertThat(result.compaction().dataFilesAdded()).isEqualTo(1);
      List<DataFile> files = MaintenanceFixture.dataFiles(table);
      assertThat(files).hasSize(1);
      Path local = dir.resolve("compacted.parquet");
      try (InputStream in = table.io().newInputFile(files.get(0).location()).newStream()) {
        Files.copy(in, local);
      }
      try (ParquetFileReader reader = ParquetFileReader.open(
          new LocalInputFile(local))) {
        MessageType parquet = reader.getFooter().getFileMetaData().getSchema();
        assertThat(parquet.getType("geog").getLogicalTypeAnnotation()).isEqualTo(
            LogicalTypeAnnotation.geographyType("srid:4326",
                EdgeInterpolationAlgorithm.ANDOYER));
        assertThat(parquet.getType("m").getLogicalTypeAnnotation())
            .isEqualTo(LogicalTypeAnnotation.geometryType("srid:3857"));
      }
      List<Record> actual = TestEnvironment.readAll(table);
      actual.sort(Comparator.comparing(r -> (Long) r.getField("id")));
      assertThat(actual).extracting(Values::normal).containsExactlyElementsOf(
          expected.stream().map(Values::normal).toList());
    }
  }

  @Test
  void manifestsAreRewrittenAboveTheLimitAndTheMarkIsCarried() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(MaintenancePolicy.MAX_MANIFESTS, "3", MaintenancePolicy.ENABLED, "true",
              MaintenancePolicy.MIN_INPUT_FILES, "1000"));
      TableWal tw = env.walOf(table, "events");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 6; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(tw);
      }
      MaintenanceResult result = new io.storageengine.reconcile.maintenance.Maintainer(env.catalogs, env.wal,
          env.store, env.tombstones, env.allocator, env.duckdb, TestEnvironment.options(), MaintenancePolicy.defaults()).maintain(tw);
      assertThat(result.manifestsBefore()).isEqualTo(6);
      assertThat(result.manifestsAfter()).isEqualTo(1);
      assertThat(result.compaction().groups()).isZero();
      table.refresh();
      assertThat(table.currentSnapshot().summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ, "6");
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 60);
    }
  }

  private static Map<Long, Long> rowIds(Table table) throws Exception {
    table.refresh();
    Schema projection = TypeUtil.join(table.schema(), new Schema(MetadataColumns.ROW_ID));
    Map<Long, Long> ids = new HashMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record r : rows) {
        ids.put((Long) r.getField("id"), (Long) r.getField(MetadataColumns.ROW_ID.name()));
      }
    }
    return ids;
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.duckdb.DuckRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hidden row lineage columns read as the Iceberg v3 spec (and so Spark) gives them: the value
 * a data file holds, else {@code first_row_id} plus the row's position and the data sequence
 * number of the file's manifest entry; never in {@code SELECT *}.
 */
class RowLineageTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));
  static EngineFixture fixture;
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static DuckRuntime duckdb;
  static QueryEngine engine;
  static Table table;
  static long firstSnapshot;

  @BeforeAll
  static void setUp() throws Exception {
    fixture = EngineFixture.create("se-query-lineage");
    dir = fixture.dir;
    allocator = fixture.allocator;
    warehouse = fixture.warehouse;
    Catalog catalog = warehouse.localCatalog("alpha", dir.resolve("alpha"));
    table = TestWarehouse.createTable(catalog, "ns", "t", SCHEMA, PartitionSpec.unpartitioned());
    DataFile first = TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 1L, "a"),
        TestWarehouse.record(SCHEMA, 2L, "b"), TestWarehouse.record(SCHEMA, 3L, "c"))).get(0);
    firstSnapshot = table.currentSnapshot().snapshotId();
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 4L, "d"), TestWarehouse.record(SCHEMA, 5L, "e")));
    TestWarehouse.deletePositions(table, first, 1);
    // A file that carries lineage of its own (as a rewrite keeps it): one row with values, one without.
    Path carried = dir.resolve("carried.parquet");
    try (Connection writer = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = writer.createStatement()) {
      statement.execute("COPY (SELECT 6::BIGINT AS id, 'f' AS name, 100::BIGINT AS r, 1::BIGINT AS s UNION ALL "
          + "SELECT 7::BIGINT, 'g', NULL::BIGINT, NULL::BIGINT) TO '" + carried + "' (FORMAT parquet, FIELD_IDS "
          + "{id: 1, name: 2, r: " + MetadataColumns.ROW_ID.fieldId() + ", s: "
          + MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.fieldId() + "})");
    }
    table.newAppend().appendFile(DataFiles.builder(table.spec()).withPath(carried.toUri().toString())
        .withFormat(FileFormat.PARQUET).withFileSizeInBytes(Files.size(carried)).withRecordCount(2).build()).commit();
    engine = fixture.start();
    duckdb = fixture.duckdb;
  }

  @AfterAll
  static void tearDown() throws Exception {
    fixture.close();
  }

  static List<String> query(String sql) throws Exception {
    return EngineFixture.query(engine, allocator, "alpha", sql, Map.of());
  }

  /**
   * id|_row_id|_last_updated_sequence_number of every live row by the spec's rule, from Iceberg's
   * plan (first_row_id, data sequence number, deleted positions) and each file's rows in order.
   */
  static List<String> expected(long snapshotId) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        java.util.Set<Long> deleted = new java.util.HashSet<>();
        if (!task.deletes().isEmpty()) {
          new org.apache.iceberg.data.BaseDeleteLoader(delete -> table.io().newInputFile(delete.location()))
              .loadPositionDeletes(task.deletes(), file.location()).forEach(deleted::add);
        }
        boolean carried = file.location().endsWith("carried.parquet");
        long position = 0;
        try (CloseableIterable<Record> records = Parquet.read(table.io().newInputFile(file.location())).project(SCHEMA)
            .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(SCHEMA, fileSchema)).build()) {
          for (Record record : records) {
            long id = (Long) record.getField("id");
            if (!deleted.contains(position)) {
              // The carried file holds id 6's lineage; id 7's is null there, so inherited.
              long rowId = carried && id == 6 ? 100 : file.firstRowId() + position;
              long sequence = carried && id == 6 ? 1 : file.dataSequenceNumber();
              rows.put(id, id + "|" + rowId + "|" + sequence);
            }
            position++;
          }
        }
      }
    }
    return new ArrayList<>(rows.values());
  }

  @Test
  void lineageFollowsTheSpecsInheritanceRule() throws Exception {
    List<String> expected = expected(table.currentSnapshot().snapshotId());
    assertThat(expected).hasSize(6).noneMatch(row -> row.startsWith("2|"));
    List<String> result = query("SELECT id, _row_id, _last_updated_sequence_number FROM ns.t ORDER BY id");
    assertThat(result.get(0)).isEqualTo("id,_row_id,_last_updated_sequence_number");
    assertThat(result.subList(1, result.size())).containsExactlyElementsOf(expected);
    // First row ids are assigned per commit: ids 1-3 are 0-2, ids 4-5 follow, and the later files' sequence numbers grow.
    assertThat(expected.get(0)).startsWith("1|0|1");
    assertThat(query("SELECT t._row_id FROM ns.t t WHERE id = 5")).containsExactly("_row_id", "4");
  }

  @Test
  void lineageColumnsAreHiddenFromStar() throws Exception {
    assertThat(query("SELECT * FROM ns.t WHERE id = 1")).containsExactly("id,name", "1|a");
    // Also in a statement that names them: a star over a table never shows them.
    assertThat(query("SELECT *, _row_id FROM ns.t WHERE id = 1")).containsExactly("id,name,_row_id", "1|a|0");
    assertThat(query("SELECT x.* FROM ns.t x WHERE x._row_id = 0")).containsExactly("id,name", "1|a");
    assertThat(query("SELECT * FROM ns.t a JOIN ns.t b ON a._row_id = b._row_id WHERE a.id = 1"))
        .containsExactly("id,name,id,name", "1|a|1|a");
    // A star over a subquery shows what the subquery selects.
    assertThat(query("SELECT * FROM (SELECT *, _last_updated_sequence_number AS s FROM ns.t) WHERE id = 1"))
        .containsExactly("id,name,s", "1|a|1");
  }

  @Test
  void lineageOfAnOldSnapshotIsTheSameRowsIdentity() throws Exception {
    List<String> old = query("SELECT id, _row_id, _last_updated_sequence_number FROM ns.t FOR VERSION AS OF "
        + firstSnapshot + " ORDER BY id");
    assertThat(old.subList(1, old.size())).containsExactlyElementsOf(expected(firstSnapshot)).contains("2|1|1");
    // The rows of the first file still live, found by row id across the two snapshots.
    assertThat(query("SELECT list(a.id ORDER BY a.id) FROM ns.t a JOIN ns.t FOR VERSION AS OF " + firstSnapshot
        + " b ON a._row_id = b._row_id")).containsExactly("list(a.id ORDER BY a.id)", "[1,3]");
  }
}

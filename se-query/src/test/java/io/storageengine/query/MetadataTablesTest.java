package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.duckdb.DuckRuntime;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HistoryEntry;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The metadata tables of a partitioned table with appends, a deletion vector, a tag and a
 * branch: each one's rows are what Iceberg's own API says about the table, they join and filter
 * like tables, and they are visible only in the table's own tenant.
 */
class MetadataTablesTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "part", Types.IntegerType.get()),
      Types.NestedField.optional(3, "at", Types.TimestampType.withZone()));
  static EngineFixture fixture;
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static DuckRuntime duckdb;
  static QueryEngine engine;
  static Table table;

  @BeforeAll
  static void setUp() throws Exception {
    fixture = EngineFixture.create("se-query-metadata-tables");
    dir = fixture.dir;
    allocator = fixture.allocator;
    warehouse = fixture.warehouse;
    Catalog catalog = warehouse.localCatalog("alpha", dir.resolve("alpha"));
    warehouse.localCatalog("beta", dir.resolve("beta"));
    table = TestWarehouse.createTable(catalog, "ns", "t", SCHEMA, PartitionSpec.builderFor(SCHEMA).identity("part").build());
    table.updateProperties().set("owner", "analytics").set("comment", "it's a test").commit();
    java.time.OffsetDateTime at = java.time.OffsetDateTime.parse("2024-05-01T12:00:00.123456Z");
    List<DataFile> first = TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 1L, 1, at),
        TestWarehouse.record(SCHEMA, 2L, 1, at.plusHours(1)), TestWarehouse.record(SCHEMA, 3L, 2, null)));
    table.manageSnapshots().createTag("first", table.currentSnapshot().snapshotId()).commit();
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 4L, 2, at), TestWarehouse.record(SCHEMA, 5L, 3, at)));
    TestWarehouse.deletePositions(table, first.get(0), 1);
    table.manageSnapshots().createBranch("audit").commit();
    engine = fixture.start();
    duckdb = fixture.duckdb;
  }

  @AfterAll
  static void tearDown() throws Exception {
    fixture.close();
  }

  /** Rows (values joined by |, column names first). */
  static List<String> query(String catalogId, String sql) throws Exception {
    return EngineFixture.query(engine, allocator, catalogId, sql, Map.of());
  }

  static List<String> rows(String sql) throws Exception {
    List<String> result = query("alpha", sql);
    return result.subList(1, result.size());
  }

  @Test
  void snapshotsAndHistoryAreTheTablesSnapshotLog() throws Exception {
    List<String> expected = new ArrayList<>();
    for (Snapshot snapshot : table.snapshots()) {
      expected.add(snapshot.snapshotId() + "|" + snapshot.parentId() + "|" + snapshot.operation() + "|"
          + snapshot.timestampMillis() + "|" + snapshot.manifestListLocation() + "|" + snapshot.summary().get("added-records"));
    }
    assertThat(rows("SELECT snapshot_id, parent_id, operation, epoch_ms(committed_at), manifest_list, "
        + "summary['added-records'] FROM ns.\"t$snapshots\" ORDER BY committed_at, snapshot_id"))
        .containsExactlyInAnyOrderElementsOf(expected).hasSize(3);
    assertThat(query("alpha", "SELECT * FROM ns.\"t$snapshots\" LIMIT 0").get(0))
        .isEqualTo("committed_at,snapshot_id,parent_id,operation,manifest_list,summary");

    List<String> history = new ArrayList<>();
    List<Long> ancestors = SnapshotUtil.currentAncestorIds(table);
    for (HistoryEntry entry : table.history()) {
      history.add(entry.timestampMillis() + "|" + entry.snapshotId() + "|" + table.snapshot(entry.snapshotId()).parentId()
          + "|" + ancestors.contains(entry.snapshotId()));
    }
    assertThat(rows("SELECT epoch_ms(made_current_at), snapshot_id, parent_id, is_current_ancestor FROM ns.\"t$history\""))
        .containsExactlyInAnyOrderElementsOf(history);
  }

  @Test
  void filesAndEntriesAreTheCurrentSnapshotsDataAndDeleteFiles() throws Exception {
    List<String> files = new ArrayList<>();
    List<String> deletes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        files.add("0|" + file.location() + "|PARQUET|" + file.partition().get(0, Integer.class) + "|" + file.recordCount()
            + "|" + file.fileSizeInBytes() + "|" + file.firstRowId());
        for (DeleteFile delete : task.deletes()) {
          deletes.add("1|" + delete.location() + "|PUFFIN|" + delete.partition().get(0, Integer.class) + "|"
              + delete.recordCount() + "|" + delete.fileSizeInBytes() + "|null");
        }
      }
    }
    files.addAll(deletes);
    assertThat(rows("SELECT content, file_path, file_format, partition.part, record_count, file_size_in_bytes, "
        + "first_row_id FROM ns.\"t$files\"")).containsExactlyInAnyOrderElementsOf(files).hasSize(5);
    // Column statistics as Iceberg keeps them, also readable.
    assertThat(rows("SELECT value_counts[1], null_value_counts[3], readable_metrics.id.lower_bound, "
        + "readable_metrics.id.upper_bound FROM ns.\"t$files\" WHERE content = 0 AND partition.part = 1"))
        .containsExactly("2|0|1|2");
    assertThat(rows("SELECT count(*) FROM ns.\"t$files\" WHERE readable_metrics.\"at\".upper_bound "
        + "= TIMESTAMPTZ '2024-05-01 13:00:00.123456+00'")).containsExactly("1");

    List<String> entries = new ArrayList<>();
    for (ManifestFile manifest : table.currentSnapshot().allManifests(table.io())) {
      if (manifest.content() == org.apache.iceberg.ManifestContent.DATA) {
        try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, table.io(), table.specs())) {
          for (DataFile file : reader) {
            entries.add(file.location() + "|" + file.dataSequenceNumber() + "|" + file.fileSequenceNumber());
          }
        }
      } else {
        try (var reader = ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          for (DeleteFile file : reader) {
            entries.add(file.location() + "|" + file.dataSequenceNumber() + "|" + file.fileSequenceNumber());
          }
        }
      }
    }
    assertThat(rows("SELECT data_file.file_path, sequence_number, file_sequence_number FROM ns.\"t$entries\" "
        + "WHERE status <> 2")).containsExactlyInAnyOrderElementsOf(entries);
    // Joins: each live entry was added by a snapshot of the table.
    assertThat(rows("SELECT count(*) FROM ns.\"t$entries\" e JOIN ns.\"t$snapshots\" s ON e.snapshot_id = s.snapshot_id"))
        .containsExactly(String.valueOf(entries.size()));
  }

  @Test
  void manifestsPartitionsRefsAndProperties() throws Exception {
    List<String> manifests = new ArrayList<>();
    for (ManifestFile manifest : table.currentSnapshot().allManifests(table.io())) {
      manifests.add(manifest.path() + "|" + manifest.length() + "|" + manifest.content().id() + "|" + manifest.snapshotId()
          + "|" + manifest.addedFilesCount());
    }
    assertThat(rows("SELECT path, length, content, added_snapshot_id, added_data_files_count + added_delete_files_count "
        + "FROM ns.\"t$manifests\"")).containsExactlyInAnyOrderElementsOf(manifests);

    Map<Integer, long[]> partitions = new TreeMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        long[] counts = partitions.computeIfAbsent(task.file().partition().get(0, Integer.class), k -> new long[3]);
        counts[0] += task.file().recordCount();
        counts[1]++;
        for (DeleteFile delete : task.deletes()) {
          counts[2] += delete.recordCount();
        }
      }
    }
    List<String> expected = new ArrayList<>();
    partitions.forEach((part, counts) -> expected.add(part + "|" + counts[0] + "|" + counts[1] + "|" + counts[2]));
    assertThat(rows("SELECT partition.part, record_count, file_count, position_delete_record_count FROM ns.\"t$partitions\" "
        + "ORDER BY 1")).containsExactlyElementsOf(expected);

    List<String> refs = new ArrayList<>();
    table.refs().forEach((name, ref) -> refs.add(name + "|" + (ref.isBranch() ? "BRANCH" : "TAG") + "|" + ref.snapshotId()));
    assertThat(rows("SELECT name, type, snapshot_id FROM ns.\"t$refs\"")).containsExactlyInAnyOrderElementsOf(refs)
        .hasSize(3);

    List<String> properties = new ArrayList<>();
    new TreeMap<>(table.properties()).forEach((key, value) -> properties.add(key + "|" + value));
    assertThat(rows("SELECT key, value FROM ns.\"t$properties\" ORDER BY key")).containsExactlyElementsOf(properties)
        .contains("comment|it's a test", "owner|analytics");
  }

  @Test
  void walShowsThePendingSegmentsOfThisTableOnly() throws Exception {
    List<String> asked = new ArrayList<>();
    PendingWal wal = (catalogId, tableUuid) -> {
      asked.add(catalogId + "/" + tableUuid);
      // Segment 7 written 90 s ago; segment 8 by a store whose clock runs ahead of ours; a store
      // that does not say when (segment 9).
      return tableUuid.equals(table.uuid()) ? List.of(
          new PendingWal.Segment(7, "ingest-1", "n1", 2, 300, 4096, 6, java.time.Instant.now().minusSeconds(90)),
          new PendingWal.Segment(8, "ingest-2", "n2", 1, 5, 128, 6, java.time.Instant.now().plusSeconds(5)),
          new PendingWal.Segment(9, "ingest-2", "n2", 1, 1, 64, 6)) : List.of();
    };
    try (QueryEngine withWal = new QueryEngine(warehouse, duckdb,
        QueryConfig.defaults().withThreads(1).withMemoryLimit("256MB"), wal)) {
      List<String> result = EngineFixture.query(withWal, allocator, "alpha",
          "SELECT * EXCLUDE (written_at, age_ms) FROM ns.\"t$wal\" ORDER BY seq", Map.of());
      assertThat(result).containsExactly("seq,writer_id,writer_nonce,frames,rows,bytes,published_seq",
          "7|ingest-1|n1|2|300|4096|6", "8|ingest-2|n2|1|5|128|6", "9|ingest-2|n2|1|1|64|6");
      assertThat(EngineFixture.query(withWal, allocator, "alpha", "SELECT writer_id, sum(rows) FROM ns.\"t$wal\" "
          + "WHERE bytes > 1000 GROUP BY ALL", Map.of())).containsExactly("writer_id,sum(\"rows\")", "ingest-1|300");
      // Ages: 90 s (to within the test's own time), never negative, NULL when unknown; written_at
      // agrees with the age.
      assertThat(EngineFixture.query(withWal, allocator, "alpha", "SELECT seq, age_ms BETWEEN 90000 AND 150000, "
          + "age_ms = 0, written_at IS NULL, abs(epoch_ms(now()) - epoch_ms(written_at) - age_ms) < 60000 "
          + "FROM ns.\"t$wal\" ORDER BY seq", Map.of())).containsExactly(
              "seq,(age_ms BETWEEN 90000 AND 150000),(age_ms = 0),(written_at IS NULL),"
                  + "(abs(((epoch_ms(now()) - epoch_ms(written_at)) - age_ms)) < 60000)",
              "7|true|false|false|true", "8|false|true|false|true", "9|null|null|true|null");
      // The oldest unreconciled age and the backlog per writer.
      assertThat(EngineFixture.query(withWal, allocator, "alpha", "SELECT writer_id, count(*), sum(rows), "
          + "max(age_ms) >= 90000 FROM ns.\"t$wal\" GROUP BY ALL ORDER BY 1", Map.of())).containsExactly(
              "writer_id,count_star(),sum(\"rows\"),(max(age_ms) >= 90000)", "ingest-1|1|300|true",
              "ingest-2|2|6|false");
    }
    assertThat(asked).containsOnly("alpha/" + table.uuid());
    // Without a WAL (a host that has none): no rows, the same columns.
    assertThat(query("alpha", "SELECT * FROM ns.\"t$wal\"")).containsExactly(
        "seq,writer_id,writer_nonce,frames,rows,bytes,published_seq,written_at,age_ms");
  }

  @Test
  void slicesListTheSlicesOfASlicedEntityTable() throws Exception {
    Schema keyed = new Schema(List.of(Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "v", Types.StringType.get())), java.util.Set.of(1));
    Table sliced = TestWarehouse.createTable(warehouse.catalog("alpha"), "ns", "sliced", keyed,
        PartitionSpec.unpartitioned());
    sliced.updateProperties().set("se.mode", "entity").set("se.slice.count", "2").commit();
    // Metadata only: the slices' files are counted from the manifests, never read.
    sliced.newAppend()
        .appendFile(metadataOnlyFile(sliced, "slice-0-a.parquet", 5))
        .appendFile(metadataOnlyFile(sliced, "slice-1-b.parquet", 7))
        .appendFile(metadataOnlyFile(sliced, "slice-1-c.parquet", 5))
        .set("se.wal.seq", "3").set("se.wal.seq.0", "3").set("se.wal.seq.1", "4")
        .commit();
    assertThat(query("alpha", "SELECT * FROM ns.\"sliced$slices\" ORDER BY slice_id")).containsExactly(
        "slice_id,hash_range,hash_lo,hash_hi,wal_seq,data_files,rows",
        "0|00000000-7fffffff|0|2147483648|3|1|5",
        "1|80000000-ffffffff|2147483648|4294967296|4|2|12");
    // A table that is not sliced has none.
    assertThat(query("alpha", "SELECT * FROM ns.\"t$slices\"")).hasSize(1);
  }

  private static DataFile metadataOnlyFile(Table table, String name, long rows) {
    return org.apache.iceberg.DataFiles.builder(table.spec()).withPath(table.locationProvider().newDataLocation(name))
        .withFormat(org.apache.iceberg.FileFormat.PARQUET).withFileSizeInBytes(100).withRecordCount(rows).build();
  }

  @Test
  void describedAndScopedLikeTheTable() throws Exception {
    assertThat(rows("DESCRIBE ns.\"t$refs\"")).extracting(row -> row.split("\\|")[0] + " " + row.split("\\|")[1])
        .containsExactly("name VARCHAR", "type VARCHAR", "snapshot_id BIGINT", "max_reference_age_in_ms BIGINT",
            "min_snapshots_to_keep INTEGER", "max_snapshot_age_in_ms BIGINT");
    // Next to the table itself, in one query.
    assertThat(rows("SELECT count(*) FROM ns.t, ns.\"t$snapshots\" s WHERE s.snapshot_id = "
        + table.currentSnapshot().snapshotId())).containsExactly("4");
    assertThatThrownBy(() -> query("beta", "SELECT * FROM ns.\"t$snapshots\""))
        .satisfies(TimeTravelTest.code(ErrorCode.NOT_FOUND)).hasMessageContaining("table default.\"ns\".\"t\" does not exist");
    assertThatThrownBy(() -> query("alpha", "SELECT * FROM ns.\"missing$files\""))
        .satisfies(TimeTravelTest.code(ErrorCode.NOT_FOUND)).hasMessageContaining("\"missing\" does not exist");
  }
}

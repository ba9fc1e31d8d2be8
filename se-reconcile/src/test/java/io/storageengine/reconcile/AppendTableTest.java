package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Append tables: exactly-once, partitioned and sorted files, file sizing, commit bounds. */
class AppendTableTest {
  static final Schema SCHEMA = new Schema(
      required(1, "id", Types.LongType.get()),
      optional(2, "ts", Types.TimestampType.withoutZone()),
      optional(3, "cat", Types.StringType.get()),
      optional(4, "v", Types.IntegerType.get()));

  @TempDir Path dir;

  static WalFrame frame(TestEnvironment env, long firstId, int rows) {
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      long id = firstId + i;
      GenericRecord r = GenericRecord.create(SCHEMA);
      r.setField("id", id);
      r.setField("ts", LocalDateTime.of(2024, 1, 1, 0, 0).plusHours(id * 7 % 96));
      r.setField("cat", "c" + (id % 3));
      r.setField("v", (int) ((id * 7919) % 1000));
      records.add(r);
    }
    return ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, SCHEMA, records);
  }

  @Test
  void everyRowOnceAcrossReruns() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      for (int s = 0; s < 5; s++) {
        env.append(tw, frame(env, s * 100, 100));
      }
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      ReconcileResult first = reconciler.reconcile(tw);
      assertThat(first.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(first.fromSeq()).isEqualTo(1);
      assertThat(first.toSeq()).isEqualTo(5);
      assertThat(first.walRows()).isEqualTo(500);
      assertThat(first.rowsWritten()).isEqualTo(500);

      ReconcileResult again = reconciler.reconcile(tw);
      assertThat(again.outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      assertThat(again.toSeq()).isEqualTo(5);

      env.append(tw, frame(env, 500, 50));
      ReconcileResult more = reconciler.reconcile(tw);
      assertThat(more.fromSeq()).isEqualTo(6);
      assertThat(more.toSeq()).isEqualTo(6);

      assertIds(TestEnvironment.readAll(table), 550);
      table.refresh();
      assertThat(table.currentSnapshot().summary()).containsEntry(TableProperties.SUMMARY_WAL_SEQ, "6");
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(6);
    }
  }

  @Test
  void bytesPerCommitBoundSplitsTheWalIntoSeveralCommits() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      for (int s = 0; s < 6; s++) {
        env.append(tw, frame(env, s * 10, 10));
      }
      Reconciler reconciler = env.reconciler(TestEnvironment.options().withMaxBytesPerCommit(1));
      List<Long> ends = new ArrayList<>();
      for (ReconcileResult r = reconciler.reconcile(tw); r.outcome() == ReconcileResult.Outcome.COMMITTED;
          r = reconciler.reconcile(tw)) {
        assertThat(r.fromSeq()).isEqualTo(r.toSeq());
        ends.add(r.toSeq());
      }
      assertThat(ends).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
      assertIds(TestEnvironment.readAll(table), 60);
      table.refresh();
      List<String> seqs = new ArrayList<>();
      for (Snapshot s : table.snapshots()) {
        seqs.add(s.summary().get(TableProperties.SUMMARY_WAL_SEQ));
      }
      assertThat(seqs).containsExactly("1", "2", "3", "4", "5", "6");
    }
  }

  @Test
  void filesArePartitionedSortedAndCutAtTheTargetSize() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      PartitionSpec spec = PartitionSpec.builderFor(SCHEMA).day("ts").identity("cat").build();
      SortOrder order = SortOrder.builderFor(SCHEMA).desc("v").asc("id").build();
      Table table = env.createTable("events", SCHEMA, spec, order, Map.of());
      TableWal tw = env.walOf(table, "events");
      for (int s = 0; s < 4; s++) {
        env.append(tw, frame(env, s * 12000, 12000));
      }
      ReconcileOptions small = TestEnvironment.options().withTargetFileSize(2 * 1024, 100);
      ReconcileResult result = env.reconciler(small).reconcile(tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertIds(TestEnvironment.readAll(table), 48000);

      TypeRoundTripTest.assertPartitionValuesMatchIceberg(table);
      Map<String, Integer> filesPerPartition = new HashMap<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile file = task.file();
          assertThat(file.sortOrderId()).isEqualTo(table.sortOrder().orderId());
          filesPerPartition.merge(file.partition().toString(), 1, Integer::sum);
          assertSortedInside(table, file);
        }
      }
      // 4 days x 3 categories, each partition has ~1000 rows: several files each at 2 KiB.
      assertThat(filesPerPartition).hasSize(12);
      assertThat(filesPerPartition.values()).allSatisfy(n -> assertThat(n).isGreaterThan(1));
      assertThat(result.dataFiles()).isEqualTo(filesPerPartition.values().stream().mapToInt(i -> i).sum());
    }
  }

  private static void assertSortedInside(Table table, DataFile file) throws IOException {
    int previousV = Integer.MAX_VALUE;
    long previousId = Long.MIN_VALUE;
    try (CloseableIterable<Record> rows = Parquet.read(table.io().newInputFile(file.location()))
        .project(table.schema())
        .createReaderFunc(fs -> GenericParquetReaders.buildReader(table.schema(), fs)).build()) {
      for (Record r : rows) {
        int v = (Integer) r.getField("v");
        long id = (Long) r.getField("id");
        boolean ordered = v < previousV || (v == previousV && id > previousId);
        if (!ordered) {
          assertThat(List.of(v, id)).as("(v desc, id asc) order in %s after (%s, %s)", file.location(),
              previousV, previousId).isNull();
        }
        previousV = v;
        previousId = id;
      }
    }
  }

  /** The rows' ids are exactly 0..expected-1, each once. */
  static void assertIds(List<Record> rows, int expected) {
    Set<Long> ids = new HashSet<>();
    List<Object> duplicates = new ArrayList<>();
    for (Record r : rows) {
      if (!ids.add((Long) r.getField("id"))) {
        duplicates.add(r.getField("id"));
      }
    }
    assertThat(duplicates).as("duplicate ids").isEmpty();
    Set<Long> expectedIds = new HashSet<>();
    for (long i = 0; i < expected; i++) {
      expectedIds.add(i);
    }
    assertThat(ids.equals(expectedIds)).as("ids are 0..%d", expected - 1).isTrue();
  }
}

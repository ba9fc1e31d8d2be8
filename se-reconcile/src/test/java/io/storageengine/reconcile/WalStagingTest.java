package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staging loads runs of frames with one statement each: rows keep their arrival order (seq,
 * frame, row) across many small frames and schema changes, with each frame's op and seq.
 */
class WalStagingTest {
  @TempDir Path dir;

  @Test
  void keepsArrivalOrderAcrossManySmallFramesAndSchemaChanges() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      Schema idAndCat = AppendTableTest.SCHEMA.select("id", "cat");
      List<long[]> expected = new ArrayList<>(); // {id, seq, op, v present}
      long id = 0;
      for (int s = 1; s <= 3; s++) {
        List<WalFrame> frames = new ArrayList<>();
        for (int f = 0; f < 40; f++) {
          int rows = 1 + (f * 7) % 13;
          boolean partial = f % 10 == 9; // a different schema in the middle of a run
          boolean delete = f % 17 == 16;
          WalOperation op = delete ? WalOperation.DELETE : WalOperation.UPSERT;
          frames.add(partial ? partialFrame(env, idAndCat, op, id, rows) : fullFrame(env, op, id, rows));
          for (int r = 0; r < rows; r++) {
            expected.add(new long[] {id + r, s, delete ? 2 : 1, partial ? 0 : 1});
          }
          id += rows;
        }
        env.append(tw, frames.toArray(new WalFrame[0]));
      }
      List<WalSegment> segments = new ArrayList<>();
      for (long seq = 1; seq <= 3; seq++) {
        segments.add(env.wal.read(tw, seq).orElseThrow());
      }

      List<long[]> staged = new ArrayList<>();
      try (BufferAllocator pass = env.allocator.newChildAllocator("pass", 0, Long.MAX_VALUE);
          DuckSession duck = new DuckSession(env.duckdb, pass, 2, TestEnvironment.CATALOG)) {
        long rows = WalStaging.load(duck, table.schema(), segments);
        assertThat(rows).isEqualTo(expected.size());
        duck.query("SELECT id, __seq, __op, " + WalStaging.presentFlag(3) + ", v FROM " + WalStaging.TABLE
            + " ORDER BY rowid", rs -> {
              staged.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getBoolean(4) ? 1 : 0});
              // A column a partial frame omits is flagged absent and NULL.
              assertThat(rs.getObject(5) != null).isEqualTo(rs.getBoolean(4));
            });
      }
      assertThat(staged).usingElementComparator((a, b) -> java.util.Arrays.equals(a, b) ? 0 : 1)
          .containsExactlyElementsOf(expected);
    }
  }

  @Test
  void stagesALazyTailAsItIsReadHoldingAtMostTheRunBound() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      int segments = 12;
      for (int s = 0; s < segments; s++) {
        env.append(tw, fullFrame(env, WalOperation.UPSERT, s * 100L, 100));
      }
      long frameBytes = env.wal.read(tw, 1).orElseThrow().frames().get(0).arrowIpc().length;
      long bound = frameBytes * 5 / 2; // two frames fit, a third does not
      List<String> seen = new ArrayList<>();
      try (BufferAllocator pass = env.allocator.newChildAllocator("pass", 0, Long.MAX_VALUE);
          DuckSession duck = new DuckSession(env.duckdb, pass, 2, TestEnvironment.CATALOG)) {
        Iterable<WalSegment> lazy = () -> new java.util.Iterator<>() {
          long next = 1;

          @Override
          public boolean hasNext() {
            return next <= segments;
          }

          @Override
          public WalSegment next() {
            // What was read but is not staged yet is the memory held: never more than the bound.
            long staged = next == 1 ? 0 : duck.queryLong("SELECT count(*) FROM " + WalStaging.TABLE);
            long held = (next - 1) * 100 - staged;
            seen.add(next + ":" + held);
            assertThat(held * frameBytes / 100).as("bytes held when segment %d is read", next)
                .isLessThanOrEqualTo(bound);
            return env.wal.read(tw, next++).orElseThrow();
          }
        };
        WalStaging.load(duck, table.schema(), lazy, "TEMP TABLE " + WalStaging.TABLE, WalStaging.TABLE,
            "wal_frames_", java.util.function.UnaryOperator.identity(), bound);
        List<Long> ids = new ArrayList<>();
        duck.query("SELECT id FROM " + WalStaging.TABLE + " ORDER BY rowid", rs -> ids.add(rs.getLong(1)));
        assertThat(ids).containsExactlyElementsOf(java.util.stream.LongStream.range(0, segments * 100L).boxed()
            .toList());
      }
      // Runs of two frames: after the first two segments, every second read finds two staged.
      assertThat(seen).startsWith("1:0", "2:100", "3:200", "4:100", "5:200");
    }
  }

  @Test
  void rejectsFramesWithoutFieldIds() {
    org.apache.arrow.vector.types.pojo.Field plain = org.apache.arrow.vector.types.pojo.Field.nullable("id",
        new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true));
    assertThatThrownBy(() -> WalStaging.requireFieldIds(List.of(plain), 7))
        .isInstanceOf(SeException.class)
        .hasMessage("WAL segment 7: column 'id' has no Iceberg field id");
  }

  @Test
  void runReaderAddsOpAndSeqAndReleasesEveryBuffer() throws Exception {
    // The environment's allocator is closed last: a buffer the reader kept fails the test.
    try (TestEnvironment env = new TestEnvironment(dir)) {
      List<WalFrameRunReader.Frame> frames = new ArrayList<>();
      org.apache.arrow.vector.types.pojo.Schema schema = null;
      for (int f = 0; f < 3; f++) {
        WalFrame frame = fullFrame(env, WalOperation.UPSERT, f * 10L, 10);
        schema = WalFrameRunReader.schemaOf(env.allocator, frame.arrowIpc(), f + 1);
        frames.add(new WalFrameRunReader.Frame(frame.arrowIpc(), (byte) (f == 1 ? 2 : 1), f + 1));
      }
      List<String> batches = new ArrayList<>();
      try (WalFrameRunReader reader = new WalFrameRunReader(env.allocator, schema, frames)) {
        while (reader.loadNextBatch()) {
          var root = reader.getVectorSchemaRoot();
          batches.add(root.getRowCount() + " rows, id " + root.getVector("id").getObject(0) + ", op "
              + root.getVector(WalFrameRunReader.OP).getObject(9) + ", seq "
              + root.getVector(WalFrameRunReader.SEQ).getObject(9));
        }
      }
      assertThat(batches).containsExactly("10 rows, id 0, op 1, seq 1", "10 rows, id 10, op 2, seq 2",
          "10 rows, id 20, op 1, seq 3");
    }
  }

  private static WalFrame fullFrame(TestEnvironment env, WalOperation op, long firstId, int rows) {
    WalFrame frame = AppendTableTest.frame(env, firstId, rows);
    return new WalFrame(op, frame.schemaId(), frame.requestIds(), frame.rowCount(), frame.arrowIpc());
  }

  private static WalFrame partialFrame(TestEnvironment env, Schema schema, WalOperation op, long firstId,
      int rows) {
    List<Record> records = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      GenericRecord r = GenericRecord.create(schema);
      r.setField("id", firstId + i);
      r.setField("cat", "p");
      records.add(r);
    }
    return ArrowFrames.frame(env.allocator, op, 0, schema, records);
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * New append segments read inline: the first query after a segment arrives reads it from its
 * Arrow frames (no staged file yet), the Parquet file is staged in the background for the
 * queries after; both reads give the rows reconciliation then publishes, through a schema change
 * between the segments and the read schema, and the Arrow memory is all given back.
 */
class WalTailInlineTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()));

  @TempDir Path dir;

  @Test
  void inlineAndStagedReadsEqualTheReconciledRowsThroughASchemaChange() throws Exception {
    try (Fixture f = new Fixture()) {
      WalTail tail = f.producer.engine().tail();
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 0, 3), frame(f.allocator, SCHEMA, 3, 2)));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 5, 1)));
      List<String> before = new ArrayList<>(List.of("0|n0|0", "1|n1|7", "2|null|14", "3|n3|21", "4|null|28",
          "5|n5|35"));
      assertThat(f.rows("SELECT id, name, v FROM n.events", ReadMode.LATEST))
          .containsExactlyInAnyOrderElementsOf(before);
      assertThat(tail.inlineLoads()).as("both new segments read from their frames").isEqualTo(2);
      tail.awaitStagings();
      assertThat(f.rows("SELECT id, name, v FROM n.events", ReadMode.LATEST))
          .as("read from the files staged in the background").containsExactlyInAnyOrderElementsOf(before);
      assertThat(tail.inlineLoads()).as("nothing read inline again").isEqualTo(2);
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 8, 1)));
      before.add("8|null|56");
      assertThat(f.rows("SELECT id, name, v FROM n.events", ReadMode.LATEST))
          .as("two staged files and one segment inline").containsExactlyInAnyOrderElementsOf(before);
      assertThat(tail.inlineLoads()).isEqualTo(3);
      tail.awaitStagings();

      // Renamed, widened and added columns: the segments were written with the old schema.
      f.table.updateSchema().renameColumn("name", "label").updateColumn("v", Types.LongType.get())
          .addColumn("extra", Types.StringType.get()).commit();
      Schema evolved = f.table.schema();
      f.wal.append(f.tableWal, List.of(frame(f.allocator, evolved, 6, 2)));
      String sql = "SELECT id, label, v, extra FROM n.events";
      List<String> expected = new ArrayList<>();
      before.forEach(row -> expected.add(row + "|null"));
      expected.addAll(List.of("6|null|42|x6", "7|n7|49|x7"));
      assertThat(f.rows(sql, ReadMode.LATEST)).as("old segments staged again, the new one inline")
          .containsExactlyInAnyOrderElementsOf(expected);
      assertThat(tail.inlineLoads()).isEqualTo(7);
      tail.awaitStagings();
      assertThat(f.rows(sql, ReadMode.LATEST)).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(f.rows("SELECT typeof(v) FROM n.events LIMIT 1", ReadMode.LATEST))
          .containsExactly("BIGINT");

      Reconciler reconciler = f.reconciler();
      assertThat(reconciler.reconcile(f.tableWal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(f.rows(sql, ReadMode.SNAPSHOT)).as("what reconciliation published")
          .containsExactlyInAnyOrderElementsOf(expected);
      assertThat(f.allocator.getAllocatedMemory()).as("Arrow memory given back").isZero();
    }
  }

  /** A segment whose frames staging refuses (no field ids) ends the tail before it, inline too. */
  @Test
  void aSegmentStagingRefusesEndsTheTailBeforeIt() throws Exception {
    try (Fixture f = new Fixture()) {
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 0, 2)));
      f.wal.append(f.tableWal, List.of(withoutFieldIds(f.allocator)));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 10, 1)));
      WalTail tail = f.producer.engine().tail();
      for (int i = 0; i < 2; i++) {
        assertThat(f.rows("SELECT id FROM n.events", ReadMode.LATEST)).as("query %d", i)
            .containsExactlyInAnyOrder("0", "1");
        tail.awaitStagings();
      }
      assertThat(tail.inlineLoads()).as("the first segment only, once; then its staged file").isEqualTo(1);
      assertThat(f.allocator.getAllocatedMemory()).isZero();
    }
  }

  /**
   * The new segments a query reads inline are loaded into one DuckDB table by one staging, frames
   * of another Arrow schema included; when staging refuses one of them, they are loaded one by one,
   * the refused one ends the tail before it, and the query's database stays clean (it is reused).
   */
  @Test
  void newSegmentsLoadIntoOneTableAndARefusedOneStillEndsTheTail() throws Exception {
    try (Fixture f = new Fixture()) {
      WalTail tail = f.producer.engine().tail();
      tail.stagingDelay(600_000); // every segment stays inline during the test
      Schema evolved = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "v", Types.IntegerType.get()),
          Types.NestedField.optional(4, "extra", Types.StringType.get()));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 0, 2)));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, evolved, 2, 1), frame(f.allocator, SCHEMA, 3, 1)));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 4, 2)));
      List<String> expected = new ArrayList<>(List.of("0|n0|0", "1|n1|7", "2|null|14", "3|n3|21", "4|null|28",
          "5|n5|35"));
      String sql = "SELECT id, name, v FROM n.events";
      assertThat(f.rows(sql, ReadMode.LATEST)).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(tail.inlineLoads()).as("three segments read from their frames").isEqualTo(3);
      assertThat(tail.inlineTables()).as("into one table").isEqualTo(1);
      assertThat(f.rows(sql, ReadMode.LATEST)).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(tail.inlineTables()).as("one table per query").isEqualTo(2);

      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 6, 1)));
      f.wal.append(f.tableWal, List.of(withoutFieldIds(f.allocator)));
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 10, 1)));
      expected.add("6|null|42");
      long databases = f.producer.engine().pool().created();
      for (int i = 0; i < 2; i++) {
        assertThat(f.rows(sql, ReadMode.LATEST)).as("query %d", i)
            .containsExactlyInAnyOrderElementsOf(expected);
      }
      assertThat(tail.inlineTables()).as("first query: one by one up to the refused segment (4 tables); the "
          + "second knows where the tail ends (one table)").isEqualTo(2 + 4 + 1);
      assertThat(f.producer.engine().pool().created()).as("no table left behind: the database was reused")
          .isEqualTo(databases);
      assertThat(f.allocator.getAllocatedMemory()).isZero();
    }
  }

  /**
   * A segment read inline and reconciled before its background staging comes is not staged (no
   * query reads the file any more); one still in the tail is, and the next query reads its file.
   */
  @Test
  void aSegmentReconciledBeforeItsBackgroundStagingIsNotStaged() throws Exception {
    try (Fixture f = new Fixture()) {
      WalTail tail = f.producer.engine().tail();
      tail.stagingDelay(600_000); // staged only when the test runs the queue
      String sql = "SELECT id, name, v FROM n.events";
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 0, 2)));
      assertThat(f.rows(sql, ReadMode.LATEST)).containsExactlyInAnyOrder("0|n0|0", "1|n1|7");
      assertThat(tail.inlineLoads()).isEqualTo(1);
      Reconciler reconciler = f.reconciler();
      assertThat(reconciler.reconcile(f.tableWal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.wal.append(f.tableWal, List.of(frame(f.allocator, SCHEMA, 2, 1)));
      List<String> all = List.of("0|n0|0", "1|n1|7", "2|null|14");
      assertThat(f.rows(sql, ReadMode.LATEST)).as("segment 1 in the snapshot, 2 inline")
          .containsExactlyInAnyOrderElementsOf(all);
      assertThat(tail.inlineLoads()).isEqualTo(2);
      tail.runStagingsNow();
      assertThat(tail.skippedStagings()).as("segment 1 was reconciled: not staged").isEqualTo(1);
      assertThat(f.duckdb.files().leaseIfPresent("t", "wal-segment:" + f.table.uuid() + ":1:schema-0")).isEmpty();
      try (var staged = f.duckdb.files().leaseIfPresent("t", "wal-segment:" + f.table.uuid() + ":2:schema-0")
          .orElseThrow()) {
        assertThat(staged.path()).exists();
      }
      assertThat(f.rows(sql, ReadMode.LATEST)).containsExactlyInAnyOrderElementsOf(all);
      assertThat(tail.inlineLoads()).as("segment 2 read from its staged file").isEqualTo(2);
      assertThat(f.allocator.getAllocatedMemory()).isZero();
    }
  }

  /**
   * A table {@code n.events} of catalog {@code t} (SCHEMA, unpartitioned), its WAL on an fs store,
   * and a Flight SQL producer reading it with one DuckDB thread; closed in reverse order.
   */
  private final class Fixture implements AutoCloseable {
    final TestWarehouse warehouse = new TestWarehouse();
    final Table table = TestWarehouse.createTable(warehouse.localCatalog("t", dir.resolve("t")), "n", "events", SCHEMA,
        PartitionSpec.unpartitioned());
    final BufferAllocator allocator = new RootAllocator();
    final DuckRuntime duckdb;
    final FsObjectStore store;
    final ObjectStoreWal wal;
    final TableWal tableWal = new TableWal("t", table.uuid());
    final ReconcileOptions options = ReconcileOptions.defaults().withDuckdbThreads(1);
    final TombstoneCache tombstones = TombstoneCache.create();
    final QueryFlightSqlProducer producer;

    Fixture() throws Exception {
      duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("local")), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
      store = new FsObjectStore(Files.createDirectories(dir.resolve("cluster")));
      wal = new ObjectStoreWal(store, "test");
      producer = new QueryFlightSqlProducer(allocator, warehouse, duckdb, QueryConfig.defaults().withThreads(1), wal,
          new WalTailRows(duckdb, allocator, store, tombstones, options));
    }

    List<String> rows(String sql, ReadMode read) throws Exception {
      return WalTailInlineTest.rows(producer, allocator, sql, read);
    }

    Reconciler reconciler() {
      return new Reconciler(warehouse, wal, store, tombstones, allocator, duckdb, options);
    }

    @Override
    public void close() throws Exception {
      try (BufferAllocator a = allocator; DuckRuntime d = duckdb; FsObjectStore s = store;
          TombstoneCache t = tombstones; QueryFlightSqlProducer p = producer) {
        // closed in reverse: the producer first, the allocator last
      }
    }
  }

  private static List<String> rows(QueryFlightSqlProducer producer, BufferAllocator allocator, String sql,
      ReadMode read) throws Exception {
    List<String> out = new ArrayList<>();
    try (PreparedQuery query = producer.engine().prepare("t", sql, Map.of(), QueryParameters.NONE, read);
        ArrowReader reader = query.execute(allocator, 1024)) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        for (int r = 0; r < root.getRowCount(); r++) {
          List<String> cells = new ArrayList<>();
          for (FieldVector vector : root.getFieldVectors()) {
            cells.add(String.valueOf(vector.getObject(r)));
          }
          out.add(String.join("|", cells));
        }
      }
    }
    return out;
  }

  /**
   * Rows {@code first..first+n-1} with {@code schema}'s columns by field id: id, name (null for
   * odd ids from 2 on, "n" + id else), v = 7 * id, and extra ("x" + id) when the schema has it.
   */
  private static WalFrame frame(BufferAllocator allocator, Schema schema, long first, int n) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema), allocator)) {
      root.allocateNew();
      for (int i = 0; i < n; i++) {
        long id = first + i;
        ((BigIntVector) root.getVector(0)).setSafe(i, id);
        VarCharVector name = (VarCharVector) root.getVector(1);
        if (id >= 2 && id % 2 == 0) {
          name.setNull(i);
        } else {
          name.setSafe(i, ("n" + id).getBytes(StandardCharsets.UTF_8));
        }
        FieldVector v = root.getVector(2);
        if (v instanceof IntVector ints) {
          ints.setSafe(i, (int) (7 * id));
        } else {
          ((BigIntVector) v).setSafe(i, 7 * id);
        }
        if (root.getFieldVectors().size() > 3) {
          ((VarCharVector) root.getVector(3)).setSafe(i, ("x" + id).getBytes(StandardCharsets.UTF_8));
        }
      }
      root.setRowCount(n);
      return new WalFrame(WalOperation.UPSERT, schema.schemaId(), new long[] {1}, n, ipc(root));
    }
  }

  /** A frame of one row whose columns carry no Iceberg field ids: staging cannot map it. */
  private static WalFrame withoutFieldIds(BufferAllocator allocator) throws Exception {
    org.apache.arrow.vector.types.pojo.Schema arrow = new org.apache.arrow.vector.types.pojo.Schema(
        List.of(new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow, allocator)) {
      root.allocateNew();
      ((BigIntVector) root.getVector(0)).setSafe(0, 99);
      root.setRowCount(1);
      return new WalFrame(WalOperation.UPSERT, 0, new long[] {1}, 1, ipc(root));
    }
  }

  private static byte[] ipc(VectorSchemaRoot root) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    return out.toByteArray();
  }
}

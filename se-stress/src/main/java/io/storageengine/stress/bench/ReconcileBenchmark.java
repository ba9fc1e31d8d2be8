package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.common.Json;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;

/**
 * Reconcile throughput, printed as one JSON object:
 * <ul>
 *   <li>append: rows/s of narrow rows (id, ts, v, s) from WAL to committed Parquet;</li>
 *   <li>entity: rows/s of upsert batches (50% updates of existing keys, 50% new keys) into
 *       tables of several sizes, showing how the cost grows with the table.</li>
 * </ul>
 * Everything is local: a SQLite {@code JdbcCatalog}, a local warehouse and the real WAL over an
 * in-memory object store. Only the reconcile pass is timed (WAL read, DuckDB, Parquet, metrics,
 * deletion vectors, commit). Arguments: {@code --append-rows N}, {@code --entity-keys a,b,c},
 * {@code --entity-batch N}, {@code --threads N}, {@code --entity-slices a,b} (the entity runs
 * are repeated for each {@code se.slice.count}, 0 meaning a table that is not sliced; default 0).
 */
public final class ReconcileBenchmark {
  private static final Schema NARROW = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()),
      Types.NestedField.optional(4, "s", Types.StringType.get()));
  private static final Schema ENTITY = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.required(2, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()),
      Types.NestedField.optional(4, "s", Types.StringType.get())), Set.of(1));
  private static final int FRAME_ROWS = 100_000;

  private final BufferAllocator allocator = new RootAllocator();
  private final TombstoneCache tombstones = TombstoneCache.create();
  private final DuckRuntime duckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
  private final MemoryObjectStore store = new MemoryObjectStore();
  private final ObjectStoreWal wal = new ObjectStoreWal(store, "benchmark");
  private final JdbcCatalog catalog;
  private final Reconciler reconciler;
  /** Entity tables made so far (their names are numbered: a configuration may be measured twice). */
  private int entityRuns;

  private ReconcileBenchmark(Path dir, int threads) throws IOException {
    catalog = BenchFixtures.sqliteCatalog(dir);
    reconciler = new Reconciler(id -> catalog, wal, store, tombstones, allocator, duckdb,
        ReconcileOptions.defaults().withDuckdbThreads(threads).withMaxBytesPerCommit(1L << 30));
  }

  public static void main(String[] args) throws Exception {
    BenchArgs opts = BenchArgs.parse(args);
    long appendRows = opts.longValue("append-rows", 2_000_000);
    List<Long> keySizes = opts.longs("entity-keys", "100000,1000000,10000000");
    int batch = opts.intValue("entity-batch", 200_000);
    List<Integer> sliceCounts = new ArrayList<>();
    for (long slices : opts.longs("entity-slices", "0")) {
      sliceCounts.add(Math.toIntExact(slices));
    }
    int threads = opts.threads();

    Path dir = Files.createTempDirectory("se-reconcile-bench-");
    ObjectNode out = Json.object();
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("duckdb_threads", threads);
    ReconcileBenchmark bench = new ReconcileBenchmark(dir, threads);
    try {
      bench.append("warmup", 50_000); // loads DuckDB and warms the JIT; not reported
      out.set("append", bench.append("append", appendRows));
      ArrayNode entity = out.putArray("entity");
      for (long keys : keySizes) {
        for (int slices : sliceCounts) {
          entity.add(bench.entity(keys, batch, slices));
        }
      }
    } finally {
      bench.catalog.close();
      bench.tombstones.close();
      bench.duckdb.close();
      bench.allocator.close();
      BenchFixtures.deleteRecursively(dir);
    }
    System.out.println(Json.toString(out));
  }

  private ObjectNode append(String name, long rows) {
    Table table = catalog.buildTable(TableIdentifier.of("bench", name), NARROW)
        .withProperty("format-version", "3").create();
    TableWal tw = register(table, name);
    writeSegments(tw, table.schema(), 0, rows, id -> id, 1);
    long start = System.nanoTime();
    ReconcileResult r = reconciler.reconcile(tw);
    double seconds = (System.nanoTime() - start) / 1e9;
    ObjectNode n = Json.object();
    n.put("rows", r.walRows());
    n.put("seconds", round(seconds));
    n.put("rows_per_second", Math.round(r.walRows() / seconds));
    n.put("data_files", r.dataFiles());
    return n;
  }

  /** @param slices {@code se.slice.count} of the table, 0 for a table that is not sliced */
  private ObjectNode entity(long keys, int batch, int slices) {
    String name = "entity_" + keys + (slices > 0 ? "_slices_" + slices : "") + "_" + ++entityRuns;
    var builder = catalog.buildTable(TableIdentifier.of("bench", name), ENTITY)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty("format-version", "3")
        .withProperty(TableProperties.MODE, TableProperties.MODE_ENTITY)
        .withProperty(TableProperties.VERSION_COLUMN, "ts");
    if (slices > 0) {
      builder = builder.withProperty(TableProperties.SLICE_COUNT, Integer.toString(slices));
    }
    Table table = builder.create();
    TableWal tw = register(table, name);
    // Load the table in chunks of 2 M keys (one commit each), ordered keys as a bulk load would.
    long loadStart = System.nanoTime();
    for (long from = 0; from < keys; from += 2_000_000) {
      long n = Math.min(2_000_000, keys - from);
      writeSegments(tw, table.schema(), from, n, id -> id, 1);
      reconciler.reconcile(tw);
    }
    double loadSeconds = (System.nanoTime() - loadStart) / 1e9;

    // One batch: half updates of random existing keys, half inserts of new keys.
    Random rnd = new Random(keys);
    long half = batch / 2;
    long[] updated = new long[(int) half];
    for (int i = 0; i < half; i++) {
      updated[i] = (long) (rnd.nextDouble() * keys);
    }
    writeSegments(tw, table.schema(), 0, half, i -> updated[(int) i], 2);
    writeSegments(tw, table.schema(), keys, half, id -> id, 2);
    long start = System.nanoTime();
    ReconcileResult r = reconciler.reconcile(tw);
    double seconds = (System.nanoTime() - start) / 1e9;

    ObjectNode n = Json.object();
    n.put("table_keys", keys);
    n.put("slices", slices);
    n.put("load_seconds", round(loadSeconds));
    n.put("batch_rows", r.walRows());
    n.put("seconds", round(seconds));
    n.put("rows_per_second", Math.round(r.walRows() / seconds));
    n.put("rows_replaced", r.rowsRemoved());
    n.put("rows_written", r.rowsWritten());
    n.put("data_files", r.dataFiles());
    n.put("deletion_vectors", r.deleteVectors());
    return n;
  }

  private TableWal register(Table table, String name) {
    TableWal tw = new TableWal("bench", table.uuid());
    wal.registerTableName(tw, new TableName(List.of("bench"), name));
    return tw;
  }

  /** Appends one segment of frames with rows {@code id = key(first..first+count-1)}. */
  private void writeSegments(TableWal tw, Schema schema, long first, long count, LongUnaryOperator key,
      long version) {
    List<WalFrame> frames = new ArrayList<>();
    for (long from = first; from < first + count; from += FRAME_ROWS) {
      int n = (int) Math.min(FRAME_ROWS, first + count - from);
      frames.add(frame(schema, from, n, key, version));
    }
    wal.append(tw, frames);
  }

  private WalFrame frame(Schema schema, long from, int n, LongUnaryOperator key, long version) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema), allocator)) {
      BigIntVector id = (BigIntVector) root.getVector("id");
      TimeStampMicroVector ts = (TimeStampMicroVector) root.getVector("ts");
      IntVector v = (IntVector) root.getVector("v");
      VarCharVector s = (VarCharVector) root.getVector("s");
      id.allocateNew(n);
      ts.allocateNew(n);
      v.allocateNew(n);
      s.allocateNew(n * 8L, n);
      for (int i = 0; i < n; i++) {
        long k = key.applyAsLong(from + i);
        id.set(i, k);
        ts.set(i, 1_700_000_000_000_000L + version * 1_000_000L + (k % 1000));
        v.set(i, (int) (k * 31 % 100_000));
        s.setSafe(i, ("s" + (k % 10_000)).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(n);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(bytes))) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      return new WalFrame(WalOperation.UPSERT, schema.schemaId(), new long[] {1}, n, bytes.toByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double round(double seconds) {
    return Math.round(seconds * 1000) / 1000.0;
  }

}

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
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
 * are repeated for each {@code se.slice.count}, 0 meaning a table that is not sliced; default 0),
 * {@code --entity-batches K} (upsert batches per entity table, one pass each, default 1; the
 * report has each batch's seconds and rows/s over all of them), {@code --entity-warmup-batches W}
 * (passes of the same shape before them, timed apart as {@code warmup_batch_seconds}; default 0,
 * with {@code --spark-anchor true} Spark's warm-up count, so both sides are measured alike).
 * {@code --key-index warm|cold|off} (default warm): the entity tables' key indexes as a running
 * worker has them (built on the empty table and carried from pass to pass through the load),
 * as a restarted worker has them (a new reconciler after the load, so the first batch builds the
 * index from every file; report its batch with warm-up batches), or not at all
 * ({@code reconcile.key-index-memory} 0: every pass reads its candidate files).
 *
 * <p>{@code --spark-anchor true} runs, after the engine's entity runs of each table size, the
 * same work through Spark's {@code MERGE INTO} ({@link MergeAnchorRun}: Spark {@code local[N]},
 * an Iceberg v3 merge-on-read table with deletion vectors, the same rows, {@code K} timed
 * batches after {@code --spark-warmup-batches}, default 1) and reports it under
 * {@code spark_anchor}, and each engine run's {@code ratio_to_spark} (engine rows/s over Spark
 * rows/s). {@code --spark-module} (default {@code se-spark}, relative to the working directory),
 * {@code --spark-heap} (default 4g), {@code --spark-cores} (default the processors).
 * {@code --append-rows 0} leaves out the append run.
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
  private final ReconcileOptions options;
  private Reconciler reconciler;
  /** warm, cold or off ({@code --key-index}). */
  private final String keyIndex;
  /** Entity tables made so far (their names are numbered: a configuration may be measured twice). */
  private int entityRuns;

  private ReconcileBenchmark(Path dir, int threads, String keyIndex) throws IOException {
    catalog = BenchFixtures.sqliteCatalog(dir);
    this.keyIndex = keyIndex;
    ReconcileOptions o = ReconcileOptions.defaults().withDuckdbThreads(threads).withMaxBytesPerCommit(1L << 30);
    options = keyIndex.equals("off") ? o.withKeyIndexBytes(0) : o;
    reconciler = newReconciler();
  }

  private Reconciler newReconciler() {
    return new Reconciler(id -> catalog, wal, store, tombstones, allocator, duckdb, options);
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
    int batches = opts.intValue("entity-batches", 1);
    boolean sparkAnchor = Boolean.parseBoolean(opts.string("spark-anchor", "false"));
    MergeAnchorRun spark = new MergeAnchorRun(Path.of(opts.string("spark-module", "se-spark")),
        opts.string("spark-heap", "4g"), opts.intValue("spark-cores", Runtime.getRuntime().availableProcessors()));
    int sparkWarmup = opts.intValue("spark-warmup-batches", 1);
    int warmup = opts.intValue("entity-warmup-batches", sparkAnchor ? sparkWarmup : 0);
    if (batches < 1 || batch < 2 || warmup < 0) {
      throw new IllegalArgumentException("--entity-batches must be at least 1, --entity-batch at least 2 and"
          + " --entity-warmup-batches at least 0");
    }
    int threads = opts.threads();
    String keyIndex = opts.string("key-index", "warm");
    if (!List.of("warm", "cold", "off").contains(keyIndex)) {
      throw new IllegalArgumentException("--key-index must be warm, cold or off, got " + keyIndex);
    }

    Path dir = Files.createTempDirectory("se-reconcile-bench-");
    ObjectNode out = Json.object();
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("duckdb_threads", threads);
    out.put("key_index", keyIndex);
    ReconcileBenchmark bench = new ReconcileBenchmark(dir, threads, keyIndex);
    try {
      bench.append("warmup", 50_000); // loads DuckDB and warms the JIT; not reported
      if (appendRows > 0) {
        out.set("append", bench.append("append", appendRows));
      }
      ArrayNode entity = out.putArray("entity");
      ArrayNode anchors = sparkAnchor ? out.putArray("spark_anchor") : null;
      for (long keys : keySizes) {
        List<ObjectNode> runs = new ArrayList<>();
        for (int slices : sliceCounts) {
          runs.add(bench.entity(keys, batch, warmup, batches, slices));
        }
        if (sparkAnchor) {
          // The same shape through Spark's MERGE INTO, in a child JVM, right after the engine's
          // runs (this JVM idles meanwhile); each engine run gets its ratio to it.
          ObjectNode anchor = spark.run(keys, batch, batches, sparkWarmup);
          anchors.add(anchor);
          double sparkRate = anchor.get("rows_per_second").asDouble();
          for (ObjectNode run : runs) {
            run.put("spark_rows_per_second", Math.round(sparkRate));
            run.put("ratio_to_spark", Math.round(run.get("rows_per_second").asDouble() / sparkRate * 100) / 100.0);
          }
        }
        runs.forEach(entity::add);
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

  /**
   * @param warmup upsert batches of {@code batch} rows, one pass each, after the load, timed apart
   * @param batches upsert batches of {@code batch} rows, one pass each, after those
   * @param slices {@code se.slice.count} of the table, 0 for a table that is not sliced
   */
  private ObjectNode entity(long keys, int batch, int warmup, int batches, int slices) {
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
    if (keyIndex.equals("cold")) {
      reconciler = newReconciler();
    }

    // Each batch: half updates of random existing keys, half inserts of new keys, at the next
    // version; one reconcile pass per batch.
    Random rnd = new Random(keys);
    long half = batch / 2;
    long nextNew = keys;
    ArrayNode batchSeconds = Json.MAPPER.createArrayNode();
    ArrayNode warmupSeconds = Json.MAPPER.createArrayNode();
    double seconds = 0;
    long walRows = 0;
    long replaced = 0;
    long written = 0;
    long dataFiles = 0;
    long vectors = 0;
    for (int b = 0; b < warmup + batches; b++) {
      long[] updated = new long[(int) half];
      for (int i = 0; i < half; i++) {
        updated[i] = (long) (rnd.nextDouble() * keys);
      }
      writeSegments(tw, table.schema(), 0, half, i -> updated[(int) i], 2 + b);
      writeSegments(tw, table.schema(), nextNew, half, id -> id, 2 + b);
      nextNew += half;
      long start = System.nanoTime();
      ReconcileResult r = reconciler.reconcile(tw);
      double s = (System.nanoTime() - start) / 1e9;
      if (b < warmup) {
        warmupSeconds.add(round(s));
        continue;
      }
      batchSeconds.add(round(s));
      seconds += s;
      walRows += r.walRows();
      replaced += r.rowsRemoved();
      written += r.rowsWritten();
      dataFiles += r.dataFiles();
      vectors += r.deleteVectors();
    }

    ObjectNode n = Json.object();
    n.put("table_keys", keys);
    n.put("slices", slices);
    n.put("key_index", keyIndex);
    n.put("load_seconds", round(loadSeconds));
    n.put("batch_rows", walRows / batches);
    n.put("batches", batches);
    n.set("warmup_batch_seconds", warmupSeconds);
    n.set("batch_seconds", batchSeconds);
    n.put("seconds", round(seconds));
    n.put("rows_per_second", Math.round(walRows / seconds));
    n.put("rows_replaced", replaced);
    n.put("rows_written", written);
    n.put("data_files", dataFiles);
    n.put("deletion_vectors", vectors);
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
      EntityRows.fill(root, from, n, key, version);
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

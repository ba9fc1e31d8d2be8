package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.common.Json;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.wal.ObjectStoreWal;
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
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
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
 * Read your own writes, printed as one JSON object:
 * <ul>
 *   <li>freshness: a WAL append (the durable write an ingestor acknowledges after) followed at
 *       once by queries until the row is visible; {@code ack_ms} is the append, {@code
 *       visible_after_ack_ms} the time from its return to the first query that sees the row,
 *       next to {@code snapshot_query_p50_ms}, the same query on the snapshot alone;</li>
 *   <li>tail cost: {@code SELECT count(*), sum(v)} over a table of {@code --table-rows} rows with
 *       an unreconciled WAL tail of each of {@code --tail-mb} sizes (IPC bytes), cold (the first
 *       query stages the segments) and warm (staged files cached), next to the snapshot-only
 *       read of the same table; then, five times, one more segment and the query after it (the
 *       cost of a segment arriving between queries); then the tail is reconciled and the query
 *       must count the same.</li>
 * </ul>
 * Everything runs in one process: a SQLite {@code JdbcCatalog} with a local warehouse, the real
 * WAL on the fs store, the Flight SQL producer on a local Flight server and a Flight SQL client.
 * The same for an entity table (version column {@code ts}): freshness, and a tail of
 * {@code --entity-tail-mb} (default 10) of half updates, half new keys next to a table of
 * {@code --entity-keys} keys (default 1 M), folded by the query as reconcile will.
 * Arguments: {@code --table-rows N} (default 10 M), {@code --tail-mb a,b} (default 10,100),
 * {@code --samples N} (freshness samples, default 50), {@code --threads N}, {@code --freshness-only true}
 * (the freshness samples only, no tail tables), {@code --max-mb-per-commit N} (the reconcile
 * passes' bound, default 1024; a measured tail is reconciled by as many passes as it takes). Run
 * with a small heap ({@code -Xmx}) and a long {@code --entity-tail-mb} it shows whether a query
 * of a tail larger than the heap answers.
 */
public final class UnionReadBenchmark {
  private static final Schema NARROW = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()),
      Types.NestedField.optional(4, "s", Types.StringType.get()));
  private static final Schema ENTITY = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.required(2, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()),
      Types.NestedField.optional(4, "s", Types.StringType.get())), java.util.Set.of(1));
  private static final int FRAME_ROWS = 100_000;
  /** Segments added one at a time to a measured tail, each followed by a timed query. */
  private static final int MORE_SEGMENTS = 5;
  private static final String HEADER = "{\"catalog_id\":\"bench\"}";
  private static final String SNAPSHOT_HEADER = "{\"catalog_id\":\"bench\",\"read\":\"snapshot\"}";

  private final BufferAllocator allocator = new RootAllocator();
  private final TombstoneCache tombstones = TombstoneCache.create();
  private final DuckRuntime duckdb;
  private final FsObjectStore store;
  private final ObjectStoreWal wal;
  private final JdbcCatalog catalog;
  private final Reconciler reconciler;
  private final BenchFixtures.QueryServer server;
  private final FlightSqlClient sql;
  /** Counts appends: the version (ts) of a row grows with it, so a later write of a key wins. */
  private long stamp;

  private UnionReadBenchmark(Path dir, int threads, long maxBytesPerCommit) throws IOException {
    duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("duckdb")), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    store = new FsObjectStore(Files.createDirectories(dir.resolve("cluster")));
    wal = new ObjectStoreWal(store, "benchmark");
    catalog = BenchFixtures.sqliteCatalog(dir);
    reconciler = new Reconciler(id -> catalog, wal, store, tombstones, allocator, duckdb,
        ReconcileOptions.defaults().withDuckdbThreads(threads).withMaxBytesPerCommit(maxBytesPerCommit));
    server = new BenchFixtures.QueryServer(allocator, catalog, duckdb, store, wal, tombstones, threads);
    sql = server.sql();
  }

  public static void main(String[] args) throws Exception {
    BenchArgs opts = BenchArgs.parse(args);
    long tableRows = opts.longValue("table-rows", 10_000_000);
    List<Integer> tailMb = new ArrayList<>();
    for (long mb : opts.longs("tail-mb", "10,100")) {
      tailMb.add(Math.toIntExact(mb));
    }
    int samples = opts.intValue("samples", 50);
    long entityKeys = opts.longValue("entity-keys", 1_000_000);
    int entityTailMb = opts.intValue("entity-tail-mb", 10);
    int threads = opts.threads();
    boolean freshnessOnly = Boolean.parseBoolean(opts.string("freshness-only", "false"));
    long maxBytesPerCommit = opts.longValue("max-mb-per-commit", 1024) << 20;

    Path dir = Files.createTempDirectory("se-union-bench-");
    ObjectNode out = Json.object();
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("duckdb_threads", threads);
    out.put("max_heap_mb", Runtime.getRuntime().maxMemory() >> 20);
    UnionReadBenchmark bench = new UnionReadBenchmark(dir, threads, maxBytesPerCommit);
    try {
      out.set("freshness", bench.freshness("fresh", false, samples));
      out.set("entity_freshness", bench.freshness("fresh_entity", true, samples));
      if (!freshnessOnly) {
        out.set("tail", bench.tailCost(tableRows, tailMb));
        out.set("entity_tail", bench.entityTailCost(entityKeys, entityTailMb));
      }
    } finally {
      bench.close();
      BenchFixtures.deleteRecursively(dir);
    }
    System.out.println(Json.toString(out));
  }

  private Table create(String name, boolean entity) {
    if (!entity) {
      return catalog.buildTable(TableIdentifier.of("bench", name), NARROW).create();
    }
    return catalog.buildTable(TableIdentifier.of("bench", name), ENTITY)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty("format-version", "3")
        .withProperty(TableProperties.MODE, TableProperties.MODE_ENTITY)
        .withProperty(TableProperties.VERSION_COLUMN, "ts")
        .create();
  }

  private ObjectNode freshness(String name, boolean entity, int samples) throws Exception {
    Table table = create(name, entity);
    TableWal tw = new TableWal("bench", table.uuid());
    append(tw, 0, 1000);
    reconciler.reconcile(tw);
    query("SELECT count(*) FROM bench." + name, HEADER); // warms the path; not reported
    double[] ack = new double[samples];
    double[] visible = new double[samples];
    for (int i = 0; i < samples; i++) {
      long marker = 1_000_000L + i;
      long start = System.nanoTime();
      append(tw, marker, 1);
      long acked = System.nanoTime();
      while (query("SELECT count(*) FROM bench." + name + " WHERE id = " + marker, HEADER) == 0) {
        // Visible on the first query after the ack; the loop only guards the measurement.
      }
      long seen = System.nanoTime();
      ack[i] = (acked - start) / 1e6;
      visible[i] = (seen - acked) / 1e6;
      if (i % 10 == 9) {
        reconciler.reconcile(tw); // as a reconciler would, now and then
      }
    }
    // The same query on the snapshot alone: what any query costs, new segment or not.
    double[] plain = new double[samples];
    for (int i = 0; i < samples; i++) {
      long start = System.nanoTime();
      query("SELECT count(*) FROM bench." + name + " WHERE id = " + (1_000_000L + i), SNAPSHOT_HEADER);
      plain[i] = (System.nanoTime() - start) / 1e6;
    }
    ObjectNode n = Json.object();
    n.put("samples", samples);
    n.put("snapshot_query_p50_ms", percentile(plain, 50));
    n.put("ack_p50_ms", percentile(ack, 50));
    n.put("visible_after_ack_p50_ms", percentile(visible, 50));
    n.put("visible_after_ack_p99_ms", percentile(visible, 99));
    n.put("visible_after_ack_max_ms", percentile(visible, 100));
    return n;
  }

  private ArrayNode tailCost(long tableRows, List<Integer> tailMb) throws Exception {
    Table table = catalog.buildTable(TableIdentifier.of("bench", "big"), NARROW).create();
    TableWal tw = new TableWal("bench", table.uuid());
    long loadStart = System.nanoTime();
    for (long from = 0; from < tableRows; from += 2_000_000) {
      append(tw, from, (int) Math.min(2_000_000, tableRows - from));
      reconciler.reconcile(tw);
    }
    double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
    String count = "SELECT count(*) + 0 * sum(v) FROM bench.big";
    double base = best(count, HEADER, 3);
    long next = tableRows;
    ArrayNode results = Json.object().arrayNode();
    for (int mb : tailMb) {
      long tailBytes = 0;
      long tailRows = 0;
      int segments = 0;
      while (tailBytes < mb * 1_000_000L) {
        int rows = 35_000; // about 1 MB of IPC per segment
        tailBytes += append(tw, next, rows);
        next += rows;
        tailRows += rows;
        segments++;
      }
      ObjectNode n = Json.object();
      n.put("table_rows", tableRows);
      long[] more = {next};
      results.add(measureTail(n, tw, count, loadSeconds, base, tailBytes, segments, tailRows, () -> {
        append(tw, more[0], 35_000);
        more[0] += 35_000;
      }));
      next = more[0];
    }
    return results;
  }

  /**
   * An entity table of {@code keys} keys with an unreconciled tail of about {@code tailMb} MB,
   * half updates of existing keys (a higher version) and half new keys.
   */
  private ObjectNode entityTailCost(long keys, int tailMb) throws Exception {
    Table table = create("big_entity", true);
    TableWal tw = new TableWal("bench", table.uuid());
    long loadStart = System.nanoTime();
    for (long from = 0; from < keys; from += 2_000_000) {
      append(tw, from, (int) Math.min(2_000_000, keys - from));
      reconciler.reconcile(tw);
    }
    double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
    String count = "SELECT count(*) + 0 * sum(v) FROM bench.big_entity";
    double base = best(count, HEADER, 3);
    long tailBytes = 0;
    long tailRows = 0;
    int segments = 0;
    java.util.Random random = new java.util.Random(keys);
    while (tailBytes < tailMb * 1_000_000L) {
      int rows = 35_000;
      long first = segments % 2 == 0 ? (long) (random.nextDouble() * (keys - rows)) : keys + tailRows;
      tailBytes += append(tw, first, rows);
      tailRows += rows;
      segments++;
    }
    ObjectNode n = Json.object();
    n.put("table_keys", keys);
    long[] added = {tailRows};
    int[] segment = {segments};
    return measureTail(n, tw, count, loadSeconds, base, tailBytes, segments, tailRows, () -> {
      int rows = 35_000;
      long first = segment[0]++ % 2 == 0 ? (long) (random.nextDouble() * (keys - rows)) : keys + added[0];
      append(tw, first, rows);
      added[0] += rows;
    });
  }

  /**
   * Times {@code count} over the table's unreconciled tail (the first run cold, then the best of
   * three, and the best of three snapshot-only), then {@value #MORE_SEGMENTS} times adds one
   * segment of the tail's kind ({@code addSegment}) and times the next query (what a segment
   * arriving between queries costs), reconciles the tail and counts again; adds the numbers to
   * {@code n} after its own fields and returns it.
   */
  private ObjectNode measureTail(ObjectNode n, TableWal tw, String count, double loadSeconds, double base,
      long tailBytes, int segments, long tailRows, Runnable addSegment) throws Exception {
    long start = System.nanoTime();
    long seen = query(count, HEADER);
    double cold = (System.nanoTime() - start) / 1e6;
    double warm = best(count, HEADER, 3);
    double snapshotOnly = best(count, SNAPSHOT_HEADER, 3);
    double[] afterOneMore = new double[MORE_SEGMENTS];
    for (int i = 0; i < MORE_SEGMENTS; i++) {
      addSegment.run();
      long queryStart = System.nanoTime();
      seen = query(count, HEADER);
      afterOneMore[i] = (System.nanoTime() - queryStart) / 1e6;
    }
    int passes = 0;
    while (reconciler.reconcile(tw).outcome() == ReconcileResult.Outcome.COMMITTED) {
      passes++;
    }
    long reconciled = query(count, HEADER);
    n.put("reconcile_passes", passes);
    n.put("table_load_seconds", Math.round(loadSeconds * 10) / 10.0);
    n.put("tail_mb", Math.round(tailBytes / 1e5) / 10.0);
    n.put("tail_segments", segments);
    n.put("tail_rows", tailRows);
    n.put("query_no_tail_ms", base);
    n.put("query_snapshot_only_ms", snapshotOnly);
    n.put("query_with_tail_cold_ms", Math.round(cold * 10) / 10.0);
    n.put("query_with_tail_warm_ms", warm);
    n.put("query_after_one_more_segment_p50_ms", percentile(afterOneMore, 50));
    n.put("query_after_one_more_segment_max_ms", percentile(afterOneMore, 100));
    n.put("rows_seen_before_reconcile", seen);
    n.put("rows_seen_after_reconcile", reconciled);
    n.put("equal", seen == reconciled);
    return n;
  }

  /** The best of {@code repeats} runs of {@code query}, in milliseconds. */
  private double best(String query, String header, int repeats) throws Exception {
    double best = Double.MAX_VALUE;
    for (int i = 0; i < repeats; i++) {
      long start = System.nanoTime();
      query(query, header);
      best = Math.min(best, (System.nanoTime() - start) / 1e6);
    }
    return Math.round(best * 10) / 10.0;
  }

  /** Runs {@code query} (one BIGINT value) through Flight SQL and returns the value. */
  private long query(String query, String header) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert(QueryMetadataInterceptor.HEADER_NAME, header);
    HeaderCallOption option = new HeaderCallOption(headers);
    FlightInfo info = sql.execute(query, option);
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
      long value = 0;
      while (stream.next()) {
        if (stream.getRoot().getRowCount() > 0) {
          value = ((Number) stream.getRoot().getVector(0).getObject(0)).longValue();
        }
      }
      return value;
    }
  }

  /** Appends one segment of rows {@code id = first..first+count-1}; returns its IPC bytes. */
  private long append(TableWal tw, long first, int count) {
    stamp++;
    List<WalFrame> frames = new ArrayList<>();
    long bytes = 0;
    for (long from = first; from < first + count; from += FRAME_ROWS) {
      WalFrame frame = frame(from, (int) Math.min(FRAME_ROWS, first + count - from));
      bytes += frame.arrowIpc().length;
      frames.add(frame);
    }
    wal.append(tw, frames);
    return bytes;
  }

  private WalFrame frame(long from, int n) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(NARROW), allocator)) {
      EntityRows.fill(root, from, n, k -> k, stamp); // later appends win (higher ts)
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(bytes))) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      return new WalFrame(WalOperation.UPSERT, NARROW.schemaId(), new long[] {1}, n, bytes.toByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double percentile(double[] values, int p) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int index = (int) Math.min(sorted.length - 1, Math.ceil(p / 100.0 * sorted.length) - 1);
    return Math.round(sorted[Math.max(0, index)] * 10) / 10.0;
  }

  private void close() throws Exception {
    server.close();
    catalog.close();
    tombstones.close();
    duckdb.close();
    store.close();
    allocator.close();
  }

}

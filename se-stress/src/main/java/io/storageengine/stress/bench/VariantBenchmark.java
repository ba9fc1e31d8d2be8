package io.storageengine.stress.bench;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.ingest.IngestFlightProducer;
import io.storageengine.ingest.IngestService;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Semi-structured events as a {@code variant} column against the same JSON in a {@code string}
 * column, printed as one JSON object. For each form: {@code --events} JSON objects of 20 fields
 * (numbers, strings, booleans, a nested object and an array) are sent as JSON text through the
 * native DoPut path (the server encodes variants) and acknowledged, then reconciled into Parquet
 * (DuckDB writes variants as Parquet VARIANT, shredded); it reports rows/s of ingest, of
 * reconcile and of both, the data file bytes, and the latency (median of {@code --runs}, after
 * one warm run) of a few snapshot queries: the variant ones with path access
 * ({@code doc.country::VARCHAR}), the string ones with DuckDB's JSON functions
 * ({@code doc ->> '$.country'}).
 *
 * <p>Everything runs in one process: a SQLite {@code JdbcCatalog} with a local warehouse, the WAL
 * on the fs store, the ingest service and the Flight SQL producer on local servers. Options
 * ({@code --name value}): {@code events} (1000000), {@code batch-rows} (8192), {@code runs} (5),
 * {@code threads} (the CPUs), {@code shredding} (comma-separated variant runs, default
 * {@code auto,typed}: {@code se.variant.shredding.doc} left to DuckDB, set to the events' 20
 * fields with their types ({@link #TYPED_FIELDS}), or {@code off}), {@code string} (true: also
 * the string run). Needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED}.
 */
public final class VariantBenchmark {
  private static final String HEADER = "{\"catalog_id\":\"bench\",\"read\":\"snapshot\"}";
  private static final String[] EVENTS = {"view", "click", "purchase", "signup", "logout", "search", "share", "like"};
  private static final String[] COUNTRIES = {"DE", "FR", "US", "BR", "IN", "JP", "NG", "GB", "CA", "MX"};
  private static final String[] DEVICES = {"ios", "android", "web", "desktop"};
  /**
   * Every field of an event with its type, for {@code --shredding typed}. Integers are declared
   * {@code int}, but ingestion encodes each JSON integer as the smallest of int8/16/32/64 that
   * holds it and DuckDB shreds only values of exactly the declared type, so only the int32-sized
   * values of a field land in its typed column; strings, doubles and booleans shred whole.
   */
  static final String TYPED_FIELDS = "event_id int, user_id int, event string, ts string, country string,"
      + " device string, amount double, qty int, ok boolean, session string, page string, referrer string,"
      + " latency_ms int, version string, score double, retries int, tags list<string>,"
      + " geo struct<lat: double, lon: double>, ab string, consent boolean";

  private final BufferAllocator allocator = new RootAllocator();
  private final TombstoneCache tombstones = TombstoneCache.create();
  private final DuckRuntime duckdb;
  private final FsObjectStore store;
  private final ObjectStoreWal wal;
  private final JdbcCatalog catalog;
  private final Reconciler reconciler;
  private final BufferAllocator ingestAllocator;
  private final IngestService ingest;
  private final Server ingestServer;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final BenchFixtures.QueryServer queryServer;
  private final FlightSqlClient sql;

  private VariantBenchmark(Path dir, int threads) throws IOException {
    duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("duckdb")), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    store = new FsObjectStore(Files.createDirectories(dir.resolve("cluster")));
    wal = new ObjectStoreWal(store, "benchmark");
    catalog = BenchFixtures.sqliteCatalog(dir);
    ReconcileOptions options = ReconcileOptions.defaults().withDuckdbThreads(threads);
    reconciler = new Reconciler(id -> catalog, wal, store, tombstones, allocator, duckdb,
        options.withMaxBytesPerCommit(1L << 30));
    ingestAllocator = allocator.newChildAllocator("ingest", 0, Long.MAX_VALUE);
    ingest = new IngestService(ingestAllocator, id -> {
      if (!id.equals("bench")) {
        throw SeException.notFound("catalog `%s` not found", id);
      }
      return catalog;
    }, wal, IngestConfig.defaults().withFlushInterval(Duration.ofMillis(200)), (table, seq, rows, bytes) -> {});
    ingestServer = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .maxInboundMessageSize(256 << 20)
        .addService(ingest.flightService(allocator, new IngestFlightProducer(), executor))
        .build().start();
    queryServer = new BenchFixtures.QueryServer(allocator, catalog, duckdb, store, wal, tombstones, threads);
    sql = queryServer.sql();
  }

  public static void main(String[] args) throws Exception {
    BenchArgs opts = BenchArgs.parse(args);
    long events = opts.longValue("events", 1_000_000);
    int batchRows = opts.intValue("batch-rows", 8192);
    int runs = opts.intValue("runs", 5);
    int threads = opts.threads();
    Path dir = Files.createTempDirectory("se-variant-bench-");
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("duckdb_threads", threads);
    out.put("events", events);
    out.put("fields_per_event", 20);
    VariantBenchmark bench = new VariantBenchmark(dir, threads);
    List<String> shreddings = Arrays.asList(opts.string("shredding", "auto,typed").split(","));
    try {
      for (String shredding : shreddings) {
        String mode = shredding.trim();
        String name = "events_variant_" + mode;
        String property = switch (mode) {
          case "auto" -> "auto";
          case "off" -> "off";
          case "typed" -> TYPED_FIELDS;
          default -> throw new IllegalArgumentException("--shredding: auto, typed or off, not " + mode);
        };
        out.put("variant_" + mode, bench.run(name, Types.VariantType.get(), events, batchRows, runs,
            Map.of("se.variant.shredding.doc", property), Map.of(
            "count_purchases", "SELECT count(*) FROM bench." + name + " WHERE doc.event::VARCHAR = 'purchase'",
            "sum_by_country", "SELECT doc.country::VARCHAR AS c, sum(doc.amount::DOUBLE), count(*) FROM bench." + name
                + " GROUP BY c ORDER BY c",
            "nested_filter", "SELECT count(*) FROM bench." + name + " WHERE doc.geo.lat::DOUBLE > 10 AND doc.ok::BOOLEAN",
            "selective_filter", "SELECT count(*) FROM bench." + name + " WHERE doc.amount::DOUBLE > 999.5",
            "distinct_users", "SELECT count(DISTINCT doc.user_id::BIGINT) FROM bench." + name,
            "point_lookup", "SELECT doc FROM bench." + name + " WHERE id = 4242")));
      }
      if (opts.string("string", "true").equals("true")) {
        out.put("string", bench.run("events_string", Types.StringType.get(), events, batchRows, runs, Map.of(), Map.of(
          "selective_filter", "SELECT count(*) FROM bench.events_string WHERE (doc ->> '$.amount')::DOUBLE > 999.5",
          "count_purchases", "SELECT count(*) FROM bench.events_string WHERE doc ->> '$.event' = 'purchase'",
          "sum_by_country", "SELECT doc ->> '$.country' AS c, sum((doc ->> '$.amount')::DOUBLE), count(*)"
              + " FROM bench.events_string GROUP BY c ORDER BY c",
          "nested_filter", "SELECT count(*) FROM bench.events_string WHERE (doc ->> '$.geo.lat')::DOUBLE > 10"
              + " AND (doc ->> '$.ok')::BOOLEAN",
          "distinct_users", "SELECT count(DISTINCT (doc ->> '$.user_id')::BIGINT) FROM bench.events_string",
          "point_lookup", "SELECT doc FROM bench.events_string WHERE id = 4242")));
      }
    } finally {
      bench.close();
      BenchFixtures.deleteRecursively(dir);
    }
    System.out.println(Json.toString(out));
  }

  private Map<String, Object> run(String name, Type docType, long events, int batchRows, int runs,
      Map<String, String> properties, Map<String, String> queries) throws Exception {
    Table table = catalog.buildTable(TableIdentifier.of("bench", name), new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "doc", docType)))
        .withProperty("format-version", "3").withProperties(properties).create();
    org.apache.arrow.vector.types.pojo.Schema arrow = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("doc", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    Random rnd = new Random(7);
    long jsonBytes = 0;
    long started = System.nanoTime();
    try (IngestClient ingestClient = IngestClient.connect(
            Location.forGrpcInsecure("127.0.0.1", ingestServer.getPort()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(arrow, allocator);
        IngestStream stream = ingestClient.open("bench", List.of("bench"), name, WalOperation.UPSERT, arrow)) {
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      for (long first = 0; first < events; first += batchRows) {
        int n = (int) Math.min(batchRows, events - first);
        root.allocateNew();
        BigIntVector ids = (BigIntVector) root.getVector(0);
        VarCharVector docs = (VarCharVector) root.getVector(1);
        for (int i = 0; i < n; i++) {
          byte[] doc = event(rnd, first + i).getBytes(StandardCharsets.UTF_8);
          jsonBytes += doc.length;
          ids.setSafe(i, first + i);
          docs.setSafe(i, doc);
        }
        root.setRowCount(n);
        acks.add(stream.send(root));
      }
      for (CompletableFuture<Long> ack : acks) {
        ack.get();
      }
      stream.finish();
    }
    double ingestSeconds = (System.nanoTime() - started) / 1e9;
    long reconcileStart = System.nanoTime();
    TableWal tw = new TableWal("bench", table.uuid());
    long reconciled = 0;
    while (reconciled < events) {
      ReconcileResult result = reconciler.reconcile(tw);
      if (result.outcome() != ReconcileResult.Outcome.COMMITTED) {
        throw new IllegalStateException("reconcile of " + name + ": " + result);
      }
      reconciled += result.walRows();
    }
    double reconcileSeconds = (System.nanoTime() - reconcileStart) / 1e9;
    table.refresh();
    long fileBytes = 0;
    int files = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        fileBytes += task.file().fileSizeInBytes();
        files++;
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("column_type", docType.toString());
    properties.forEach(out::put);
    out.put("json_mb", round(jsonBytes / 1e6));
    out.put("ingest_s", round(ingestSeconds));
    out.put("ingest_rows_per_s", Math.round(events / ingestSeconds));
    out.put("reconcile_s", round(reconcileSeconds));
    out.put("reconcile_rows_per_s", Math.round(events / reconcileSeconds));
    out.put("ingest_and_reconcile_rows_per_s", Math.round(events / (ingestSeconds + reconcileSeconds)));
    out.put("data_files", files);
    out.put("data_mb", round(fileBytes / 1e6));
    Map<String, Object> latencies = new LinkedHashMap<>();
    for (Map.Entry<String, String> q : new java.util.TreeMap<>(queries).entrySet()) {
      long count = query(q.getValue());
      if (count == 0) {
        throw new IllegalStateException(q.getKey() + " returned no rows");
      }
      double[] ms = new double[runs];
      for (int i = 0; i < runs; i++) {
        long t = System.nanoTime();
        query(q.getValue());
        ms[i] = (System.nanoTime() - t) / 1e6;
      }
      Arrays.sort(ms);
      latencies.put(q.getKey() + "_ms", round(ms[runs / 2]));
    }
    out.put("query_p50", latencies);
    return out;
  }

  /** One event: 20 top-level fields, among them a nested object and an array. */
  private static String event(Random rnd, long id) {
    StringBuilder b = new StringBuilder(400);
    b.append("{\"event_id\":").append(id)
        .append(",\"user_id\":").append(rnd.nextInt(100_000))
        .append(",\"event\":\"").append(EVENTS[rnd.nextInt(EVENTS.length)]).append('"')
        .append(",\"ts\":\"2026-01-").append(10 + rnd.nextInt(20)).append("T12:").append(10 + rnd.nextInt(50))
        .append(":00Z\"")
        .append(",\"country\":\"").append(COUNTRIES[rnd.nextInt(COUNTRIES.length)]).append('"')
        .append(",\"device\":\"").append(DEVICES[rnd.nextInt(DEVICES.length)]).append('"')
        .append(",\"amount\":").append(rnd.nextInt(100_000) / 100.0)
        .append(",\"qty\":").append(rnd.nextInt(10))
        .append(",\"ok\":").append(rnd.nextBoolean())
        .append(",\"session\":\"s").append(Long.toString(rnd.nextLong() & Long.MAX_VALUE, 36)).append('"')
        .append(",\"page\":\"/p/").append(rnd.nextInt(5000)).append('"')
        .append(",\"referrer\":").append(rnd.nextInt(3) == 0 ? "null" : "\"https://r" + rnd.nextInt(50) + ".example\"")
        .append(",\"latency_ms\":").append(rnd.nextInt(2000))
        .append(",\"version\":\"").append(1 + rnd.nextInt(3)).append('.').append(rnd.nextInt(10)).append('"')
        .append(",\"score\":").append(rnd.nextDouble())
        .append(",\"retries\":").append(rnd.nextInt(3))
        .append(",\"tags\":[\"t").append(rnd.nextInt(20)).append("\",\"t").append(rnd.nextInt(20)).append("\"]")
        .append(",\"geo\":{\"lat\":").append(rnd.nextInt(180_000) / 1000.0 - 90)
        .append(",\"lon\":").append(rnd.nextInt(360_000) / 1000.0 - 180).append('}')
        .append(",\"ab\":\"").append(rnd.nextBoolean() ? "A" : "B").append('"')
        .append(",\"consent\":").append(rnd.nextInt(4) != 0)
        .append('}');
    return b.toString();
  }

  /** Runs {@code query} and returns how many rows it answered. */
  private long query(String query) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert(QueryMetadataInterceptor.HEADER_NAME, HEADER);
    HeaderCallOption option = new HeaderCallOption(headers);
    FlightInfo info = sql.execute(query, option);
    long rows = 0;
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
    }
    return rows;
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  private void close() throws Exception {
    queryServer.close();
    ingestServer.shutdown();
    ingestServer.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    ingestServer.shutdownNow();
    executor.shutdownNow();
    ingest.close();
    ingestAllocator.close();
    catalog.close();
    tombstones.close();
    duckdb.close();
    store.close();
    allocator.close();
  }

}

package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.catalog.TableProperties;
import io.storageengine.common.Json;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * TPC-H through the engine against raw DuckDB, differentially validated (a program, prints one
 * JSON object). Generates the 8 TPC-H tables at {@code --scale} (default 1) with the pure-Java
 * dbgen {@code io.trino.tpch}, ingests them through the native ingest ({@link IngestClient}) of a
 * running server into append tables with the specification's types (keys {@code bigint}, money
 * and quantities {@code decimal(15,2)}, dates {@code date}), waits until every table's snapshot
 * holds all its rows (reconciled), then runs the 22 queries (validation-run parameters) through
 * Flight SQL and on DuckDB in this process over the Parquet files the snapshots list
 * ({@code read_parquet} of the file list, one view per table). Each query runs once on both
 * sides unmeasured, then {@code --repeats} times (default 5) alternating; the median counts.
 * Every result is diffed row by row ({@link ResultDiff}: in order when the query ends in ORDER
 * BY, decimals exact, doubles within {@code --tolerance}, default 1e-9 relative); a query whose
 * result is empty is reported {@code vacuous}.
 *
 * <pre>java -cp ... io.storageengine.stress.bench.TpchBenchmark --server-address 127.0.0.1:7777 [--scale 1]</pre>
 *
 * <p>{@code --namespace ns} names the namespace (default {@code tpch_<time>}); with {@code
 * --reuse true} the tables of an earlier run in that namespace are queried without loading
 * (the entity variant's too, when that run made them). {@code --entity true} adds the entity
 * variant ({@link #entityVariant}): lineitem as an entity table after upserting every {@code
 * --update-every}-th row (default 10), against its copy without deletion vectors; {@code
 * --append-queries false} then leaves out the 22 queries against DuckDB.
 *
 * <p>{@code --spark true} then runs the 22 queries once more through Spark local ({@link
 * #sparkComparison}) over the tenant's Iceberg REST facade, in a child JVM on the {@code se-spark}
 * module's classpath ({@code --spark-module}, default {@code se-spark/target}): one unmeasured run
 * and {@code --spark-repeats} (default {@code --repeats}) timed runs of each query, the median
 * counting, with {@code --spark-master} (default {@code local[2]}), {@code
 * --spark-shuffle-partitions} (default 2) and {@code --spark-heap} (default {@code 4g}). Each
 * result is diffed against the engine's ({@link ResultDiff} across types); the report gives
 * Spark's time and Spark/engine per query and in total.
 */
public final class TpchBenchmark {
  private static final int BATCH_ROWS = 100_000;
  private static final String QUANTITY = "l_quantity";
  /**
   * Set false on the benchmark's tables: compaction during a run would give the engine other
   * files than the ones DuckDB was handed (and fold the entity variant's deletion vectors).
   */
  private static final String NO_MAINTENANCE = "se.maintenance.enabled";

  private TpchBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    URI address = URI.create("http://" + opts.getOrDefault("server-address", "127.0.0.1:7777"));
    String catalogId = opts.getOrDefault("catalog-id", "warehouse");
    double scale = Double.parseDouble(opts.getOrDefault("scale", "1"));
    int repeats = Integer.parseInt(opts.getOrDefault("repeats", "5"));
    double tolerance = Double.parseDouble(opts.getOrDefault("tolerance", "1e-9"));
    boolean reuse = Boolean.parseBoolean(opts.getOrDefault("reuse", "false"));
    boolean entity = Boolean.parseBoolean(opts.getOrDefault("entity", "false"));
    int updateEvery = Integer.parseInt(opts.getOrDefault("update-every", "10"));
    boolean appendQueries = !entity || Boolean.parseBoolean(opts.getOrDefault("append-queries", "true"));
    String namespace = opts.getOrDefault("namespace", "tpch_" + Long.toString(System.currentTimeMillis(), 36));
    boolean spark = Boolean.parseBoolean(opts.getOrDefault("spark", "false"));
    int sparkRepeats = Integer.parseInt(opts.getOrDefault("spark-repeats", String.valueOf(repeats)));
    SparkDriverProcess.Settings sparkSettings = new SparkDriverProcess.Settings(
        Path.of(opts.getOrDefault("spark-module", "se-spark/target")),
        opts.getOrDefault("spark-master", "local[2]"),
        Integer.parseInt(opts.getOrDefault("spark-shuffle-partitions", "2")),
        opts.getOrDefault("spark-heap", "4g"),
        java.time.Duration.ofMinutes(Long.parseLong(opts.getOrDefault("spark-timeout-minutes", "180"))));

    ObjectNode out = Json.object();
    out.put("scale", reuse ? null : scale); // with --reuse the loaded tables' row counts tell
    out.put("namespace", namespace);
    out.put("generator", "io.trino.tpch:tpch (pure-Java dbgen)");
    out.put("load_average_start", loadAverage());
    Location flight = Location.forGrpcInsecure(address.getHost(), address.getPort());
    try (BufferAllocator allocator = new RootAllocator();
        RESTCatalog catalog = restCatalog(address, catalogId)) {
      ObjectNode tables = out.putObject("tables");
      if (!reuse) {
        long loadStart = System.nanoTime();
        Map<TableIdentifier, Long> expected = new LinkedHashMap<>();
        for (TpchTable<?> tpch : TpchTable.getTables()) {
          TableIdentifier id = TableIdentifier.of(namespace, tpch.getTableName());
          Table table = Tables.create(catalog, id, TableDefinition.builder(schemaText(tpch))
              .property(NO_MAINTENANCE, "false").build());
          long t0 = System.nanoTime();
          long rows = load(flight, allocator, catalogId, table, tpch, scale);
          expected.put(id, rows);
          ObjectNode t = tables.putObject(tpch.getTableName());
          t.put("rows", rows);
          t.put("ingest_seconds", round((System.nanoTime() - t0) / 1e9));
        }
        out.put("ingest_seconds", round((System.nanoTime() - loadStart) / 1e9));
        for (Map.Entry<TableIdentifier, Long> e : expected.entrySet()) {
          awaitReconciled(catalog, e.getKey(), e.getValue());
        }
        out.put("ingest_and_reconcile_seconds", round((System.nanoTime() - loadStart) / 1e9));
      }

      Map<String, String> views = new LinkedHashMap<>();
      Map<String, Long> snapshots = new LinkedHashMap<>();
      for (TpchTable<?> tpch : TpchTable.getTables()) {
        Table table = catalog.loadTable(TableIdentifier.of(namespace, tpch.getTableName()));
        Snapshot snapshot = table.currentSnapshot();
        snapshots.put(tpch.getTableName(), snapshot.snapshotId());
        ObjectNode t = tables.has(tpch.getTableName()) ? (ObjectNode) tables.get(tpch.getTableName())
            : tables.putObject(tpch.getTableName());
        List<String> files = files(table);
        t.put("snapshot_rows", Long.parseLong(snapshot.summary().getOrDefault("total-records", "0")));
        t.put("snapshot_wal_seq", snapshot.summary().getOrDefault(TableProperties.SUMMARY_WAL_SEQ, ""));
        t.put("data_files", files.size());
        views.put(tpch.getTableName(), "CREATE VIEW " + tpch.getTableName() + " AS SELECT * FROM read_parquet(["
            + String.join(",", files) + "])");
      }

      HeaderCallOption tenant = tenant(catalogId);
      ArrayNode results = out.putArray("queries");
      double sumEngine = 0;
      double sumDuck = 0;
      double maxRatio = 0;
      int equal = 0;
      int vacuous = 0;
      Map<String, EngineRun> engineRuns = new LinkedHashMap<>();
      try (FlightClient client = FlightClient.builder(allocator, flight).build();
          FlightSqlClient sql = new FlightSqlClient(client);
          Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
        for (String view : views.values()) {
          try (Statement st = duck.createStatement()) {
            st.execute(view);
          }
        }
        for (TpchQueries.Query q : appendQueries ? TpchQueries.all() : List.<TpchQueries.Query>of()) {
          String viaEngine = TpchQueries.qualify(q.sql(), name -> "default." + namespace + "." + name);
          ObjectNode row = results.addObject();
          row.put("name", q.name());
          try {
            // Unmeasured first round: JIT, page cache and the engine's file cache warm up.
            runEngine(sql, viaEngine, tenant);
            runDuck(duck, q.sql());
            double[] engineMs = new double[repeats];
            double[] duckMs = new double[repeats];
            List<List<Object>> engineRows = List.of();
            List<List<Object>> duckRows = List.of();
            for (int r = 0; r < repeats; r++) {
              long t0 = System.nanoTime();
              engineRows = runEngine(sql, viaEngine, tenant);
              engineMs[r] = (System.nanoTime() - t0) / 1e6;
              long t1 = System.nanoTime();
              duckRows = runDuck(duck, q.sql());
              duckMs[r] = (System.nanoTime() - t1) / 1e6;
            }
            double e = median(engineMs);
            double d = median(duckMs);
            String diff = ResultDiff.compare(duckRows, engineRows, q.ordered(), tolerance);
            sumEngine += e;
            sumDuck += d;
            maxRatio = Math.max(maxRatio, e / d);
            engineRuns.put(q.name(), new EngineRun(q, row, engineRows, e));
            row.put("engine_ms", round(e));
            row.put("duckdb_ms", round(d));
            row.put("ratio", Math.round(e / d * 100) / 100.0);
            row.put("rows", engineRows.size());
            row.put("equal", diff.isEmpty());
            if (!diff.isEmpty()) {
              row.put("difference", diff);
            }
            equal += diff.isEmpty() ? 1 : 0;
            if (duckRows.isEmpty()) {
              row.put("vacuous", true);
              vacuous++;
            }
          } catch (Exception e) {
            row.put("equal", false);
            row.put("error", String.valueOf(e.getMessage()));
          }
        }
      }
      out.put("load_average_engine_end", loadAverage());
      if (spark && !engineRuns.isEmpty()) {
        // A failure here must not lose the numbers above: it is reported in the output.
        try {
          out.set("spark", sparkComparison(sparkSettings, URI.create(address + "/catalogs/" + catalogId), namespace,
              engineRuns, sparkRepeats, tolerance));
        } catch (Exception e) {
          out.putObject("spark").put("error", String.valueOf(e));
        }
      }
      boolean unchanged = true;
      for (Map.Entry<String, Long> e : snapshots.entrySet()) {
        unchanged &= catalog.loadTable(TableIdentifier.of(namespace, e.getKey())).currentSnapshot().snapshotId()
            == e.getValue();
      }
      // False would mean the engine (or Spark) may have read other files than DuckDB did.
      out.put("snapshots_unchanged_during_queries", unchanged);
      out.put("repeats", repeats);
      out.put("total_engine_ms", Math.round(sumEngine));
      out.put("total_duckdb_ms", Math.round(sumDuck));
      out.put("ratio_of_sums", Math.round(sumEngine / sumDuck * 100) / 100.0);
      out.put("max_ratio", Math.round(maxRatio * 100) / 100.0);
      out.put("queries_equal", equal);
      out.put("queries_vacuous", vacuous);
      out.put("load_average_end", loadAverage());
      if (entity) {
        // A failure here must not lose the numbers above: it is reported in the output.
        try {
          out.set("entity", entityVariant(catalog, flight, allocator, catalogId, namespace, scale, updateEvery,
              repeats, tolerance, reuse));
        } catch (Exception e) {
          out.putObject("entity").put("error", String.valueOf(e));
        }
        out.put("load_average_entity_end", loadAverage());
      }
    }
    System.out.println(Json.toString(out));
  }

  /** One query's run through the engine: its report row, the last timed result, the median. */
  private record EngineRun(TpchQueries.Query query, ObjectNode row, List<List<Object>> rows, double ms) {}

  /**
   * The 22 queries through Spark local over the tenant's REST facade ({@link SparkDriverProcess},
   * one Spark session for all): per query one unmeasured run, then {@code repeats} timed ones
   * (the driver's time per statement, from parsing to the last row collected); the median counts.
   * Spark's last result is diffed against the engine's across types (decimals where DuckDB has
   * doubles, see {@link ResultDiff}). Each query's report row gets {@code spark_ms}, {@code
   * spark_vs_engine} (Spark/engine), {@code spark_rows}, {@code spark_equal} and {@code
   * spark_difference} or {@code spark_error}; the returned object has the totals over the queries
   * both ran.
   */
  private static ObjectNode sparkComparison(SparkDriverProcess.Settings settings, URI facade, String namespace,
      Map<String, EngineRun> engineRuns, int repeats, double tolerance) throws Exception {
    ObjectNode out = Json.object();
    out.put("master", settings.master());
    out.put("shuffle_partitions", settings.shufflePartitions());
    out.put("heap", settings.heap());
    out.put("repeats", repeats);
    out.put("facade", facade.toString());
    out.put("load_average_start", loadAverage());
    List<String> statements = new ArrayList<>();
    for (EngineRun run : engineRuns.values()) {
      String sql = TpchQueries.forSpark(TpchQueries.qualify(run.query().sql(), name -> "se." + namespace + "." + name));
      for (int r = 0; r <= repeats; r++) {
        statements.add(sql);
      }
    }
    Path work = Files.createTempDirectory("tpch-spark");
    long t0 = System.nanoTime();
    List<SparkDriverProcess.Result> results = SparkDriverProcess.run(settings, facade, statements, work);
    out.put("child_seconds", round((System.nanoTime() - t0) / 1e9));
    out.put("load_average_end", loadAverage());
    double sumSpark = 0;
    double sumEngine = 0;
    double minRatio = Double.MAX_VALUE;
    int equal = 0;
    int compared = 0;
    int i = 0;
    ArrayNode perQuery = out.putArray("queries");
    for (EngineRun run : engineRuns.values()) {
      List<SparkDriverProcess.Result> mine = results.subList(i, i + repeats + 1);
      i += repeats + 1;
      ObjectNode row = run.row();
      ObjectNode brief = perQuery.addObject();
      brief.put("name", run.query().name());
      SparkDriverProcess.Result failed = null;
      for (SparkDriverProcess.Result r : mine) {
        failed = failed == null && r.error() != null ? r : failed;
      }
      if (failed != null) {
        row.put("spark_equal", false);
        row.put("spark_error", failed.error());
        brief.put("equal", false);
        brief.put("error", failed.error());
        continue;
      }
      double[] ms = new double[repeats];
      for (int r = 0; r < repeats; r++) {
        ms[r] = mine.get(r + 1).ms();
      }
      double s = median(ms);
      List<List<Object>> sparkRows = mine.get(repeats).rows();
      String diff = ResultDiff.compare(run.rows(), sparkRows, run.query().ordered(), tolerance, true);
      compared++;
      sumSpark += s;
      sumEngine += run.ms();
      minRatio = Math.min(minRatio, s / run.ms());
      equal += diff.isEmpty() ? 1 : 0;
      double ratio = Math.round(s / run.ms() * 100) / 100.0;
      row.put("spark_ms", round(s));
      row.put("spark_first_ms", round(mine.get(0).ms()));
      row.put("spark_vs_engine", ratio);
      row.put("spark_rows", sparkRows.size());
      row.put("spark_equal", diff.isEmpty());
      if (!diff.isEmpty()) {
        row.put("spark_difference", diff);
      }
      brief.put("engine_ms", round(run.ms()));
      brief.put("spark_ms", round(s));
      brief.put("spark_vs_engine", ratio);
      brief.put("equal", diff.isEmpty());
    }
    out.put("queries_run", compared);
    out.put("queries_equal", equal);
    out.put("total_spark_ms", Math.round(sumSpark));
    out.put("total_engine_ms", Math.round(sumEngine));
    out.put("spark_vs_engine_of_sums", compared == 0 ? 0 : Math.round(sumSpark / sumEngine * 100) / 100.0);
    out.put("min_spark_vs_engine", compared == 0 ? 0 : Math.round(minRatio * 100) / 100.0);
    out.put("work_dir", work.toString());
    return out;
  }

  /**
   * The entity variant: lineitem as an entity table (key {@code l_orderkey, l_linenumber},
   * version {@code l_version}) loaded at version 1, then every {@code every}-th row upserted at
   * version 2 with its quantity raised by 1 (so the snapshot carries deletion vectors), against
   * a copy loaded once with the same final rows (no deletion vectors: what compaction leaves).
   * Every query reading lineitem runs on both; the results must be equal. With {@code reuse} the
   * two tables of an earlier run are queried as they are, if they exist.
   */
  private static ObjectNode entityVariant(RESTCatalog catalog, Location flight, BufferAllocator allocator,
      String catalogId, String namespace, double scale, int every, int repeats, double tolerance, boolean reuse)
      throws Exception {
    ObjectNode out = Json.object();
    TableDefinition definition = TableDefinition.builder(schemaText(TpchTable.LINE_ITEM) + ", l_version bigint not null")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("l_orderkey", "l_linenumber").versionColumn("l_version")
        .property(NO_MAINTENANCE, "false").build();
    TableIdentifier upsertedId = TableIdentifier.of(namespace, "lineitem_upserted");
    TableIdentifier compactedId = TableIdentifier.of(namespace, "lineitem_compacted");
    boolean load = !(reuse && catalog.tableExists(upsertedId) && catalog.tableExists(compactedId));
    Table upserted = load ? Tables.create(catalog, upsertedId, definition) : catalog.loadTable(upsertedId);
    Table compacted = load ? Tables.create(catalog, compactedId, definition) : catalog.loadTable(compactedId);
    String upsertedSql = "default." + namespace + "." + upsertedId.name();
    String compactedSql = "default." + namespace + "." + compactedId.name();
    long t0 = System.nanoTime();
    try (FlightClient client = FlightClient.builder(allocator, flight).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      if (load) {
        long rows = load(flight, allocator, catalogId, upserted, TpchTable.LINE_ITEM, scale, e -> 1);
        awaitSnapshotCount(sql, catalogId, upsertedSql, "true", rows);
        long updates = load(flight, allocator, catalogId, upserted, TpchTable.LINE_ITEM, scale,
            e -> e.getRowNumber() % every == 0 ? 2 : 0);
        awaitSnapshotCount(sql, catalogId, upsertedSql, "l_version = 2", updates);
        load(flight, allocator, catalogId, compacted, TpchTable.LINE_ITEM, scale,
            e -> e.getRowNumber() % every == 0 ? 2 : 1);
        awaitSnapshotCount(sql, catalogId, compactedSql, "l_version = 2", updates);
        awaitSnapshotCount(sql, catalogId, compactedSql, "true", rows);
        out.put("rows", rows);
        out.put("upserted_rows", updates);
        out.put("load_seconds", round((System.nanoTime() - t0) / 1e9));
      }
      out.put("reused", !load);
      for (TableIdentifier id : List.of(upsertedId, compactedId)) {
        int dataFiles = 0;
        int withDeletes = 0;
        try (CloseableIterable<FileScanTask> tasks = catalog.loadTable(id).newScan().planFiles()) {
          for (FileScanTask task : tasks) {
            dataFiles++;
            withDeletes += task.deletes().isEmpty() ? 0 : 1;
          }
        }
        ObjectNode t = out.putObject(id.name());
        t.put("data_files", dataFiles);
        t.put("data_files_with_deletion_vectors", withDeletes);
      }

      HeaderCallOption tenant = tenant(catalogId);
      ArrayNode results = out.putArray("queries");
      double sumUpserted = 0;
      double sumCompacted = 0;
      double maxRatio = 0;
      int equal = 0;
      for (TpchQueries.Query q : TpchQueries.all()) {
        if (!q.sql().matches("(?s).*\\blineitem\\b.*")) {
          continue;
        }
        String onUpserted = TpchQueries.qualify(q.sql(),
            name -> name.equals("lineitem") ? upsertedSql : "default." + namespace + "." + name);
        String onCompacted = TpchQueries.qualify(q.sql(),
            name -> name.equals("lineitem") ? compactedSql : "default." + namespace + "." + name);
        ObjectNode row = results.addObject();
        row.put("name", q.name());
        try {
          runEngine(sql, onUpserted, tenant);
          runEngine(sql, onCompacted, tenant);
          double[] upsertedMs = new double[repeats];
          double[] compactedMs = new double[repeats];
          List<List<Object>> upsertedRows = List.of();
          List<List<Object>> compactedRows = List.of();
          for (int r = 0; r < repeats; r++) {
            long a = System.nanoTime();
            upsertedRows = runEngine(sql, onUpserted, tenant);
            upsertedMs[r] = (System.nanoTime() - a) / 1e6;
            long b = System.nanoTime();
            compactedRows = runEngine(sql, onCompacted, tenant);
            compactedMs[r] = (System.nanoTime() - b) / 1e6;
          }
          double u = median(upsertedMs);
          double c = median(compactedMs);
          String diff = ResultDiff.compare(compactedRows, upsertedRows, q.ordered(), tolerance);
          sumUpserted += u;
          sumCompacted += c;
          maxRatio = Math.max(maxRatio, u / c);
          row.put("upserted_ms", round(u));
          row.put("compacted_ms", round(c));
          row.put("ratio", Math.round(u / c * 100) / 100.0);
          row.put("rows", upsertedRows.size());
          row.put("equal", diff.isEmpty());
          if (!diff.isEmpty()) {
            row.put("difference", diff);
          }
          equal += diff.isEmpty() ? 1 : 0;
          if (compactedRows.isEmpty()) {
            row.put("vacuous", true);
          }
        } catch (Exception e) {
          row.put("equal", false);
          row.put("error", String.valueOf(e.getMessage()));
        }
      }
      out.put("total_upserted_ms", Math.round(sumUpserted));
      out.put("total_compacted_ms", Math.round(sumCompacted));
      out.put("ratio_of_sums", Math.round(sumUpserted / sumCompacted * 100) / 100.0);
      out.put("max_ratio", Math.round(maxRatio * 100) / 100.0);
      out.put("queries_equal", equal);
    }
    return out;
  }

  /** Waits until {@code SELECT count(*) ... WHERE condition} on the snapshot alone gives {@code expected}. */
  private static void awaitSnapshotCount(FlightSqlClient sql, String catalogId, String table, String condition,
      long expected) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\",\"read\":\"snapshot\"}");
    HeaderCallOption snapshotOnly = new HeaderCallOption(headers);
    String query = "SELECT count(*) FROM " + table + " WHERE " + condition;
    long deadline = System.nanoTime() + 1_800_000_000_000L;
    while (System.nanoTime() < deadline) {
      List<List<Object>> rows = runEngine(sql, query, snapshotOnly);
      if (rows.size() == 1 && ((Number) rows.get(0).get(0)).longValue() == expected) {
        return;
      }
      Thread.sleep(1000);
    }
    throw new IllegalStateException(table + " did not reach " + expected + " rows where " + condition);
  }

  /** The table's columns in TPC-H order with the specification's types, all NOT NULL. */
  static String schemaText(TpchTable<?> table) {
    List<String> columns = new ArrayList<>();
    for (TpchColumn<?> column : table.getColumns()) {
      String type = switch (column.getType().getBase()) {
        case IDENTIFIER -> "bigint";
        case INTEGER -> "int";
        case DATE -> "date";
        // Every DOUBLE of the generator is a money amount, quantity or rate: decimal(15,2) in the spec.
        case DOUBLE -> "decimal(15,2)";
        case VARCHAR -> "string";
      };
      columns.add(column.getColumnName() + " " + type + " not null");
    }
    return String.join(", ", columns);
  }

  private static <E extends TpchEntity> long load(Location flight, BufferAllocator allocator, String catalogId,
      Table table, TpchTable<E> tpch, double scale) throws Exception {
    return load(flight, allocator, catalogId, table, tpch, scale, e -> 1);
  }

  /**
   * Sends the generated rows of {@code tpch} to {@code table}; {@code version} gives each row's
   * version: 0 skips the row, 2 or more also raises its quantity (an entity table's update, the
   * column {@link #QUANTITY} if the table has it). A table with one column more than TPC-H's
   * gets the version in that last column.
   */
  private static <E extends TpchEntity> long load(Location flight, BufferAllocator allocator, String catalogId,
      Table table, TpchTable<E> tpch, double scale, java.util.function.ToLongFunction<E> version) throws Exception {
    List<TpchColumn<E>> columns = tpch.getColumns();
    boolean versioned = table.schema().columns().size() == columns.size() + 1;
    int quantity = -1;
    for (int c = 0; c < columns.size(); c++) {
      quantity = columns.get(c).getColumnName().equals(QUANTITY) ? c : quantity;
    }
    long rows = 0;
    try (IngestClient client = IngestClient.connect(flight, allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open(catalogId, Arrays.asList(table.name().split("\\.")).subList(1, 2),
            table.name().substring(table.name().lastIndexOf('.') + 1), WalOperation.UPSERT, root.getSchema())) {
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      root.allocateNew();
      int n = 0;
      for (E entity : tpch.createGenerator(scale, 1, 1)) {
        long v = version.applyAsLong(entity);
        if (v == 0) {
          continue;
        }
        if (versioned) {
          ((BigIntVector) root.getVector(columns.size())).setSafe(n, v);
        }
        for (int c = 0; c < columns.size(); c++) {
          TpchColumn<E> column = columns.get(c);
          FieldVector vector = root.getVector(c);
          switch (column.getType().getBase()) {
            case IDENTIFIER -> ((BigIntVector) vector).setSafe(n, column.getIdentifier(entity));
            case INTEGER -> ((IntVector) vector).setSafe(n, column.getInteger(entity));
            case DATE -> ((DateDayVector) vector).setSafe(n, column.getDate(entity));
            case DOUBLE -> ((DecimalVector) vector).setSafe(n,
                Math.round(column.getDouble(entity) * 100) + (c == quantity && v > 1 ? 100 : 0));
            case VARCHAR -> ((VarCharVector) vector).setSafe(n, column.getString(entity).getBytes(StandardCharsets.UTF_8));
          }
        }
        n++;
        if (n == BATCH_ROWS) {
          root.setRowCount(n);
          acks.add(stream.send(root));
          rows += n;
          n = 0;
          root.allocateNew();
        }
      }
      if (n > 0) {
        root.setRowCount(n);
        acks.add(stream.send(root));
        rows += n;
      }
      stream.finish();
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
    }
    return rows;
  }

  private static void awaitReconciled(RESTCatalog catalog, TableIdentifier id, long rows) throws InterruptedException {
    long deadline = System.nanoTime() + 1_800_000_000_000L;
    while (System.nanoTime() < deadline) {
      Snapshot s = catalog.loadTable(id).currentSnapshot();
      if (s != null && Long.parseLong(s.summary().getOrDefault("total-records", "0")) >= rows) {
        return;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("table " + id + " did not reach " + rows + " rows in 30 minutes");
  }

  private static List<String> files(Table table) throws Exception {
    List<String> paths = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (!task.deletes().isEmpty()) {
          throw new IllegalStateException("TPC-H append tables must have no deletes: " + table.name());
        }
        paths.add("'" + URI.create(task.file().location()).getPath() + "'");
      }
    }
    return paths;
  }

  private static List<List<Object>> runEngine(FlightSqlClient sql, String query, HeaderCallOption tenant)
      throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    FlightInfo info = sql.execute(query, tenant);
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), tenant)) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          for (int i = 0; i < root.getRowCount(); i++) {
            List<Object> row = new ArrayList<>(root.getFieldVectors().size());
            for (FieldVector v : root.getFieldVectors()) {
              row.add(arrowValue(v, i));
            }
            rows.add(row);
          }
        }
      }
    }
    return rows;
  }

  private static List<List<Object>> runDuck(Connection duck, String query) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(query)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<Object> row = new ArrayList<>(n);
        for (int c = 1; c <= n; c++) {
          row.add(normalise(rs.getObject(c)));
        }
        rows.add(row);
      }
    }
    return rows;
  }

  private static Object arrowValue(FieldVector vector, int index) {
    if (vector.isNull(index)) {
      return null;
    }
    if (vector instanceof DateDayVector dates) {
      return LocalDate.ofEpochDay(dates.get(index));
    }
    return normalise(vector.getObject(index));
  }

  /** The value classes {@link ResultDiff} compares. */
  private static Object normalise(Object v) {
    if (v == null || v instanceof BigDecimal || v instanceof String || v instanceof LocalDate) {
      return v;
    }
    if (v instanceof Double || v instanceof Float) {
      return ((Number) v).doubleValue();
    }
    if (v instanceof BigInteger b) {
      return new BigDecimal(b);
    }
    if (v instanceof Number n) {
      return n.longValue();
    }
    if (v instanceof java.sql.Date d) {
      return d.toLocalDate();
    }
    if (v instanceof LocalDateTime t) {
      return t.toLocalDate().atStartOfDay().equals(t) ? t.toLocalDate() : t;
    }
    return v.toString();
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static double round(double v) {
    return Math.round(v * 10) / 10.0;
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (Exception e) {
      return "unknown";
    }
  }

  private static RESTCatalog restCatalog(URI address, String catalogId) {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    Map<String, String> properties = new HashMap<>(Map.of("uri", address + "/catalogs/" + catalogId,
        "rest-metrics-reporting-enabled", "false"));
    catalog.initialize(catalogId, properties);
    return catalog;
  }

  private static HeaderCallOption tenant(String catalogId) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\"}");
    return new HeaderCallOption(headers);
  }
}

package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Query benchmark (a program, prints one JSON object): loads a table of N rows (default 10 M)
 * into a running server, waits until it is reconciled, then times a set of scan / filter /
 * aggregate / join queries through Flight SQL against DuckDB reading the same Parquet files
 * directly, and the planning latency (GetFlightInfo) of a small table. The client first runs
 * {@code --warmup-queries} trivial queries (default 300) so its own Flight path is JIT-compiled,
 * as in a long-running client; then each query runs once unreported on both paths (reported
 * apart as {@code cold_*}) and {@code --repeats} times (default 5; the best counts).
 *
 * <pre>java -cp ... io.storageengine.stress.QueryBenchmark --server-address 127.0.0.1:7777 [--rows 10000000]</pre>
 *
 * <p>{@code --facts bench.facts_x --dims bench.dims_x} reuse tables a previous run loaded (their
 * names are in its output), so a server can be measured before and after a change without
 * loading again.
 */
public final class QueryBenchmark {
  private static final String[][] QUERIES = {
    {"count", "SELECT count(*) FROM %s"},
    {"scan_sum", "SELECT sum(amount), sum(qty) FROM %s"},
    {"filter", "SELECT count(*), avg(amount) FROM %s WHERE qty < 10 AND category = 'c7'"},
    {"group_by", "SELECT category, count(*), sum(amount) FROM %s GROUP BY category ORDER BY category"},
    {"top_n", "SELECT id, amount FROM %s ORDER BY amount DESC LIMIT 100"},
    {"join", "SELECT d.label, count(*) FROM %s f JOIN %s d ON f.qty = d.qty GROUP BY d.label ORDER BY d.label"},
  };

  private QueryBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new java.util.LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    ServerEndpoint server = ServerEndpoint.parse(opts.getOrDefault("server-address", "127.0.0.1:7777"));
    String catalogId = opts.getOrDefault("catalog-id", "warehouse");
    long rows = Long.parseLong(opts.getOrDefault("rows", "10000000"));
    int repeats = Integer.parseInt(opts.getOrDefault("repeats", "5"));
    int warmupQueries = Integer.parseInt(opts.getOrDefault("warmup-queries", "300"));
    String suffix = Long.toString(System.currentTimeMillis(), 36);
    boolean reuse = opts.containsKey("facts") && opts.containsKey("dims");
    TableIdentifier factId = TableIdentifier.parse(opts.getOrDefault("facts", "bench.facts_" + suffix));
    TableIdentifier dimId = TableIdentifier.parse(opts.getOrDefault("dims", "bench.dims_" + suffix));

    ObjectNode out = Json.object();
    out.put("rows", rows);
    out.put("facts", factId.toString());
    out.put("dims", dimId.toString());
    try (BufferAllocator allocator = new RootAllocator();
        RESTCatalog catalog = server.restCatalog(catalogId)) {
      if (!reuse) {
        Table facts = Tables.create(catalog, factId, TableDefinition.builder(
            "id bigint not null, qty int, amount double, category string").build());
        Table dims = Tables.create(catalog, dimId, TableDefinition.builder("qty int not null, label string").build());
        long loadStart = System.nanoTime();
        load(server, allocator, catalogId, facts, rows, false);
        load(server, allocator, catalogId, dims, 100, true);
        awaitRows(catalog, factId, rows);
        awaitRows(catalog, dimId, 100);
        out.put("load_and_reconcile_seconds", (System.nanoTime() - loadStart) / 1e9);
      }
      Table facts = catalog.loadTable(factId);
      Table dims = catalog.loadTable(dimId);
      out.put("rows", Long.parseLong(facts.currentSnapshot().summary().getOrDefault("total-records", "0")));
      String factFiles = files(facts);
      String dimFiles = files(dims);
      out.put("data_files", factFiles.split(",").length);

      HeaderCallOption tenant = tenant(catalogId);
      String factSql = "default." + factId.namespace() + "." + factId.name();
      String dimSql = "default." + dimId.namespace() + "." + dimId.name();
      ArrayNode results = out.putArray("queries");
      double totalFlight = 0;
      double totalDirect = 0;
      double coldFlight = 0;
      double coldDirect = 0;
      try (FlightClient client = FlightClient.builder(allocator, server.flightLocation()).build();
          FlightSqlClient sql = new FlightSqlClient(client);
          Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
        // Warm-up, not measured: a long-running client (JDBC in a BI tool) has JIT-compiled its
        // Flight path; a fresh benchmark JVM has not, and would time its own class loading.
        for (int i = 0; i < warmupQueries; i++) {
          runFlight(sql, "SELECT " + i, tenant);
        }
        out.put("warmup_queries", warmupQueries);
        for (String[] q : QUERIES) {
          String viaFlight = q[0].equals("join") ? String.format(q[1], factSql, dimSql) : String.format(q[1], factSql);
          String direct = q[0].equals("join")
              ? String.format(q[1], "read_parquet([" + factFiles + "])", "read_parquet([" + dimFiles + "])")
              : String.format(q[1], "read_parquet([" + factFiles + "])");
          // One unreported round first: both JVMs' JIT and the page cache warm up, as in any
          // long-running client; its times are reported apart as the cold numbers.
          long c0 = System.nanoTime();
          runFlight(sql, viaFlight, tenant);
          double coldFlightMs = (System.nanoTime() - c0) / 1e6;
          long c1 = System.nanoTime();
          runDirect(duck, direct);
          double coldDirectMs = (System.nanoTime() - c1) / 1e6;
          coldFlight += coldFlightMs;
          coldDirect += coldDirectMs;
          double flightMs = Double.MAX_VALUE;
          double directMs = Double.MAX_VALUE;
          long flightRows = 0;
          for (int r = 0; r < repeats; r++) {
            long t0 = System.nanoTime();
            flightRows = runFlight(sql, viaFlight, tenant);
            flightMs = Math.min(flightMs, (System.nanoTime() - t0) / 1e6);
            long t1 = System.nanoTime();
            runDirect(duck, direct);
            directMs = Math.min(directMs, (System.nanoTime() - t1) / 1e6);
          }
          totalFlight += flightMs;
          totalDirect += directMs;
          ObjectNode row = results.addObject();
          row.put("name", q[0]);
          row.put("flight_sql_ms", Math.round(flightMs * 10) / 10.0);
          row.put("duckdb_direct_ms", Math.round(directMs * 10) / 10.0);
          row.put("result_rows", flightRows);
          row.put("cold_flight_sql_ms", Math.round(coldFlightMs * 10) / 10.0);
          row.put("cold_duckdb_direct_ms", Math.round(coldDirectMs * 10) / 10.0);
        }
        out.put("total_flight_sql_ms", Math.round(totalFlight));
        out.put("total_duckdb_direct_ms", Math.round(totalDirect));
        out.put("ratio", Math.round(totalFlight / totalDirect * 100) / 100.0);
        out.put("cold_total_flight_sql_ms", Math.round(coldFlight));
        out.put("cold_total_duckdb_direct_ms", Math.round(coldDirect));
        out.put("cold_ratio", Math.round(coldFlight / coldDirect * 100) / 100.0);

        List<Double> planning = new ArrayList<>();
        sql.execute("SELECT * FROM " + dimSql + " WHERE qty = 7", tenant); // warm-up, not counted
        for (int i = 0; i < 50; i++) {
          long t0 = System.nanoTime();
          sql.execute("SELECT * FROM " + dimSql + " WHERE qty = 7", tenant);
          planning.add((System.nanoTime() - t0) / 1e6);
        }
        planning.sort(Double::compare);
        ObjectNode plan = out.putObject("planning_small_table_ms");
        plan.put("p50", Math.round(planning.get(25) * 10) / 10.0);
        plan.put("p99", Math.round(planning.get(49) * 10) / 10.0);
      }
    }
    System.out.println(Json.toString(out));
  }

  private static void load(ServerEndpoint server, BufferAllocator allocator, String catalogId, Table table,
      long rows, boolean dimension) throws Exception {
    int batch = 100_000;
    try (IngestClient client = IngestClient.connect(server.flightLocation(), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open(catalogId, Arrays.asList(table.name().split("\\.")).subList(1, 2),
            table.name().substring(table.name().lastIndexOf('.') + 1), WalOperation.UPSERT, root.getSchema())) {
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      java.util.Random random = new java.util.Random(42);
      for (long start = 0; start < rows; start += batch) {
        int n = (int) Math.min(batch, rows - start);
        root.allocateNew();
        for (int i = 0; i < n; i++) {
          long id = start + i;
          if (dimension) {
            ((IntVector) root.getVector(0)).setSafe(i, (int) id);
            ((VarCharVector) root.getVector(1)).setSafe(i, ("label" + (id % 10)).getBytes(StandardCharsets.UTF_8));
          } else {
            ((BigIntVector) root.getVector(0)).setSafe(i, id);
            ((IntVector) root.getVector(1)).setSafe(i, random.nextInt(100));
            ((Float8Vector) root.getVector(2)).setSafe(i, random.nextDouble() * 1000);
            ((VarCharVector) root.getVector(3)).setSafe(i, ("c" + random.nextInt(20)).getBytes(StandardCharsets.UTF_8));
          }
        }
        root.setRowCount(n);
        acks.add(stream.send(root));
      }
      stream.finish();
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
    }
  }

  private static void awaitRows(RESTCatalog catalog, TableIdentifier id, long rows) throws InterruptedException {
    long deadline = System.nanoTime() + 600_000_000_000L;
    while (System.nanoTime() < deadline) {
      Table t = catalog.loadTable(id);
      if (t.currentSnapshot() != null
          && Long.parseLong(t.currentSnapshot().summary().getOrDefault("total-records", "0")) >= rows) {
        return;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("table " + id + " did not reach " + rows + " rows in 10 minutes");
  }

  private static String files(Table table) throws Exception {
    List<String> paths = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (!task.deletes().isEmpty()) {
          throw new IllegalStateException("benchmark tables must have no deletes");
        }
        paths.add("'" + URI.create(task.file().location()).getPath() + "'");
      }
    }
    return String.join(",", paths);
  }

  private static HeaderCallOption tenant(String catalogId) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\"}");
    return new HeaderCallOption(headers);
  }

  private static long runFlight(FlightSqlClient sql, String query, HeaderCallOption tenant) throws Exception {
    long rows = 0;
    FlightInfo info = sql.execute(query, tenant);
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), tenant)) {
        while (stream.next()) {
          rows += stream.getRoot().getRowCount();
        }
      }
    }
    return rows;
  }

  private static void runDirect(Connection duck, String query) throws Exception {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        rs.getObject(1);
      }
    }
  }
}

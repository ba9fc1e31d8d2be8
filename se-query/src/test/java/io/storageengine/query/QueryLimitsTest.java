package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.storageengine.duckdb.DuckRuntime;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The limits a shared server needs ({@link QueryLimits}), each through a real Flight SQL server and
 * client: statement size and nesting, DuckDB's own errors, the time limit, tenant admission, result
 * size, one tenant's runaway join next to another's point query, and huge IN lists at once.
 */
class QueryLimitsTest {
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-limits");
    allocator = new RootAllocator();
    warehouse = new TestWarehouse();
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()));
    for (String tenant : List.of("a", "b")) {
      Catalog catalog = warehouse.localCatalog(tenant, dir.resolve(tenant));
      Table table = TestWarehouse.createTable(catalog, "n", "t", schema, PartitionSpec.unpartitioned());
      List<Record> rows = new ArrayList<>();
      for (long i = 0; i < 10_000; i++) {
        rows.add(TestWarehouse.record(schema, i, "name" + i));
      }
      TestWarehouse.append(table, rows);
    }
  }

  @AfterAll
  static void tearDown() throws Exception {
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  /** A Flight SQL server with {@code config}, accepting messages as large as the engine's listener does. */
  static final class LimitedServer implements AutoCloseable {
    final DuckRuntime duckdb;
    final QueryFlightSqlProducer producer;
    final Server server;
    final ExecutorService executor = Executors.newFixedThreadPool(16);
    final FlightClient client;
    final FlightSqlClient sql;

    LimitedServer(QueryConfig config) throws Exception {
      duckdb = DuckRuntime.open(Files.createTempDirectory(dir, "local"), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
      producer = new QueryFlightSqlProducer(allocator, warehouse, duckdb, config);
      server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
          .maxInboundMessageSize(64 << 20)
          .addService(ServerInterceptors.intercept(
              FlightGrpcUtils.createFlightService(allocator, producer, null, new ContextPropagatingExecutorService(executor)),
              new QueryMetadataInterceptor()))
          .build().start();
      client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.getPort())).build();
      sql = new FlightSqlClient(client);
    }

    /** Runs {@code query} as tenant {@code tenant} and returns its row count. */
    long rows(String tenant, String query) throws Exception {
      HeaderCallOption header = header(tenant);
      FlightInfo info = sql.execute(query, header);
      long rows = 0;
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), header)) {
        while (stream.next()) {
          rows += stream.getRoot().getRowCount();
        }
      }
      return rows;
    }

    @Override
    public void close() throws Exception {
      client.close();
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
      executor.shutdownNow();
      producer.close();
      duckdb.close();
    }
  }

  static HeaderCallOption header(String tenant) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + tenant + "\"}");
    return new HeaderCallOption(headers);
  }

  static QueryConfig config(QueryLimits limits) {
    return QueryConfig.defaults().withMemoryLimit("256MB").withThreads(1)
        .withLimits(limits.withTotalMemory(1L << 30));
  }

  static String inList(int values) {
    StringBuilder in = new StringBuilder("SELECT count(*) FROM n.t WHERE id IN (");
    for (int i = 0; i < values; i++) {
      in.append(i == 0 ? "" : ",").append(i * 7L);
    }
    return in.append(')').toString();
  }

  static final String RUNAWAY_JOIN = "SELECT sum(x.range * y.range) FROM range(1000000) x, range(1000000) y";

  @Test
  void hugeAndDeepStatementsGetTheLimitErrorBeforeParsing() throws Exception {
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults()))) {
      String deep = "SELECT " + "(".repeat(201) + "1" + ")".repeat(201);
      assertThatThrownBy(() -> server.rows("a", deep)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
        assertThat(e.getMessage()).contains("statement nests parentheses more than 200 levels deep")
            .contains("--query.max-statement-depth");
      });
      String chain = "SELECT 1" + "+1".repeat(2000);
      assertThatThrownBy(() -> server.rows("a", chain)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
        assertThat(e.getMessage()).contains("nests expressions more deeply than the server allows")
            .contains("--query.max-statement-depth 200").doesNotContain("SET ").doesNotContain("Document nesting");
      });
      String nested = "SELECT 1";
      for (int i = 0; i < 150; i++) {
        nested = "SELECT * FROM (" + nested + ")";
      }
      // 150 nested subqueries are within the limits (DuckDB's JSON tree of them included).
      assertThat(server.rows("a", nested)).isEqualTo(1);
      // Within the limits, parentheses and strings holding them are fine.
      assertThat(server.rows("a", "SELECT " + "(".repeat(150) + "1" + ")".repeat(150) + ", '" + "(".repeat(500) + "'"))
          .isEqualTo(1);
      String huge = inList(200_000);
      long started = System.nanoTime();
      assertThatThrownBy(() -> server.rows("a", huge)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
        assertThat(e.getMessage()).matches("statement is \\d+ bytes, more than the server allows \\(1048576 bytes, "
            + "--query.max-statement-size\\).*");
      });
      System.out.printf("limits: a %d KiB statement refused in %d ms%n", huge.length() / 1024,
          (System.nanoTime() - started) / 1_000_000);
    }
  }

  @Test
  void duckdbErrorsReachTheClientWithTheirMessage() throws Exception {
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults()))) {
      for (String query : List.of("SELECT error('boom')", "SELECT CASE WHEN id = 9000 THEN error('boom') END FROM n.t")) {
        assertThatThrownBy(() -> server.rows("a", query)).as(query)
            .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).isEqualTo("query failed: Invalid Input Error: boom");
            });
      }
      assertThatThrownBy(() -> server.rows("a", "SELECT 'a'::INT")).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.getMessage()).contains("Could not convert string 'a' to INT32"));
      // A prepared statement's execution error arrives with its DoGet, message intact.
      try (FlightSqlClient.PreparedStatement prepared = server.sql.prepare("SELECT error('boom')", header("a"))) {
        assertThatThrownBy(() -> {
          FlightInfo info = prepared.execute(header("a"));
          try (FlightStream stream = server.sql.getStream(info.getEndpoints().get(0).getTicket(), header("a"))) {
            while (stream.next()) {
              // drain
            }
          }
        }).isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.getMessage()).isEqualTo("query failed: Invalid Input Error: boom"));
      }
      // The database stays usable for the tenant's next query.
      assertThat(server.rows("a", "SELECT id FROM n.t WHERE id = 5")).isEqualTo(1);
    }
  }

  @Test
  void aQueryRunningPastTheTimeoutIsStopped() throws Exception {
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults().withTimeout(Duration.ofSeconds(1))))) {
      long started = System.nanoTime();
      assertThatThrownBy(() -> server.rows("a", RUNAWAY_JOIN)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT);
        assertThat(e.getMessage()).isEqualTo("query ran longer than 1s, the server's limit (--query.timeout): it was stopped");
      });
      long ms = (System.nanoTime() - started) / 1_000_000;
      System.out.printf("limits: a runaway join with a 1s timeout failed after %d ms%n", ms);
      assertThat(ms).isLessThan(15_000);
      assertThat(server.producer.engine().admission().running()).isZero();
      // The tenant's next query runs. The 1 s limit applies to it too, and on a machine busy with
      // other work (a parallel test fork, the stopped join's last DuckDB threads) even a point
      // query can take that long: a timed-out attempt is tried again, at most 10 times.
      long rows = -1;
      for (int attempt = 1; rows < 0; attempt++) {
        try {
          rows = server.rows("a", "SELECT id FROM n.t WHERE id = 5");
        } catch (FlightRuntimeException e) {
          if (e.status().code() != FlightStatusCode.TIMED_OUT || attempt == 10) {
            throw e;
          }
        }
      }
      assertThat(rows).isEqualTo(1);
    }
  }

  @Test
  void aTenantBeyondItsConcurrencyAndQueueIsRefused() throws Exception {
    QueryLimits limits = QueryLimits.defaults().withTenantConcurrency(1, 0);
    try (LimitedServer server = new LimitedServer(config(limits))) {
      ExecutorService background = Executors.newSingleThreadExecutor();
      try {
        Future<Long> runaway = background.submit(() -> server.rows("a", RUNAWAY_JOIN));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (server.producer.engine().admission().running() == 0 && System.nanoTime() < deadline) {
          Thread.sleep(10);
        }
        assertThatThrownBy(() -> server.rows("a", "SELECT 1")).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
          assertThat(e.getMessage()).isEqualTo("catalog `a` has 1 queries running and 0 waiting, its limit "
              + "(--query.tenant-concurrency 1, --query.tenant-queue 0): retry when one has finished");
        });
        // Another tenant is not held up.
        assertThat(server.rows("b", "SELECT id FROM n.t WHERE id = 5")).isEqualTo(1);
        runaway.cancel(true);
        server.client.close();
      } finally {
        background.shutdownNow();
      }
    }
  }

  @Test
  void aResultPastTheRowLimitFailsNamingIt() throws Exception {
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults().withResultLimits(20_000, 1L << 30)))) {
      assertThat(server.rows("a", "SELECT * FROM range(20000)")).isEqualTo(20_000);
      assertThatThrownBy(() -> server.rows("a", "SELECT * FROM range(20001)"))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).isEqualTo("result has more than 20000 rows, the server's limit "
                + "(--query.max-result-rows): add a LIMIT or a filter, or aggregate");
          });
    }
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults().withResultLimits(1_000_000, 100_000)))) {
      assertThatThrownBy(() -> server.rows("a", "SELECT * FROM n.t"))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.getMessage())
              .isEqualTo("result is more than 100000 bytes, the server's limit (--query.max-result-bytes): "
                  + "select fewer columns or rows"));
    }
  }

  @Test
  void runawayJoinsOfOneTenantDoNotDelayAnothersPointQuery() throws Exception {
    // The defaults: 2 DuckDB threads per query, one per processor for all queries, and queries
    // running past 1 s demoted (their threads' nice raised).
    QueryConfig config = QueryConfig.defaults();
    try (LimitedServer server = new LimitedServer(config)) {
      String point = "SELECT name FROM n.t WHERE id = 4242";
      for (int i = 0; i < 30; i++) {
        server.rows("b", point);
      }
      long[] one = pointMedians(server, point, 1, 4);
      long[] two = pointMedians(server, point, 2, 2);
      // Each runaway was demoted once, and no point query (about 20 ms each) was, unless a machine
      // busier than its cores held one up for a second.
      double load = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
      if (load <= Runtime.getRuntime().availableProcessors() + 1) {
        assertThat(server.producer.engine().demoted()).as("queries demoted").isEqualTo(4 * 1 + 2 * 2);
      } else {
        assertThat(server.producer.engine().demoted()).as("queries demoted").isGreaterThanOrEqualTo(4 * 1 + 2 * 2);
      }
      assertFair(one, "a runaway join", config);
      assertFair(two, "two runaway joins (the tenant's concurrency)", config);
      if (Boolean.getBoolean("se.limits.compareUndemoted")) {
        // The same without demotion, for the README's comparison; measured on request only.
        QueryConfig undemoted = config.withLimits(config.limits().withDemotion(Duration.ZERO, 10));
        try (LimitedServer plain = new LimitedServer(undemoted)) {
          for (int i = 0; i < 30; i++) {
            plain.rows("b", point);
          }
          report(pointMedians(plain, point, 1, 4), "a runaway join, not demoted", undemoted);
          report(pointMedians(plain, point, 2, 2), "two runaway joins, not demoted", undemoted);
        }
      }
    }
  }

  private static double report(long[] medians, String next, QueryConfig config) {
    double ratio = (double) medians[1] / Math.max(1, medians[0]);
    System.out.printf("limits: point query p50 %d ms alone, %d ms next to %s of another tenant "
        + "(%.2fx, %d cores, query.cpu-threads %d, load average %.1f)%n", medians[0], medians[1], next, ratio,
        Runtime.getRuntime().availableProcessors(), config.limits().cpuThreads(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    return ratio;
  }

  /**
   * The point query's p50 next to the runaways is at most twice its p50 alone. Demotion keeps the
   * server's own cores from them; other processes' load it cannot: the kernel shares the cores
   * between sessions first (autogroup), and the runaways then take part of what this one gets.
   * On a machine busier than its cores the 2x is not asserted (the test is reported skipped,
   * with its numbers).
   */
  private static void assertFair(long[] medians, String next, QueryConfig config) {
    double ratio = report(medians, next, config);
    double load = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    int cores = Runtime.getRuntime().availableProcessors();
    if (medians[1] > 2 * Math.max(1, medians[0])) {
      Assumptions.assumeTrue(load <= cores + 1, String.format("%.2fx next to %s under a load average of %.1f on %d "
          + "cores: other processes take the cores", ratio, next, load, cores));
    }
    assertThat(medians[1]).as("p50 next to %s vs alone (%d ms)", next, medians[0])
        .isLessThanOrEqualTo(2 * Math.max(1, medians[0]));
  }

  /**
   * The medians of tenant b's {@code point} query alone and next to {@code joins} runaway joins of
   * tenant a, sampled in {@code rounds} rounds of both, so that a change of the machine's load
   * during the run weighs on both alike. The loaded samples are taken once the joins are
   * demoted (when the server demotes queries at all).
   */
  static long[] pointMedians(LimitedServer server, String point, int joins, int rounds) throws Exception {
    List<Long> alone = new ArrayList<>();
    List<Long> loaded = new ArrayList<>();
    QueryEngine engine = server.producer.engine();
    for (int round = 0; round < rounds; round++) {
      awaitRunning(server, 0);
      alone.addAll(sampleMillis(server, point, 15));
      long demoted = engine.demoted();
      List<Runaway> runaways = new ArrayList<>();
      try {
        for (int i = 0; i < joins; i++) {
          runaways.add(new Runaway(server));
        }
        awaitRunning(server, joins);
        Thread.sleep(300);
        if (!engine.limits().demoteAfter().isZero()) {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (engine.demoted() < demoted + joins && System.nanoTime() < deadline) {
            Thread.sleep(10);
          }
          assertThat(engine.demoted()).as("runaways demoted").isEqualTo(demoted + joins);
        }
        // Each join holds one thread at least and more only from what was free when it started.
        assertThat(engine.admission().threadsInUse()).as("the runaways' DuckDB threads")
            .isLessThanOrEqualTo(engine.limits().cpuThreads() + joins - 1);
        loaded.addAll(sampleMillis(server, point, 15));
        assertThat(runaways).noneMatch(runaway -> runaway.result.isDone());
      } finally {
        for (Runaway runaway : runaways) {
          runaway.close();
        }
      }
    }
    return new long[] {median(alone), median(loaded)};
  }

  /** Tenant a's runaway join on a client of its own; closing the client cancels it. */
  static final class Runaway implements AutoCloseable {
    final FlightClient client;
    final ExecutorService thread = Executors.newSingleThreadExecutor();
    final Future<Long> result;

    Runaway(LimitedServer server) {
      client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.server.getPort())).build();
      FlightSqlClient sql = new FlightSqlClient(client);
      result = thread.submit(() -> {
        HeaderCallOption header = header("a");
        FlightInfo info = sql.execute(RUNAWAY_JOIN, header);
        long rows = 0;
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), header)) {
          while (stream.next()) {
            rows += stream.getRoot().getRowCount();
          }
        }
        return rows;
      });
    }

    @Override
    public void close() throws Exception {
      client.close();
      thread.shutdownNow();
      thread.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  /** Waits (at most 30 s) until exactly {@code queries} queries run. */
  static void awaitRunning(LimitedServer server, int queries) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (server.producer.engine().admission().running() != queries && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(server.producer.engine().admission().running()).as("queries running").isEqualTo(queries);
  }

  static List<Long> sampleMillis(LimitedServer server, String query, int runs) throws Exception {
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      long started = System.nanoTime();
      assertThat(server.rows("b", query)).isEqualTo(1);
      times.add((System.nanoTime() - started) / 1_000_000);
    }
    return times;
  }

  static long median(List<Long> times) {
    List<Long> sorted = times.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  @Test
  void threeHugeInListsAtOnceAreRefusedAndTheServerStaysUp() throws Exception {
    String in = inList(730_000);
    assertThat(in.length()).isGreaterThan(5_000_000);
    try (LimitedServer server = new LimitedServer(config(QueryLimits.defaults()))) {
      long before = rssMegabytes();
      ExecutorService clients = Executors.newFixedThreadPool(3);
      long started = System.nanoTime();
      List<Future<Long>> results = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        results.add(clients.submit(() -> server.rows("a", in)));
      }
      List<String> outcomes = new ArrayList<>();
      for (Future<Long> result : results) {
        try {
          outcomes.add("rows " + result.get(5, TimeUnit.MINUTES));
        } catch (java.util.concurrent.ExecutionException e) {
          outcomes.add(e.getCause().getMessage());
        }
      }
      long ms = (System.nanoTime() - started) / 1_000_000;
      clients.shutdownNow();
      long after = rssMegabytes();
      System.out.printf("limits: three %d KB IN lists at once refused in %d ms, RSS %d MB before, %d MB after%n",
          in.length() / 1000, ms, before, after);
      assertThat(outcomes).hasSize(3).allSatisfy(outcome -> assertThat(outcome).contains("--query.max-statement-size"));
      // The server stays up and answers.
      assertThat(server.rows("a", "SELECT id FROM n.t WHERE id = 5")).isEqualTo(1);
      assertThat(after - before).isLessThan(1_000);
    }
  }

  static long rssMegabytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
        }
      }
    } catch (java.io.IOException e) {
      // not Linux: no sample
    }
    return 0;
  }
}

package io.storageengine.server;

import com.google.protobuf.Any;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.DoPutUpdateResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Opens many ingest streams at once against a running server and measures stream admission and
 * {@code GET /health} latency while that happens. {@link Mode#NATIVE}: native streams, admission
 * from {@code open} until the server's ack of the header; every stream then sends one batch,
 * waits for its ack and finishes. {@link Mode#BULK}: Flight SQL bulk ingest
 * ({@code CommandStatementIngest}, what ADBC sends) of one batch each, which has no ack before
 * the update count: admission is from the start of the call until the update count, so it
 * includes the group commit window. Either way the run also proves every stream landed, and
 * {@code peak_threads} is the most live threads of this JVM (clients and server) during the
 * burst. {@code load_table_p50_ms} is what loading one
 * table from the catalog costs alone, the catalog's part of an admission. For diagnosis,
 * {@code -Dse.admission.dump=<file>} writes every thread's stack that many milliseconds
 * ({@code -Dse.admission.dump-after-ms}, default 1000) into the burst. Shared by {@link ManyStreamsTest} and
 * {@code bench.StreamAdmissionBenchmark}.
 *
 * <p>Admission is CPU-bound, and on a shared machine the CPU this JVM gets varies from run to
 * run, so a result also tells what the burst cost and what it ran against: {@code cpu_s}, the
 * CPU time of this JVM (clients and server) from the start of the burst until every stream
 * landed; {@code jit_s}, the time the JIT compiler threads spent compiling meanwhile (elapsed,
 * summed over those threads; high on the first burst of a fresh JVM); and the machine's
 * one-minute {@code load_average} at the end.
 */
final class StreamAdmission {
  /** Which ingest path the streams take. */
  enum Mode { NATIVE, BULK }

  /** What one run measured; latencies in milliseconds. */
  record Result(Mode mode, int streams, int tables, int clients, int landed, double admissionP50,
      double admissionP99, double admissionMax, int healthProbes, double healthP50,
      double healthP99, double healthMax, int healthFailures, double wallSeconds,
      double loadTableP50, double cpuSeconds, double jitSeconds, double loadAverage, int peakThreads) {
    String json() {
      return String.format(Locale.ROOT, "{\"mode\":\"%s\",\"streams\":%d,\"tables\":%d,\"clients\":%d,\"landed\":%d,"
          + "\"admission_ms\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},"
          + "\"health_ms\":{\"probes\":%d,\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"failures\":%d},"
          + "\"wall_s\":%.1f,\"load_table_p50_ms\":%.1f,\"cpu_s\":%.2f,\"jit_s\":%.2f,"
          + "\"load_average\":%.1f,\"peak_threads\":%d}", mode.name().toLowerCase(Locale.ROOT), streams, tables, clients, landed,
          admissionP50, admissionP99, admissionMax, healthProbes, healthP50, healthP99, healthMax,
          healthFailures, wallSeconds, loadTableP50, cpuSeconds, jitSeconds, loadAverage, peakThreads);
    }
  }

  private StreamAdmission() {}

  /** Creates {@code tables} append tables {@code load.t<i>} (id bigint) in {@code catalog}. */
  static List<TableIdentifier> createTables(Catalog catalog, int tables) {
    List<TableIdentifier> ids = new ArrayList<>();
    for (int i = 0; i < tables; i++) {
      TableIdentifier id = TableIdentifier.parse("load.t" + i);
      Tables.create(catalog, id, TableDefinition.builder("id bigint not null").build());
      ids.add(id);
    }
    return ids;
  }

  /** Native streams, see {@link #run(Mode, int, Catalog, String, List, int, int)}. */
  static Result run(int port, Catalog catalog, String catalogId, List<TableIdentifier> tables,
      int streams, int clients) throws Exception {
    return run(Mode.NATIVE, port, catalog, catalogId, tables, streams, clients);
  }

  /** Opens {@code streams} streams at once over {@code clients} connections, spread over the tables. */
  static Result run(Mode mode, int port, Catalog catalog, String catalogId,
      List<TableIdentifier> tables, int streams, int clients) throws Exception {
    return run(mode, port, catalog, catalogId, tables, streams, clients, () -> { }, () -> { });
  }

  /**
   * As {@link #run(Mode, int, Catalog, String, List, int, int)}; {@code burstStarted} runs just
   * before the streams are let go and {@code burstEnded} once every stream landed, so a caller
   * can measure a server over the burst alone (not the table loads and connection warm-up
   * before it).
   */
  static Result run(Mode mode, int port, Catalog catalog, String catalogId,
      List<TableIdentifier> tables, int streams, int clients, Runnable burstStarted,
      Runnable burstEnded) throws Exception {
    Schema schema = IcebergArrowSchemas.toArrow(catalog.loadTable(tables.get(0)).schema());
    // What one admission costs the catalog, alone: a table load.
    List<Double> loads = new ArrayList<>();
    for (TableIdentifier table : tables) {
      long started = System.nanoTime();
      catalog.loadTable(table);
      loads.add((System.nanoTime() - started) / 1e6);
    }
    Collections.sort(loads);
    double loadTableP50 = pct(loads, 0.5);
    Location location = Location.forGrpcInsecure("127.0.0.1", port);
    List<Double> admissions = Collections.synchronizedList(new ArrayList<>());
    List<Double> health = Collections.synchronizedList(new ArrayList<>());
    int[] healthFailures = new int[1];
    AtomicBoolean done = new AtomicBoolean();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    Thread prober = new Thread(() -> {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
          .timeout(Duration.ofSeconds(10)).build();
      while (!done.get()) {
        long started = System.nanoTime();
        try {
          HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
          if (response.statusCode() != 200) {
            healthFailures[0]++;
          }
          health.add((System.nanoTime() - started) / 1e6);
        } catch (InterruptedException e) {
          return; // the run is over
        } catch (Exception e) {
          if (done.get()) {
            return;
          }
          healthFailures[0]++;
          health.add((System.nanoTime() - started) / 1e6);
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "health-prober");
    long wallStarted;
    long cpuStarted;
    long jitStarted;
    int landed = 0;
    Map<Long, ThreadCpu> cpuByThread;
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (BufferAllocator allocator = new RootAllocator()) {
      List<FlightClient> connections = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        connections.add(FlightClient.builder(allocator, location).build());
      }
      ExecutorService pool = Executors.newFixedThreadPool(streams);
      try {
        CountDownLatch start = new CountDownLatch(1);
        // Warm-up (not measured): every connection is established and the server's code paths
        // are loaded, as on a server that has been running; the burst then measures admission.
        for (int i = 0; i < connections.size(); i++) {
          land(mode, connections.get(i), catalogId, tables.get(i % tables.size()), schema,
              allocator, -1 - i, null);
        }
        prober.start();
        List<Future<Boolean>> results = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
          int n = i;
          results.add(pool.submit(() -> {
            start.await();
            land(mode, connections.get(n % connections.size()), catalogId,
                tables.get(n % tables.size()), schema, allocator, n, admissions);
            return true;
          }));
        }
        burstStarted.run();
        threads.resetPeakThreadCount();
        cpuByThread = threadCpu(threads);
        wallStarted = System.nanoTime();
        cpuStarted = processCpuNanos();
        jitStarted = jitMillis();
        start.countDown();
        String dump = System.getProperty("se.admission.dump");
        if (dump != null) {
          Thread.sleep(Long.getLong("se.admission.dump-after-ms", 1000));
          StringBuilder text = new StringBuilder();
          Thread.getAllStackTraces().forEach((t, stack) -> {
            text.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
            for (StackTraceElement e : stack) {
              text.append("\tat ").append(e).append('\n');
            }
            text.append('\n');
          });
          java.nio.file.Files.writeString(java.nio.file.Path.of(dump), text);
        }
        for (Future<Boolean> f : results) {
          if (f.get(10, TimeUnit.MINUTES)) {
            landed++;
          }
        }
        burstEnded.run();
      } finally {
        done.set(true);
        prober.interrupt();
        prober.join();
        pool.shutdownNow();
        for (FlightClient c : connections) {
          c.close();
        }
      }
    }
    int peakThreads = threads.getPeakThreadCount();
    if (Boolean.getBoolean("se.admission.cpu-by-thread")) {
      System.out.println(cpuByThreadGroup(cpuByThread, threadCpu(threads)));
    }
    double wall = (System.nanoTime() - wallStarted) / 1e9;
    double cpu = (processCpuNanos() - cpuStarted) / 1e9;
    double jit = (jitMillis() - jitStarted) / 1e3;
    List<Double> a = sorted(admissions);
    List<Double> h = sorted(health);
    return new Result(mode, streams, tables.size(), clients, landed, pct(a, 0.5), pct(a, 0.99),
        pct(a, 1.0), h.size(), pct(h, 0.5), pct(h, 0.99), pct(h, 1.0), healthFailures[0], wall,
        loadTableP50, cpu, jit,
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), peakThreads);
  }

  private static void land(Mode mode, FlightClient client, String catalogId,
      TableIdentifier table, Schema schema, BufferAllocator allocator, long id,
      List<Double> admissions) throws Exception {
    if (mode == Mode.NATIVE) {
      landStream(new IngestClient(client, allocator), catalogId, table, schema, allocator, id,
          admissions);
    } else {
      landBulk(client, catalogId, table, schema, allocator, id, admissions);
    }
  }

  /**
   * One bulk ingest of one row, as {@code FlightSqlClient.executeIngest} sends it; records the
   * time until its update count. Parks while the call is not ready instead of letting Flight's
   * {@code putNext} busy-spin (as {@code IngestStream} does): 500 spinning client threads in this
   * JVM would measure the clients' CPU, not the server's admission.
   */
  private static void landBulk(FlightClient client, String catalogId, TableIdentifier table,
      Schema schema, BufferAllocator allocator, long id, List<Double> admissions)
      throws Exception {
    FlightDescriptor descriptor = FlightDescriptor.command(Any.pack(
        CommandStatementIngest.newBuilder().setCatalog(catalogId)
            .setSchema(String.join(".", table.namespace().levels())).setTable(table.name())
            .setTableDefinitionOptions(TableDefinitionOptions.newBuilder()
                .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL)
                .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND))
            .build()).toByteArray());
    try (VectorSchemaRoot root = oneRow(schema, allocator, id);
        SyncPutListener result = new SyncPutListener()) {
      long started = System.nanoTime();
      FlightClient.ClientStreamListener put = client.startPut(descriptor, root, result);
      long park = 20_000;
      while (!put.isReady()) {
        LockSupport.parkNanos(park);
        park = Math.min(5_000_000, park * 2);
      }
      put.putNext();
      put.completed();
      put.getResult();
      long count;
      try (PutResult answer = result.read()) {
        ArrowBuf metadata = answer.getApplicationMetadata();
        byte[] bytes = new byte[(int) metadata.readableBytes()];
        metadata.getBytes(0, bytes);
        count = DoPutUpdateResult.parseFrom(bytes).getRecordCount();
      }
      if (admissions != null) {
        admissions.add((System.nanoTime() - started) / 1e6);
      }
      if (count != 1) {
        throw new AssertionError("bulk ingest of one row answered " + count);
      }
    }
  }

  private static VectorSchemaRoot oneRow(Schema schema, BufferAllocator allocator, long id) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    BigIntVector column = (BigIntVector) root.getVector(0);
    column.allocateNew(1);
    column.set(0, id);
    root.setRowCount(1);
    return root;
  }

  /** Opens a stream, records its admission time (when {@code admissions} is given), lands one row. */
  private static void landStream(IngestClient client, String catalogId, TableIdentifier table,
      Schema schema, BufferAllocator allocator, long id, List<Double> admissions) throws Exception {
    long opened = System.nanoTime();
    try (IngestStream stream = client.open(catalogId, List.of(table.namespace().levels()),
        table.name(), WalOperation.UPSERT, schema);
        VectorSchemaRoot root = oneRow(schema, allocator, id)) {
      if (admissions != null) {
        admissions.add((System.nanoTime() - opened) / 1e6);
      }
      stream.send(root).get(5, TimeUnit.MINUTES);
      stream.finish();
    }
  }

  private record ThreadCpu(String name, long nanos) {}

  /** CPU time of every live thread so far. */
  private static Map<Long, ThreadCpu> threadCpu(ThreadMXBean threads) {
    Map<Long, ThreadCpu> cpu = new HashMap<>();
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null) {
        long nanos = threads.getThreadCpuTime(info.getThreadId());
        if (nanos >= 0) {
          cpu.put(info.getThreadId(), new ThreadCpu(info.getThreadName(), nanos));
        }
      }
    }
    return cpu;
  }

  /**
   * {@code -Dse.admission.cpu-by-thread=true}: the burst's CPU seconds per thread group (names
   * without their numbers), highest first, as one JSON line; threads that ended during the burst
   * are missing.
   */
  private static String cpuByThreadGroup(Map<Long, ThreadCpu> before, Map<Long, ThreadCpu> after) {
    Map<String, Double> groups = new HashMap<>();
    after.forEach((id, cpu) -> {
      ThreadCpu started = before.get(id);
      double seconds = (cpu.nanos() - (started == null ? 0 : started.nanos())) / 1e9;
      groups.merge(cpu.name().replaceAll("[0-9]+", "N"), seconds, Double::sum);
    });
    StringBuilder json = new StringBuilder("{\"cpu_s_by_thread\":{");
    groups.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .filter(e -> e.getValue() >= 0.01)
        .forEach(e -> json.append(String.format(Locale.ROOT, "\"%s\":%.2f,", e.getKey(),
            e.getValue())));
    if (json.charAt(json.length() - 1) == ',') {
      json.setLength(json.length() - 1);
    }
    return json.append("}}").toString();
  }

  /** CPU time of this JVM so far; -1 where the platform does not tell. */
  private static long processCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
  }

  /** Time the JIT compilers spent so far (milliseconds, summed over compiler threads). */
  private static long jitMillis() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported()
        ? jit.getTotalCompilationTime() : 0;
  }

  private static List<Double> sorted(List<Double> values) {
    List<Double> copy;
    synchronized (values) {
      copy = new ArrayList<>(values);
    }
    Collections.sort(copy);
    return copy;
  }

  private static double pct(List<Double> sorted, double p) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int index = (int) Math.ceil(p * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }
}

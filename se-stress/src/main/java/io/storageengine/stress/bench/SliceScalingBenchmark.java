package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.Tables;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.stress.DevProcess;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * How the reconcile of one sliced entity table scales with the number of workers, each a
 * separate process, printed as one JSON object.
 *
 * <p>One cluster on a local cluster storage directory: {@code ./se start broker}, one
 * {@code ./se start server} (which writes the WAL and schedules the per-slice reconcile tasks) and,
 * for each count of {@code --workers} (default {@code 1,2,4}), that many
 * {@code ./se start worker --concurrency 1} processes. For each count: a new table with
 * {@code --slices} slices (default 4; maintenance off, so nothing but the slices' passes runs) is
 * loaded with {@code --keys} rows (default 1 M) through the native ingest, which the workers
 * reconcile. Once it is published and the broker's queue is empty, the workers are paused
 * ({@code SIGSTOP}), {@code --batches} batches of {@code --batch} rows (default 5 of 200 k; half
 * updates of random existing keys, half new keys; the rows of {@link EntityRows}) are ingested
 * and acknowledged, and the workers resumed ({@code SIGCONT}): the measured part is from the
 * resume until the WAL's {@code published_seq} reaches the last segment, so it is the workers'
 * merge of the upserts alone, not the ingest. Each worker's CPU time (user + system, from
 * {@code /proc/<pid>/stat}) is read before the resume and at the end. The report per count:
 * wall seconds, rows/s, each worker's CPU-seconds and CPU-seconds per million rows merged, their
 * sum, and the load phase's wall seconds; with the load average at the start and end.
 *
 * <p>Arguments: {@code --launcher} (default {@code ./se}, whose engine must be built:
 * {@code SE_SKIP_BUILD=1} is set), {@code --worker-heap} (default 1g), {@code --work-dir}
 * (default a temporary directory, deleted at the end unless {@code --keep true}).
 */
public final class SliceScalingBenchmark {
  private static final String CATALOG = "warehouse";
  private static final int SEND_ROWS = 50_000;
  private static final Duration TIMEOUT = Duration.ofMinutes(20);
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String TOKEN = HexFormat.of().formatHex(random32());
  private static final String SECRET_KEY = HexFormat.of().formatHex(random32());
  private static final long CLOCK_TICKS = clockTicks();

  private final Path launcher;
  private final Path work;
  private final Path store;
  private final String workerHeap;
  private final List<DevProcess> processes = new ArrayList<>();
  private int serverPort;
  private int brokerPort;

  private SliceScalingBenchmark(Path launcher, Path work, String workerHeap) {
    this.launcher = launcher;
    this.work = work;
    this.store = work.resolve("store");
    this.workerHeap = workerHeap;
  }

  public static void main(String[] args) throws Exception {
    BenchArgs opts = BenchArgs.parse(args);
    List<Long> workerCounts = opts.longs("workers", "1,2,4");
    int slices = opts.intValue("slices", 4);
    long keys = opts.longValue("keys", 1_000_000);
    int batch = opts.intValue("batch", 200_000);
    int batches = opts.intValue("batches", 5);
    boolean keep = Boolean.parseBoolean(opts.string("keep", "false"));
    String workDir = opts.string("work-dir", null);
    Path work = workDir == null ? Files.createTempDirectory("se-slice-scaling-") : Files.createDirectories(Path.of(workDir));
    SliceScalingBenchmark bench = new SliceScalingBenchmark(Path.of(opts.string("launcher", "./se")).toAbsolutePath(),
        work, opts.string("worker-heap", "1g"));

    ObjectNode out = Json.object();
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("slices", slices);
    out.put("keys", keys);
    out.put("batch_rows", batch);
    out.put("batches", batches);
    out.put("load_average_start", loadAverage());
    Thread reaper = new Thread(bench::killAll, "slice-scaling-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
    try (BufferAllocator allocator = new RootAllocator()) {
      bench.startCluster();
      ArrayNode runs = out.putArray("runs");
      for (long n : workerCounts) {
        runs.add(bench.run(allocator, Math.toIntExact(n), slices, keys, batch, batches));
      }
    } finally {
      bench.killAll();
      Runtime.getRuntime().removeShutdownHook(reaper);
      if (!keep) {
        BenchFixtures.deleteRecursively(work);
      }
    }
    out.put("load_average_end", loadAverage());
    if (keep) {
      out.put("work_dir", work.toString());
    }
    System.out.println(Json.toString(out));
  }

  private void startCluster() throws Exception {
    brokerPort = DevProcess.freePort();
    DevProcess broker = role("broker", brokerPort, List.of("start", "broker",
        "--server.address", "127.0.0.1:" + brokerPort), "-Xmx512m");
    serverPort = DevProcess.freePort();
    DevProcess server = role("server", serverPort, List.of("start", "server",
        "--server.address", "127.0.0.1:" + serverPort), "-Xmx2g");
    broker.awaitHealthy(Duration.ofMinutes(3));
    server.awaitHealthy(Duration.ofMinutes(3));
    HttpRequest request = HttpRequest.newBuilder(URI.create(base() + "/catalogs"))
        .header("Authorization", "Bearer " + TOKEN).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"catalog_id\":\"" + CATALOG + "\",\"config\":{\"type\":\"embedded\"}}"))
        .build();
    HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 201) {
      throw new SeException(ErrorCode.INTERNAL, "creating catalog " + CATALOG + ": HTTP "
          + response.statusCode() + " " + response.body());
    }
  }

  private DevProcess role(String name, int port, List<String> args, String heap) throws IOException {
    List<String> all = new ArrayList<>(args);
    all.addAll(List.of("--data-dir", work.resolve(name).toString(), "--object-store.root", store.toString()));
    DevProcess p = DevProcess.startRole(launcher, name, all, port, work.resolve(name + ".log"), heap,
        Map.of("SE_SECRET_STORE_KEY", SECRET_KEY, "SE_AUTH_BOOTSTRAP_TOKEN", TOKEN));
    processes.add(p);
    return p;
  }

  private ObjectNode run(BufferAllocator allocator, int workerCount, int slices, long keys, int batch,
      int batches) throws Exception {
    System.err.printf("slice-scaling: %d worker(s)%n", workerCount);
    List<DevProcess> workers = new ArrayList<>();
    for (int i = 0; i < workerCount; i++) {
      workers.add(role("worker-" + workerCount + "-" + i, 0, List.of("start", "worker", "--concurrency", "1"), "-Xmx" + workerHeap));
    }
    String name = "entity_w" + workerCount;
    Table table;
    try (RESTCatalog catalog = restCatalog()) {
      table = Tables.create(catalog, TableIdentifier.of("bench", name),
          TableDefinition.builder("id bigint not null, ts timestamp not null, v int, s string")
              .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("ts")
              .property(TableProperties.SLICE_COUNT, Integer.toString(slices))
              .property("se.maintenance.enabled", "false")
              .build());
    }
    TableWal tw = new TableWal(CATALOG, table.uuid());
    ObjectStoreWal wal = new ObjectStoreWal(new FsObjectStore(store), "slice-scaling-probe");
    Schema arrow = IcebergArrowSchemas.toArrow(table.schema());
    ObjectNode n = Json.object();
    n.put("workers", workerCount);
    n.put("worker_pids", workers.stream().map(w -> Long.toString(w.pid())).reduce((a, b) -> a + "," + b).orElse(""));
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", serverPort), allocator, TOKEN)) {
      long loadStart = System.nanoTime();
      ingest(client, allocator, name, arrow, 0, keys, id -> id, 1);
      awaitPublished(wal, tw);
      n.put("load_seconds", round((System.nanoTime() - loadStart) / 1e9));
      awaitQueueEmpty();

      for (DevProcess w : workers) {
        signal(w.pid(), "STOP");
      }
      Random rnd = new Random(keys);
      long half = batch / 2;
      long nextNew = keys;
      for (int b = 0; b < batches; b++) {
        long[] updated = new long[(int) half];
        for (int i = 0; i < half; i++) {
          updated[i] = (long) (rnd.nextDouble() * keys);
        }
        ingest(client, allocator, name, arrow, 0, half, i -> updated[(int) i], 2 + b);
        ingest(client, allocator, name, arrow, nextNew, half, id -> id, 2 + b);
        nextNew += half;
      }
      long[] cpuBefore = workers.stream().mapToLong(w -> cpuTicks(w.pid())).toArray();
      double loadAverageBefore = loadAverage();
      long start = System.nanoTime();
      for (DevProcess w : workers) {
        signal(w.pid(), "CONT");
      }
      awaitPublished(wal, tw);
      double seconds = (System.nanoTime() - start) / 1e9;
      long[] cpuAfter = workers.stream().mapToLong(w -> cpuTicks(w.pid())).toArray();
      long rows = half * 2 * batches;
      n.put("rows_merged", rows);
      n.put("seconds", round(seconds));
      n.put("rows_per_second", Math.round(rows / seconds));
      ArrayNode cpu = n.putArray("worker_cpu_seconds");
      ArrayNode perMillion = n.putArray("worker_cpu_seconds_per_million_rows");
      double total = 0;
      for (int i = 0; i < workers.size(); i++) {
        double s = (cpuAfter[i] - cpuBefore[i]) / (double) CLOCK_TICKS;
        total += s;
        cpu.add(round(s));
        perMillion.add(round(s / (rows / 1e6)));
      }
      n.put("cpu_seconds", round(total));
      n.put("cpu_seconds_per_million_rows", round(total / (rows / 1e6)));
      n.put("load_average_before", loadAverageBefore);
      n.put("load_average_after", loadAverage());
    } finally {
      for (DevProcess w : workers) {
        signal(w.pid(), "CONT");
        w.close();
        processes.remove(w);
      }
    }
    return n;
  }

  /** Ingests {@code count} rows with keys {@code key(first..)} at {@code version}; returns once all are acknowledged. */
  private static void ingest(IngestClient client, BufferAllocator allocator, String table, Schema schema,
      long first, long count, LongUnaryOperator key, long version) throws Exception {
    try (IngestStream stream = client.open(CATALOG, List.of("bench"), table, WalOperation.UPSERT, schema);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      for (long from = first; from < first + count; from += SEND_ROWS) {
        int rows = (int) Math.min(SEND_ROWS, first + count - from);
        EntityRows.fill(root, from, rows, key, version);
        stream.send(root);
      }
      stream.finish();
    }
  }

  /** Waits until {@code published_seq} reaches the table's last WAL segment. */
  private static void awaitPublished(ObjectStoreWal wal, TableWal tw) throws InterruptedException {
    List<Long> segments = wal.segmentsAfter(tw, 0);
    if (segments.isEmpty()) {
      throw new SeException(ErrorCode.INTERNAL, "no WAL segment of " + tw + " in the cluster storage");
    }
    long last = segments.stream().mapToLong(Long::longValue).max().getAsLong();
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (wal.state(tw).publishedSeq() < last) {
      if (System.nanoTime() > deadline) {
        throw new SeException(ErrorCode.TIMED_OUT, "WAL of " + tw + " not published up to " + last + " within " + TIMEOUT);
      }
      Thread.sleep(50);
    }
  }

  /** Waits until the broker holds no task (no reconcile or maintenance lease a paused worker could sit on). */
  private void awaitQueueEmpty() throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + brokerPort + "/broker/v1/tasks"))
        .header("Authorization", "Bearer " + TOKEN).GET().build();
    while (true) {
      HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new SeException(ErrorCode.INTERNAL, "broker tasks: HTTP " + response.statusCode() + " " + response.body());
      }
      JsonNode tasks = Json.MAPPER.readTree(response.body()).path("tasks");
      if (tasks.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new SeException(ErrorCode.TIMED_OUT, "the broker's queue did not empty: " + tasks);
      }
      Thread.sleep(200);
    }
  }

  private RESTCatalog restCatalog() {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    catalog.initialize(CATALOG, Map.of("uri", base() + "/catalogs/" + CATALOG,
        "rest-metrics-reporting-enabled", "false", "token", TOKEN));
    return catalog;
  }

  private String base() {
    return "http://127.0.0.1:" + serverPort;
  }

  private void killAll() {
    for (DevProcess p : List.copyOf(processes)) {
      signal(p.pid(), "CONT");
      try {
        p.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    processes.clear();
  }

  /** {@code kill -<sig> pid} for a process this benchmark started. */
  private static void signal(long pid, String sig) {
    try {
      Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
      p.waitFor();
    } catch (IOException e) {
      throw new SeException(ErrorCode.INTERNAL, "kill -" + sig + " " + pid + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** utime + stime of {@code pid} in clock ticks, from {@code /proc/<pid>/stat}. */
  static long cpuTicks(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // Fields after the command name (which may hold spaces) start at field 3 (state).
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    } catch (IOException e) {
      throw new SeException(ErrorCode.INTERNAL, "reading /proc/" + pid + "/stat failed", e);
    }
  }

  private static long clockTicks() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
      String text = new String(p.getInputStream().readAllBytes()).strip();
      p.waitFor();
      return Long.parseLong(text);
    } catch (IOException | NumberFormatException e) {
      return 100;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 100;
    }
  }

  private static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException e) {
      return -1;
    }
  }

  private static byte[] random32() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return key;
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}

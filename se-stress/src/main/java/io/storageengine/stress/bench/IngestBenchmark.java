package io.storageengine.stress.bench;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.ingest.IngestFlightProducer;
import io.storageengine.ingest.IngestService;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;

/**
 * Whole-system ingestion benchmark: an in-process Flight server (127.0.0.1, port 0) with the
 * ingest service over a real {@link FsObjectStore} in a temporary directory and an
 * {@link InMemoryCatalog} table; N concurrent native streams send batches for a fixed time.
 * Prints one JSON object: Arrow payload MB/s (buffer bytes of the batches sent), rows/s, ack
 * latency p50/p99/max (from a batch handed to gRPC until its ack), the duration of the group
 * commits (WAL appends) and, measured apart before the load, what the store alone costs for one
 * segment-sized blob (write, fsync, putIfAbsent).
 *
 * <p>Without a rate every stream keeps its 32 unacknowledged batches in flight, so by Little's
 * law the ack latency is about (in-flight bytes / throughput); with {@code rate-mb-per-s} the
 * streams send at that total rate (open loop), which shows the latency at a given load.
 *
 * <p>The first {@code warmup-seconds} run the same load but are left out of every number (JIT
 * compilation and connection set-up otherwise dominate the p99 of a short run).
 *
 * <p>Options ({@code --name value}): {@code seconds} (10, measured), {@code warmup-seconds} (5),
 * {@code streams} (4),
 * {@code batch-rows} (8192, about 1 MiB), {@code flush-interval-ms} (1000),
 * {@code flush-bytes} (64 MiB), {@code rate-mb-per-s} (0: as fast as possible),
 * {@code object-store} ({@code fs}, or {@code memory} to leave storage out),
 * {@code store-probe} ({@code true} for fs), {@code dir} (a new temporary directory, deleted
 * afterwards). {@code segments} and {@code segment_write_ms} include the warm-up.
 * Needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED}. Logs go to stderr at WARN (the
 * module's {@code logback.xml}), so stdout carries only the JSON.
 */
public final class IngestBenchmark {
  private static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("at", FieldType.nullable(new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")), null),
      new Field("value", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), null),
      new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  private IngestBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = parse(args);
    int seconds = Integer.parseInt(options.getOrDefault("seconds", "10"));
    int warmupSeconds = Integer.parseInt(options.getOrDefault("warmup-seconds", "5"));
    int streams = Integer.parseInt(options.getOrDefault("streams", "4"));
    int batchRows = Integer.parseInt(options.getOrDefault("batch-rows", "8192"));
    long flushIntervalMs = Long.parseLong(options.getOrDefault("flush-interval-ms", "1000"));
    long flushBytes = Long.parseLong(options.getOrDefault("flush-bytes",
        Long.toString(IngestConfig.DEFAULT_FLUSH_BYTES)));
    double rateMbPerSecond = Double.parseDouble(options.getOrDefault("rate-mb-per-s", "0"));
    String storeType = options.getOrDefault("object-store", "fs");
    boolean probe = Boolean.parseBoolean(
        options.getOrDefault("store-probe", Boolean.toString(storeType.equals("fs"))));
    boolean tempDir = !options.containsKey("dir");
    Path dir = tempDir ? Files.createTempDirectory("se-ingest-bench")
        : Files.createDirectories(Path.of(options.get("dir")));
    try {
      IngestConfig config = IngestConfig.defaults()
          .withFlushInterval(Duration.ofMillis(flushIntervalMs)).withFlushBytes(flushBytes);
      Map<String, Object> result = run(storeType, dir, probe, warmupSeconds, seconds, streams,
          batchRows, rateMbPerSecond, config);
      System.out.println(Json.toString(result));
    } finally {
      if (tempDir) {
        deleteRecursively(dir);
      }
    }
  }

  private static Map<String, Object> run(String storeType, Path dir, boolean probe,
      int warmupSeconds, int seconds, int streams, int batchRows, double rateMbPerSecond,
      IngestConfig config) throws Exception {
    AtomicLong segments = new AtomicLong();
    InMemoryCatalog catalog = new InMemoryCatalog();
    catalog.initialize("bench", Map.of());
    catalog.createNamespace(Namespace.of("bench"));
    catalog.createTable(TableIdentifier.of("bench", "events"), new org.apache.iceberg.Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "at", Types.TimestampType.withZone()),
        Types.NestedField.optional(3, "value", Types.DoubleType.get()),
        Types.NestedField.optional(4, "name", Types.StringType.get())));
    try (BufferAllocator allocator = new RootAllocator();
        ObjectStore store = storeType.equals("memory") ? new MemoryObjectStore()
            : new FsObjectStore(dir)) {
      Map<String, Object> storeProbe = probe
          ? StoreProbe.run(store, dir, (int) Math.min(config.flushBytes(), 64L << 20)) : null;
      TimedWalWriter wal = new TimedWalWriter(new ObjectStoreWal(store, "bench"));
      BufferAllocator serverAllocator = allocator.newChildAllocator("server", 0, Long.MAX_VALUE);
      IngestService service = new IngestService(serverAllocator,
          id -> {
            if (!id.equals("bench")) {
              throw SeException.notFound("catalog `%s` not found", id);
            }
            return catalog;
          }, wal, config, (table, seq, rows, bytes) -> segments.incrementAndGet());
      ExecutorService flightExecutor = Executors.newCachedThreadPool();
      Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
          .maxInboundMessageSize(256 << 20)
          .addService(service.flightService(allocator, new IngestFlightProducer(), flightExecutor))
          .build().start();
      Location location = Location.forGrpcInsecure("127.0.0.1", server.getPort());
      ExecutorService pool = Executors.newFixedThreadPool(streams);
      List<Future<StreamResult>> futures = new ArrayList<>();
      long start = System.nanoTime() + Duration.ofSeconds(warmupSeconds).toNanos();
      long deadline = start + Duration.ofSeconds(seconds).toNanos();
      for (int s = 0; s < streams; s++) {
        int streamIndex = s;
        futures.add(pool.submit(() -> stream(allocator, location, streamIndex, batchRows,
            rateMbPerSecond / streams, start, deadline)));
      }
      List<StreamResult> results = new ArrayList<>();
      for (Future<StreamResult> f : futures) {
        results.add(f.get());
      }
      double elapsed = (System.nanoTime() - start) / 1e9;
      pool.shutdown();
      server.shutdown();
      server.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
      server.shutdownNow();
      flightExecutor.shutdownNow();
      service.close();
      serverAllocator.close();

      long batches = 0;
      long rows = 0;
      long bytes = 0;
      List<Long> latencies = new ArrayList<>();
      for (StreamResult r : results) {
        batches += r.batches;
        rows += r.rows;
        bytes += r.bytes;
        latencies.addAll(r.latenciesNanos);
      }
      long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("streams", streams);
      out.put("seconds", Math.round(elapsed * 100) / 100.0);
      out.put("batch_rows", batchRows);
      out.put("batch_bytes", batches == 0 ? 0 : bytes / batches);
      out.put("batches", batches);
      out.put("rows", rows);
      out.put("segments", segments.get());
      if (rateMbPerSecond > 0) {
        out.put("target_mb_per_s", rateMbPerSecond);
      }
      out.put("mb_per_s", round(bytes / 1e6 / elapsed));
      out.put("rows_per_s", Math.round(rows / elapsed));
      Map<String, Object> latency = new LinkedHashMap<>();
      latency.put("p50", millis(percentile(sorted, 0.50)));
      latency.put("p99", millis(percentile(sorted, 0.99)));
      latency.put("max", millis(sorted.length == 0 ? 0 : sorted[sorted.length - 1]));
      out.put("ack_latency_ms", latency);
      long[] appends = wal.sortedNanos();
      Map<String, Object> commits = new LinkedHashMap<>();
      commits.put("mean_mb", round(wal.meanBytes() / 1e6));
      commits.put("p50", millis(percentile(appends, 0.50)));
      commits.put("p99", millis(percentile(appends, 0.99)));
      commits.put("max", millis(appends.length == 0 ? 0 : appends[appends.length - 1]));
      out.put("segment_write_ms", commits);
      if (storeProbe != null) {
        out.put("store_probe", storeProbe);
      }
      out.put("flush_interval_ms", config.flushInterval().toMillis());
      out.put("flush_bytes", config.flushBytes());
      out.put("object_store", store.describe());
      return out;
    }
  }

  /** What one stream did. */
  private record StreamResult(long batches, long rows, long bytes, List<Long> latenciesNanos) {}

  private static StreamResult stream(BufferAllocator parent, Location location, int index,
      int batchRows, double rateMbPerSecond, long measureFrom, long deadline) throws Exception {
    List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
    long batches = 0;
    long bytes = 0;
    try (BufferAllocator allocator = parent.newChildAllocator("client-" + index, 0, Long.MAX_VALUE);
        IngestClient client = IngestClient.connect(location, allocator);
        VectorSchemaRoot batch = batch(allocator, index, batchRows);
        IngestStream stream = client.open("bench", List.of("bench"), "events",
            WalOperation.UPSERT, SCHEMA)) {
      long batchBytes = 0;
      for (FieldVector v : batch.getFieldVectors()) {
        batchBytes += v.getBufferSize();
      }
      // Open loop at a set rate: batch i is due at start + i * period; a batch that could not go
      // out on time (all 32 slots taken) goes as soon as it can, so the offered load stays put.
      long period = rateMbPerSecond > 0 ? (long) (batchBytes / (rateMbPerSecond * 1e6) * 1e9) : 0;
      long nextDue = System.nanoTime();
      List<CompletableFuture<Long>> pending = new ArrayList<>();
      while (System.nanoTime() < deadline) {
        if (period > 0) {
          long wait = nextDue - System.nanoTime();
          if (wait > 0) {
            LockSupport.parkNanos(wait);
          }
          nextDue += period;
        }
        // Latency counts from the batch handed to gRPC to its ack, not the time send() waited
        // for one of the client's 32 in-flight slots.
        CompletableFuture<Long> ack = stream.send(batch);
        long sentAt = System.nanoTime();
        pending.add(ack);
        if (sentAt - measureFrom >= 0) {
          ack.thenRun(() -> latencies.add(System.nanoTime() - sentAt));
          batches++;
          bytes += batchBytes;
        }
      }
      stream.finish();
      CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
    }
    return new StreamResult(batches, batches * batchRows, bytes, new ArrayList<>(latencies));
  }

  private static VectorSchemaRoot batch(BufferAllocator allocator, int stream, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
    BigIntVector id = (BigIntVector) root.getVector("id");
    TimeStampMicroTZVector at = (TimeStampMicroTZVector) root.getVector("at");
    Float8Vector value = (Float8Vector) root.getVector("value");
    VarCharVector name = (VarCharVector) root.getVector("name");
    byte[] text = ("stream-" + stream + "-" + "x".repeat(90)).getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < rows; i++) {
      id.setSafe(i, (long) stream << 40 | i);
      at.setSafe(i, 1_700_000_000_000_000L + i);
      value.setSafe(i, i * 0.5);
      name.setSafe(i, text);
    }
    root.setRowCount(rows);
    return root;
  }

  private static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static double millis(long nanos) {
    return round(nanos / 1e6);
  }

  private static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: --name value ... (got " + Arrays.toString(args) + ")");
      }
      options.put(args[i].substring(2), args[++i]);
    }
    return options;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}

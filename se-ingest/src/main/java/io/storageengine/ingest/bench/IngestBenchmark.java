package io.storageengine.ingest.bench;

import io.storageengine.common.Json;
import io.storageengine.common.Logging;
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
import java.util.stream.Stream;
import org.apache.arrow.flight.FlightServer;
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
 * Prints one JSON object: Arrow payload MB/s (buffer bytes of the batches sent), rows/s and ack
 * latency p50/p99/max (from a batch handed to gRPC until its ack).
 *
 * <p>Options ({@code --name value}): {@code seconds} (10), {@code streams} (4),
 * {@code batch-rows} (8192, about 1 MiB), {@code flush-interval-ms} (1000),
 * {@code flush-bytes} (64 MiB), {@code object-store} ({@code fs}, or {@code memory} to leave storage out), {@code dir} (a new temporary directory, deleted afterwards).
 * Needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED}.
 */
public final class IngestBenchmark {
  private static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("at", FieldType.nullable(new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")), null),
      new Field("value", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), null),
      new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  private IngestBenchmark() {}

  public static void main(String[] args) throws Exception {
    String levels = System.getenv("SE_LOG");
    Logging.configure(levels == null ? "warn" : levels, System.getenv("SE_LOG_FORMAT"));
    Map<String, String> options = parse(args);
    int seconds = Integer.parseInt(options.getOrDefault("seconds", "10"));
    int streams = Integer.parseInt(options.getOrDefault("streams", "4"));
    int batchRows = Integer.parseInt(options.getOrDefault("batch-rows", "8192"));
    long flushIntervalMs = Long.parseLong(options.getOrDefault("flush-interval-ms", "1000"));
    long flushBytes = Long.parseLong(options.getOrDefault("flush-bytes",
        Long.toString(IngestConfig.DEFAULT_FLUSH_BYTES)));
    String storeType = options.getOrDefault("object-store", "fs");
    boolean tempDir = !options.containsKey("dir");
    Path dir = tempDir ? Files.createTempDirectory("se-ingest-bench")
        : Files.createDirectories(Path.of(options.get("dir")));
    try {
      Map<String, Object> result = run(storeType, dir, seconds, streams, batchRows,
          IngestConfig.defaults().withFlushInterval(Duration.ofMillis(flushIntervalMs))
              .withFlushBytes(flushBytes));
      System.out.println(Json.toString(result));
    } finally {
      if (tempDir) {
        deleteRecursively(dir);
      }
    }
  }

  private static Map<String, Object> run(String storeType, Path dir, int seconds, int streams, int batchRows,
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
      ObjectStoreWal wal = new ObjectStoreWal(store, "bench");
      BufferAllocator serverAllocator = allocator.newChildAllocator("server", 0, Long.MAX_VALUE);
      IngestService service = new IngestService(serverAllocator,
          id -> {
            if (!id.equals("bench")) {
              throw SeException.notFound("catalog `%s` not found", id);
            }
            return catalog;
          }, wal, config, (table, seq, rows, bytes) -> segments.incrementAndGet());
      FlightServer server = FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0),
          new IngestFlightProducer(service)).build().start();
      Location location = Location.forGrpcInsecure("127.0.0.1", server.getPort());
      ExecutorService pool = Executors.newFixedThreadPool(streams);
      List<Future<StreamResult>> futures = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
      long start = System.nanoTime();
      for (int s = 0; s < streams; s++) {
        int streamIndex = s;
        futures.add(pool.submit(() -> stream(allocator, location, streamIndex, batchRows, deadline)));
      }
      List<StreamResult> results = new ArrayList<>();
      for (Future<StreamResult> f : futures) {
        results.add(f.get());
      }
      double elapsed = (System.nanoTime() - start) / 1e9;
      pool.shutdown();
      server.close();
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
      out.put("mb_per_s", round(bytes / 1e6 / elapsed));
      out.put("rows_per_s", Math.round(rows / elapsed));
      Map<String, Object> latency = new LinkedHashMap<>();
      latency.put("p50", millis(percentile(sorted, 0.50)));
      latency.put("p99", millis(percentile(sorted, 0.99)));
      latency.put("max", millis(sorted.length == 0 ? 0 : sorted[sorted.length - 1]));
      out.put("ack_latency_ms", latency);
      out.put("flush_interval_ms", config.flushInterval().toMillis());
      out.put("flush_bytes", config.flushBytes());
      out.put("object_store", store.describe());
      return out;
    }
  }

  /** What one stream did. */
  private record StreamResult(long batches, long rows, long bytes, List<Long> latenciesNanos) {}

  private static StreamResult stream(BufferAllocator parent, Location location, int index,
      int batchRows, long deadline) throws Exception {
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
      List<CompletableFuture<Long>> pending = new ArrayList<>();
      while (System.nanoTime() < deadline) {
        // Latency counts from the batch handed to gRPC to its ack, not the time send() waited
        // for one of the client's 32 in-flight slots.
        CompletableFuture<Long> ack = stream.send(batch);
        long sentAt = System.nanoTime();
        ack.thenRun(() -> latencies.add(System.nanoTime() - sentAt));
        pending.add(ack);
        batches++;
        bytes += batchBytes;
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

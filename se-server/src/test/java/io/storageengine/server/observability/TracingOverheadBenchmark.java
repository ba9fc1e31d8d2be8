package io.storageengine.server.observability;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineContext;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Ingest throughput of a real server (fs store, server role) with tracing disabled and with the
 * SDK recording every span into a batch processor (exporter that drops them, so only the
 * engine's cost is measured). A program, not a test: prints one JSON line per mode.
 *
 * <p>Arguments: seconds per mode (default 10), streams (default 4), rows per batch (default 10000).
 */
public final class TracingOverheadBenchmark {
  private TracingOverheadBenchmark() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int streams = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    int rowsPerBatch = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
    for (String mode : List.of("disabled", "enabled", "disabled", "enabled")) {
      Telemetry telemetry = mode.equals("disabled") ? Telemetry.disabled() : Telemetry.builder()
          .spanProcessor(BatchSpanProcessor.builder(new DroppingExporter()).build()).build();
      try {
        run(telemetry, mode, seconds, streams, rowsPerBatch);
      } finally {
        telemetry.close();
      }
    }
  }

  private static void run(Telemetry telemetry, String mode, int seconds, int streams, int rowsPerBatch)
      throws Exception {
    Path dir = Files.createTempDirectory("se-bench");
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        // se start roles write catalogs only with a secret-store key (se dev generates one).
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        // se start roles default to --auth.mode tokens; the test calls without credentials, on loopback.
        .with(AuthConfig.MODE, "none");
    try (EngineServer server = EngineServer.start(EngineContext.builder(config)
            .duckdbDirectory(config.duckdbDirectory()).telemetry(telemetry).build(), Role.SERVER);
        BufferAllocator allocator = new RootAllocator()) {
      server.registry().create("warehouse", CatalogConfig.embedded());
      var catalog = server.registry().catalog("warehouse");
      var table = Tables.create(catalog, TableIdentifier.parse("bench.events"),
          TableDefinition.builder("id bigint not null, url string").build());
      Location location = Location.forGrpcInsecure("127.0.0.1", server.port());
      AtomicLong rows = new AtomicLong();
      long deadline = System.nanoTime() + seconds * 1_000_000_000L;
      ExecutorService pool = Executors.newFixedThreadPool(streams);
      List<Future<?>> running = new ArrayList<>();
      long start = System.nanoTime();
      for (int s = 0; s < streams; s++) {
        running.add(pool.submit(() -> {
          try (IngestClient client = IngestClient.connect(location, allocator);
              VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
              IngestStream stream = client.open("warehouse", List.of("bench"), "events", WalOperation.UPSERT,
                  root.getSchema())) {
            root.allocateNew();
            for (int i = 0; i < rowsPerBatch; i++) {
              ((BigIntVector) root.getVector(0)).setSafe(i, i);
              ((VarCharVector) root.getVector(1)).setSafe(i, ("/page/" + i).getBytes(StandardCharsets.UTF_8));
            }
            root.setRowCount(rowsPerBatch);
            List<CompletableFuture<Long>> acks = new ArrayList<>();
            while (System.nanoTime() < deadline) {
              acks.add(stream.send(root).thenApply(seq -> {
                rows.addAndGet(rowsPerBatch);
                return seq;
              }));
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get();
            stream.finish();
          }
          return null;
        }));
      }
      for (Future<?> f : running) {
        f.get();
      }
      double elapsed = (System.nanoTime() - start) / 1e9;
      pool.shutdown();
      System.out.printf("{\"tracing\":\"%s\",\"streams\":%d,\"rows_per_batch\":%d,\"seconds\":%.1f,"
          + "\"rows\":%d,\"rows_per_second\":%.0f}%n", mode, streams, rowsPerBatch, elapsed, rows.get(),
          rows.get() / elapsed);
    }
  }

  /** Accepts and forgets spans: measures the cost of recording them, not of a network. */
  private static final class DroppingExporter implements SpanExporter {
    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}

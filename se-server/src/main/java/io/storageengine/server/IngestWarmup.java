package io.storageengine.server;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Threads;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.ingest.IngestListener;
import io.storageengine.ingest.IngestService;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.WalOperation;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ingestion's warm-up, run by a server before it listens ({@code --server.warmup-streams}): that
 * many native ingest streams go through the server's own ingest stack (an Armeria listener,
 * gRPC and Flight framing, the push-based DoPut, validation, conversion, group commit, a WAL)
 * on a loopback port of its own, into a private table of an in-memory catalog whose WAL is an
 * in-memory store. A fresh JVM interprets that code until the JIT has compiled it, and on a
 * small machine the compilers take most of the CPU while they do: without the warm-up the
 * first burst of streams after a start (every producer reconnecting after a restart) is
 * admitted several times slower than later ones (README "Known gaps" has the numbers).
 *
 * <p>Nothing of the warm-up outlives {@link #run}: its catalog, store, listener, service,
 * clients, threads and allocator are closed, and it touches no tenant's catalog or cluster
 * storage. It never stops a server from starting: a failure is logged and the server goes on.
 */
final class IngestWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(IngestWarmup.class);
  private static final String CATALOG = "warmup";
  private static final TableIdentifier TABLE = TableIdentifier.of("warmup", "events");
  private static final int CONNECTIONS = 10;
  private static final int CALLERS = 50;
  /** Every this many streams, one sends two batches of {@link #LARGE_ROWS} rows. */
  private static final int LARGE_EVERY = 10;
  private static final int LARGE_ROWS = 500;
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final long MEMORY = 256L << 20;

  private IngestWarmup() {}

  /**
   * Runs {@code streams} streams (none when 0) with the given ingest settings (the group-commit
   * window shortened so the warm-up does not wait on it), in memory of its own. Returns how
   * many streams landed: {@code streams}, or -1 when the warm-up failed (logged).
   */
  static int run(int streams, IngestConfig config) {
    if (streams <= 0) {
      return 0;
    }
    long started = System.nanoTime();
    try {
      int landed = land(streams, config.withFlushInterval(Duration.ofMillis(5)));
      LOG.info("ingestion warmed up: {} streams in {} ms", landed,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      return landed;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      LOG.warn("ingestion warm-up failed after {} ms; starting without it: {}",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), e.toString());
      return -1;
    }
  }

  private static int land(int streams, IngestConfig config) throws Exception {
    InMemoryCatalog catalog = new InMemoryCatalog();
    catalog.initialize(CATALOG, Map.of());
    ExecutorService flight = Executors.newCachedThreadPool(Threads.daemon("se-warmup-flight"));
    ExecutorService callers = Executors.newFixedThreadPool(CALLERS, Threads.daemon("se-warmup-client"));
    try (BufferAllocator allocator = new RootAllocator(MEMORY);
        IngestService ingest = new IngestService(allocator, id -> catalog,
            new ObjectStoreWal(new MemoryObjectStore(), "warmup"), config, IngestListener.NONE,
            Threads.daemon("se-warmup-flush"));
        Listener listener = Listener.start(new InetSocketAddress("127.0.0.1", 0), Map.of(),
            allocator, new NoOpFlightProducer(), flight, ingest::serveDoPut,
            List.of(ingest.doPutGuard()), TlsConfig.PLAIN)) {
      Schema schema = IcebergArrowSchemas.toArrow(Tables.create(catalog, TABLE,
          TableDefinition.builder("id bigint not null, name string, at timestamptz, v double")
              .build()).schema());
      return landAll(streams, Location.forGrpcInsecure("127.0.0.1", listener.port()), schema,
          allocator, callers);
    } finally {
      callers.shutdownNow();
      flight.shutdownNow();
    }
  }

  /** Lands the streams over {@link #CONNECTIONS} connections, which are closed before it returns. */
  private static int landAll(int streams, Location location, Schema schema,
      BufferAllocator allocator, ExecutorService callers) throws Exception {
    List<FlightClient> connections = new ArrayList<>();
    try {
      for (int i = 0; i < CONNECTIONS; i++) {
        connections.add(FlightClient.builder(allocator, location).build());
      }
      AtomicInteger next = new AtomicInteger();
      List<Future<Integer>> results = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        results.add(callers.submit(() -> {
          int landed = 0;
          for (int n = next.getAndIncrement(); n < streams; n = next.getAndIncrement()) {
            landStream(new IngestClient(connections.get(n % CONNECTIONS), allocator), schema,
                allocator, n);
            landed++;
          }
          return landed;
        }));
      }
      int landed = 0;
      long deadline = System.nanoTime() + LIMIT.toNanos();
      for (Future<Integer> result : results) {
        landed += result.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
      return landed;
    } finally {
      callers.shutdownNow();
      callers.awaitTermination(10, TimeUnit.SECONDS);
      for (FlightClient connection : connections) {
        connection.close();
      }
    }
  }

  private static void landStream(IngestClient client, Schema schema, BufferAllocator allocator,
      int n) throws Exception {
    boolean large = n % LARGE_EVERY == 0;
    try (IngestStream stream = client.open(CATALOG, List.of("warmup"), TABLE.name(),
        WalOperation.UPSERT, schema);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      for (int batch = 0; batch < (large ? 2 : 1); batch++) {
        fill(root, large ? LARGE_ROWS : 1, n);
        stream.send(root).get(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
      }
      stream.finish();
    }
  }

  private static void fill(VectorSchemaRoot root, int rows, int n) {
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector name = (VarCharVector) root.getVector(1);
    TimeStampMicroTZVector at = (TimeStampMicroTZVector) root.getVector(2);
    Float8Vector v = (Float8Vector) root.getVector(3);
    for (int row = 0; row < rows; row++) {
      id.setSafe(row, (long) n * LARGE_ROWS + row);
      if (row % 7 == 3) {
        name.setNull(row);
      } else {
        name.setSafe(row, ("stream-" + n + "-" + row).getBytes(StandardCharsets.UTF_8));
      }
      at.setSafe(row, 1_700_000_000_000_000L + row);
      v.setSafe(row, row * 0.5);
    }
    root.setRowCount(rows);
  }
}

package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.SeException;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalSegment;
import java.io.ByteArrayInputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;

/**
 * A real gRPC server on 127.0.0.1 port 0 hosting the Flight service of an {@link IngestService}
 * ({@link IngestService#flightService}: its own DoPut, the message guard) over the real
 * {@link ObjectStoreWal} on a fault-injecting memory store, with an {@link InMemoryCatalog} as
 * tenant {@code tenant}. Closes the allocator last so a leak fails the test.
 */
final class IngestHarness implements AutoCloseable {
  static final String TENANT = "tenant";
  static final Namespace NAMESPACE = Namespace.of("sales", "eu");

  final BufferAllocator allocator = new RootAllocator();
  final BufferAllocator serverAllocator = allocator.newChildAllocator("server", 0, Long.MAX_VALUE);
  final BufferAllocator clientAllocator = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
  final FaultInjectingObjectStore store = new FaultInjectingObjectStore(new MemoryObjectStore());
  final ObjectStoreWal wal = new ObjectStoreWal(store, "test-writer", 2, Duration.ofMillis(5));
  final InMemoryCatalog catalog = new InMemoryCatalog();
  final List<Long> segmentsWritten = new CopyOnWriteArrayList<>();
  final IngestService service;
  final ExecutorService flightExecutor = Executors.newCachedThreadPool();
  final Server server;
  final FlightClient flightClient;
  final IngestClient client;

  IngestHarness() throws Exception {
    this(c -> {});
  }

  IngestHarness(Consumer<IngestConfig[]> tune) throws Exception {
    IngestConfig[] config = {IngestConfig.defaults().withFlushInterval(Duration.ofMillis(50))};
    tune.accept(config);
    catalog.initialize(TENANT, Map.of());
    catalog.createNamespace(Namespace.of("sales"));
    catalog.createNamespace(NAMESPACE);
    service = new IngestService(serverAllocator, id -> {
      if (!id.equals(TENANT)) {
        throw SeException.notFound("catalog `%s` not found", id);
      }
      return catalog;
    }, wal, config[0], (table, seq, rows, bytes) -> segmentsWritten.add(seq));
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .maxInboundMessageSize(256 << 20)
        .addService(service.flightService(serverAllocator, new IngestFlightProducer(service),
            flightExecutor))
        .build().start();
    flightClient = FlightClient.builder(clientAllocator,
        Location.forGrpcInsecure("127.0.0.1", server.getPort())).build();
    client = new IngestClient(flightClient, clientAllocator);
  }

  Table createTable(String name, Schema schema, Map<String, String> properties) {
    return catalog.buildTable(TableIdentifier.of(NAMESPACE, name), schema)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperties(properties)
        .create();
  }

  TableWal walOf(Table table) {
    return new TableWal(TENANT, table.uuid());
  }

  List<WalFrame> frames(Table table) {
    List<WalFrame> frames = new ArrayList<>();
    TableWal tableWal = walOf(table);
    for (long seq : wal.segmentsAfter(tableWal, 0)) {
      WalSegment segment = wal.read(tableWal, seq).orElseThrow();
      frames.addAll(segment.frames());
    }
    return frames;
  }

  /** Decodes a frame's IPC stream and hands its one batch to {@code check}. */
  void readFrame(WalFrame frame, Consumer<VectorSchemaRoot> check) throws Exception {
    try (ArrowStreamReader reader =
        new ArrowStreamReader(new ByteArrayInputStream(frame.arrowIpc()), allocator)) {
      assertThat(reader.loadNextBatch()).isTrue();
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      assertThat(root.getRowCount()).isEqualTo(frame.rowCount());
      check.accept(root);
      assertThat(reader.loadNextBatch()).isFalse();
    }
  }

  static int fieldId(VectorSchemaRoot root, String column) {
    return IcebergArrowSchemas.fieldId(root.getSchema().findField(column));
  }

  @Override
  public void close() throws Exception {
    client.close();
    flightClient.close();
    server.shutdown();
    boolean clean = server.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    server.shutdownNow();
    flightExecutor.shutdownNow();
    service.close();
    clientAllocator.close();
    serverAllocator.close();
    allocator.close();
    assertThat(clean).as("every call ended before shutdown").isTrue();
  }
}

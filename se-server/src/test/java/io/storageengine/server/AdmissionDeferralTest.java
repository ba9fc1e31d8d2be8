package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through a real {@code se dev} server: while a burst of streams waits for admission (here
 * streams that sent their schema and hold back their header), the reconcile pass of a table
 * that just got a WAL segment waits, and publishes once the burst ends, or, when the burst
 * outlasts {@code --reconcile.admission-deferral}, once that deferral has passed.
 */
class AdmissionDeferralTest {
  /** Streams in admission at once that make a burst ({@code AdmissionTracker.DEFAULT_THRESHOLD}). */
  private static final int BURST = 8;
  private static final TableIdentifier TABLE = TableIdentifier.parse("load.events");

  @TempDir Path dir;

  @Test
  void passWaitsForTheBurstAndPublishesOnceItEnds() throws Exception {
    try (EngineServer server = start("10m");
        BufferAllocator allocator = new RootAllocator()) {
      Catalog catalog = server.registry().catalog("warehouse");
      Schema schema = createTable(catalog);
      Burst burst = holdInAdmission(server.port(), allocator, schema, BURST);
      try {
        // The server sees the burst once its streams' schemas arrived (the client sends them
        // asynchronously); a row acknowledged before would start its pass at once.
        awaitBurst(server);
        landOneRow(server.port(), allocator, schema);
        Thread.sleep(2000);
        assertThat(catalog.loadTable(TABLE).currentSnapshot())
            .as("published during the burst").isNull();
      } finally {
        burst.close(); // cancels the waiting streams: the burst ends
      }
      awaitPublished(catalog);
    }
  }

  @Test
  void passPublishesAfterTheDeferralWhileTheBurstLasts() throws Exception {
    try (EngineServer server = start("1s");
        BufferAllocator allocator = new RootAllocator()) {
      Catalog catalog = server.registry().catalog("warehouse");
      Schema schema = createTable(catalog);
      Burst burst = holdInAdmission(server.port(), allocator, schema, BURST);
      try {
        awaitBurst(server);
        landOneRow(server.port(), allocator, schema);
        awaitPublished(catalog);
      } finally {
        burst.close();
      }
    }
  }

  private EngineServer start(String deferral) {
    return EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(ConfigKey.RECONCILE_ADMISSION_DEFERRAL, deferral), Role.DEV);
  }

  private static Schema createTable(Catalog catalog) {
    Tables.create(catalog, TABLE, TableDefinition.builder("id bigint not null").build());
    return IcebergArrowSchemas.toArrow(catalog.loadTable(TABLE).schema());
  }

  /** Streams held in admission on a connection of their own; closing cancels them. */
  private record Burst(FlightClient client, List<FlightClient.ClientStreamListener> streams)
      implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      for (FlightClient.ClientStreamListener stream : streams) {
        stream.error(new IllegalStateException("the burst is over")); // cancels the call
      }
      client.close();
    }
  }

  /**
   * Opens {@code streams} native streams that send their schema and never their header, so they
   * stay in admission until {@link Burst#close}.
   */
  private static Burst holdInAdmission(int port, BufferAllocator allocator, Schema schema,
      int streams) {
    FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", port)).build();
    List<FlightClient.ClientStreamListener> held = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
        held.add(client.startPut(IngestProtocol.descriptor(), root, new SyncPutListener()));
      }
    }
    return new Burst(client, held);
  }

  /** Ingests one row through a stream of its own and waits for its ack (durable in the WAL). */
  private static void landOneRow(int port, BufferAllocator allocator, Schema schema) throws Exception {
    try (FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", port)).build();
        IngestStream stream = new IngestClient(flight, allocator).open("warehouse", List.of("load"),
            "events", WalOperation.UPSERT, schema);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      BigIntVector id = (BigIntVector) root.getVector(0);
      id.allocateNew(1);
      id.set(0, 1);
      root.setRowCount(1);
      stream.send(root).get(60, TimeUnit.SECONDS);
      stream.finish();
    }
  }

  private static void awaitBurst(EngineServer server) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!server.admittingBurst()) {
      assertThat(System.nanoTime()).as("the server saw the burst within 30 s").isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  private static void awaitPublished(Catalog catalog) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (catalog.loadTable(TABLE).currentSnapshot() == null) {
      assertThat(System.nanoTime()).as("not published within 60 s").isLessThan(deadline);
      Thread.sleep(50);
    }
  }
}

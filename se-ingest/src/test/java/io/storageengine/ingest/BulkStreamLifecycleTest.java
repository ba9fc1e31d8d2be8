package io.storageengine.ingest;

import static io.storageengine.ingest.NativeIngestTest.BATCH;
import static io.storageengine.ingest.NativeIngestTest.EVENTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.WalFrame;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.DoPutUpdateResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The life of a Flight SQL bulk ingest stream read without a thread of its own, as
 * {@link NativeStreamLifecycleTest} for the native protocol: open bulk streams hold no server
 * thread, and a bulk stream abandoned by its client, also while its batch waits for the global
 * budget, gives back every byte of Arrow memory and budget (the harness closes the allocators
 * last, so a leak fails the test).
 */
class BulkStreamLifecycleTest {
  IngestHarness h;
  Table events;

  @AfterEach
  void stop() throws Exception {
    if (h != null) {
      h.close();
    }
  }

  private void start(java.util.function.Consumer<IngestConfig[]> tune) throws Exception {
    h = new IngestHarness(tune);
    events = h.createTable("events", EVENTS, Map.of());
  }

  /** Bulk ingest into {@code sales.eu.events}, which exists: append. */
  private static FlightDescriptor descriptor() {
    return FlightDescriptor.command(Any.pack(CommandStatementIngest.newBuilder()
        .setCatalog(IngestHarness.TENANT).setSchema("sales.eu").setTable("events")
        .setTableDefinitionOptions(TableDefinitionOptions.newBuilder()
            .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL)
            .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND))
        .build()).toByteArray());
  }

  @Test
  void openBulkStreamsHoldNoServerThread() throws Exception {
    start(c -> {});
    int streams = 200;
    int threadsBefore = Thread.activeCount();
    List<VectorSchemaRoot> roots = new ArrayList<>();
    List<FlightClient.ClientStreamListener> puts = new ArrayList<>();
    List<SyncPutListener> results = new ArrayList<>();
    try {
      for (int i = 0; i < streams; i++) {
        VectorSchemaRoot root = batch(i * 10L, 2);
        roots.add(root);
        SyncPutListener result = new SyncPutListener();
        results.add(result);
        FlightClient.ClientStreamListener put = h.flightClient.startPut(descriptor(), root, result);
        puts.add(put);
        put.putNext();
      }
      // Every batch durable while every stream is still open.
      waitFor(() -> h.frames(events).size() == streams);
      int threadsOpen = Thread.activeCount();
      // Each open bulk stream used to hold a Flight executor thread until it ended.
      assertThat(threadsOpen - threadsBefore).isLessThan(streams / 4);
      for (FlightClient.ClientStreamListener put : puts) {
        put.completed();
      }
      for (int i = 0; i < streams; i++) {
        puts.get(i).getResult();
        assertThat(recordCount(results.get(i))).isEqualTo(2);
      }
    } finally {
      results.forEach(SyncPutListener::close);
      roots.forEach(VectorSchemaRoot::close);
    }
    assertThat(h.frames(events)).hasSize(streams);
  }

  @Test
  void aClientThatCancelsMidBulkStreamLeavesNothingBehind() throws Exception {
    start(c -> {});
    CountDownLatch release = new CountDownLatch(1);
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        VectorSchemaRoot root = batch(0, 3);
        SyncPutListener result = new SyncPutListener()) {
      FlightClient.ClientStreamListener put = h.flightClient.startPut(descriptor(), root, result);
      put.putNext();
      waitFor(() -> h.service.inFlightBytes() > 0); // submitted, waiting for its segment
      put.error(new RuntimeException("the client went away"));
      release.countDown();
      waitFor(() -> h.service.inFlightBytes() == 0);
      waitFor(() -> h.serverAllocator.getAllocatedMemory() == 0);
      assertThatThrownBy(put::getResult).isNotNull();
    }
    // The batch was submitted before the cancel, so it may be durable; never twice, never torn.
    assertThat(h.frames(events).size()).isLessThanOrEqualTo(1);
  }

  @Test
  void aBulkStreamCancelledWhileItsBatchWaitsForTheGlobalBudgetGivesEverythingBack()
      throws Exception {
    start(c -> {});
    try (VectorSchemaRoot root = batch(0, 50); SyncPutListener result = new SyncPutListener()) {
      FlightClient.ClientStreamListener put = h.flightClient.startPut(descriptor(), root, result);
      put.putNext();
      put.completed();
      put.getResult();
      assertThat(recordCount(result)).isEqualTo(50);
    }
    long batchBytes = h.frames(events).get(0).arrowIpc().length;
    h.close();
    // Room for one batch: the second stream's batch waits until the first is durable.
    start(c -> c[0] = c[0].withGlobalBytes(batchBytes + batchBytes / 2).withFlushBytes(1));
    CountDownLatch release = new CountDownLatch(1);
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        VectorSchemaRoot first = batch(0, 50);
        VectorSchemaRoot second = batch(100, 50);
        SyncPutListener firstResult = new SyncPutListener();
        SyncPutListener secondResult = new SyncPutListener()) {
      FlightClient.ClientStreamListener firstPut =
          h.flightClient.startPut(descriptor(), first, firstResult);
      firstPut.putNext();
      firstPut.completed();
      waitFor(() -> h.service.inFlightBytes() > 0);

      FlightClient.ClientStreamListener secondPut =
          h.flightClient.startPut(descriptor(), second, secondResult);
      secondPut.putNext();
      waitFor(() -> h.service.budget().queued() == 1);
      secondPut.error(new RuntimeException("the client went away"));
      waitFor(() -> h.service.budget().queued() == 0);

      release.countDown();
      firstPut.getResult();
      assertThat(recordCount(firstResult)).isEqualTo(50);
      waitFor(() -> h.service.inFlightBytes() == 0);
      waitFor(() -> h.serverAllocator.getAllocatedMemory() == 0);
      assertThatThrownBy(secondPut::getResult).isNotNull();
    }
    List<WalFrame> frames = h.frames(events);
    assertThat(frames).hasSize(1); // the cancelled stream's batch never reached the WAL
  }

  /** The update count a bulk ingest answered. */
  private static long recordCount(SyncPutListener result) throws Exception {
    try (PutResult put = result.read()) {
      ArrowBuf metadata = put.getApplicationMetadata();
      byte[] bytes = new byte[(int) metadata.readableBytes()];
      metadata.getBytes(0, bytes);
      return DoPutUpdateResult.parseFrom(bytes).getRecordCount();
    }
  }

  private VectorSchemaRoot batch(long firstId, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator);
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    for (int i = 0; i < rows; i++) {
      id.setSafe(i, firstId + i);
      name.setSafe(i, ("n" + (firstId + i)).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(rows);
    return root;
  }

  private static void waitFor(BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not reached");
      }
      Thread.sleep(5);
    }
  }
}

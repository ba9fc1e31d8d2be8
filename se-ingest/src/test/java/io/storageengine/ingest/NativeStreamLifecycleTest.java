package io.storageengine.ingest;

import static io.storageengine.ingest.NativeIngestTest.BATCH;
import static io.storageengine.ingest.NativeIngestTest.EVENTS;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.ingest.NativeIngestTest.RecordingListener;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The life of a native stream read without a thread of its own: open streams hold no server
 * thread, and a stream abandoned by its client, also while its batch waits for the global
 * budget, gives back every byte of Arrow memory and budget (the harness closes the allocators
 * last, so a leak fails the test).
 */
class NativeStreamLifecycleTest {
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

  @Test
  void openStreamsHoldNoServerThread() throws Exception {
    start(c -> {});
    int streams = 200;
    int threadsBefore = Thread.activeCount();
    List<IngestStream> open = new ArrayList<>();
    try {
      for (int i = 0; i < streams; i++) {
        open.add(h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "events",
            WalOperation.UPSERT, BATCH)); // returns once the header is acknowledged
      }
      int threadsOpen = Thread.activeCount();
      // Each open stream used to hold a Flight executor thread until it ended.
      assertThat(threadsOpen - threadsBefore).isLessThan(streams / 4);
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        try (VectorSchemaRoot root = batch(i * 10L, 2)) {
          acks.add(open.get(i).send(root));
        }
      }
      for (IngestStream stream : open) {
        stream.finish();
      }
      assertThat(acks).allMatch(ack -> ack.isDone() && !ack.isCompletedExceptionally());
    } finally {
      open.forEach(IngestStream::close);
    }
    assertThat(h.frames(events)).hasSize(streams);
  }

  @Test
  void aClientThatCancelsMidStreamLeavesNothingBehind() throws Exception {
    start(c -> {});
    CountDownLatch release = new CountDownLatch(1);
    List<Long> acks = new CopyOnWriteArrayList<>();
    RecordingListener listener = new RecordingListener(acks);
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator)) {
      FlightClient.ClientStreamListener put =
          h.flightClient.startPut(IngestProtocol.descriptor(), root, listener);
      put.putMetadata(buf(IngestProtocol.encodeHeader(header())));
      waitFor(() -> acks.contains(0L));
      load(root, 3);
      put.putNext(buf(IngestProtocol.encodeRequestId(1)));
      waitFor(() -> h.service.inFlightBytes() > 0); // submitted, waiting for its segment
      put.error(new RuntimeException("the client went away"));
      release.countDown();
      waitFor(() -> h.service.inFlightBytes() == 0);
      waitFor(() -> h.serverAllocator.getAllocatedMemory() == 0);
    }
    // The batch was submitted before the cancel, so it may be durable; never twice, never torn.
    assertThat(h.frames(events).size()).isLessThanOrEqualTo(1);
  }

  @Test
  void aStreamCancelledWhileItsBatchWaitsForTheGlobalBudgetGivesEverythingBack() throws Exception {
    long batchBytes;
    start(c -> {});
    try (IngestStream stream = open(); VectorSchemaRoot root = batch(0, 50)) {
      stream.send(root).get(10, TimeUnit.SECONDS);
      stream.finish();
    }
    batchBytes = h.frames(events).get(0).arrowIpc().length;
    h.close();
    // Room for one batch: the second stream's batch waits until the first is durable.
    start(c -> c[0] = c[0].withGlobalBytes(batchBytes + batchBytes / 2).withFlushBytes(1));
    CountDownLatch release = new CountDownLatch(1);
    List<Long> acks = new CopyOnWriteArrayList<>();
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        IngestStream first = open();
        VectorSchemaRoot data = batch(0, 50);
        VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator)) {
      CompletableFuture<Long> firstAck = first.send(data);
      waitFor(() -> h.service.inFlightBytes() > 0);

      FlightClient.ClientStreamListener put = h.flightClient.startPut(
          IngestProtocol.descriptor(), root, new RecordingListener(acks));
      put.putMetadata(buf(IngestProtocol.encodeHeader(header())));
      waitFor(() -> acks.contains(0L));
      load(root, data);
      put.putNext(buf(IngestProtocol.encodeRequestId(1)));
      waitFor(() -> h.service.budget().queued() == 1);
      put.error(new RuntimeException("the client went away"));
      waitFor(() -> h.service.budget().queued() == 0);

      release.countDown();
      assertThat(firstAck.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
      first.finish();
      waitFor(() -> h.service.inFlightBytes() == 0);
      waitFor(() -> h.serverAllocator.getAllocatedMemory() == 0);
    }
    List<WalFrame> frames = h.frames(events);
    assertThat(frames).hasSize(1); // the cancelled stream's batch never reached the WAL
    assertThat(acks).containsExactly(0L);
  }

  private IngestStream open() {
    return h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "events",
        WalOperation.UPSERT, BATCH);
  }

  private static IngestProtocol.Header header() {
    return new IngestProtocol.Header(IngestHarness.TENANT, List.of("sales", "eu"), "events",
        WalOperation.UPSERT);
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

  private void load(VectorSchemaRoot target, int rows) {
    try (VectorSchemaRoot data = batch(0, rows)) {
      load(target, data);
    }
  }

  private static void load(VectorSchemaRoot target, VectorSchemaRoot source) {
    try (var data = new VectorUnloader(source).getRecordBatch()) {
      new VectorLoader(target).load(data);
    }
  }

  private ArrowBuf buf(byte[] bytes) {
    ArrowBuf buf = h.clientAllocator.buffer(bytes.length);
    buf.writeBytes(bytes);
    return buf;
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

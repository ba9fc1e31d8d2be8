package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.ingest.client.IngestStream;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The native DoPut protocol against a real Flight server, with the real WAL underneath. */
class NativeIngestTest {
  static final Schema EVENTS = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));
  static final org.apache.arrow.vector.types.pojo.Schema BATCH =
      new org.apache.arrow.vector.types.pojo.Schema(List.of(
          new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
          new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  IngestHarness h;
  Table events;

  @BeforeEach
  void start() throws Exception {
    h = new IngestHarness();
    events = h.createTable("events", EVENTS, Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  VectorSchemaRoot batch(long firstId, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator);
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    for (int i = 0; i < rows; i++) {
      id.setSafe(i, firstId + i);
      if (i % 3 == 2) {
        name.setNull(i);
      } else {
        name.setSafe(i, ("n" + (firstId + i)).getBytes(StandardCharsets.UTF_8));
      }
    }
    root.setRowCount(rows);
    return root;
  }

  IngestStream open(String table) {
    return h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), table, WalOperation.UPSERT,
        BATCH);
  }

  @Test
  void batchesAreAcknowledgedOnceDurableAndReadBackWithFieldIds() throws Exception {
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    try (IngestStream stream = open("events")) {
      for (int b = 0; b < 3; b++) {
        try (VectorSchemaRoot root = batch(b * 10L, 5)) {
          acks.add(stream.send(root));
        }
      }
      stream.finish();
    }
    assertThat(acks).allMatch(CompletableFuture::isDone);
    assertThat(acks.stream().map(CompletableFuture::join)).containsExactly(1L, 2L, 3L);

    List<WalFrame> frames = h.frames(events);
    assertThat(frames).hasSize(3);
    // The listener hears of a segment after its batches are acknowledged, not before.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (h.segmentsWritten.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(h.segmentsWritten).isNotEmpty();
    for (int b = 0; b < 3; b++) {
      WalFrame frame = frames.get(b);
      assertThat(frame.operation()).isEqualTo(WalOperation.UPSERT);
      assertThat(frame.schemaId()).isEqualTo(events.schema().schemaId());
      assertThat(frame.requestIds()).containsExactly(b + 1L);
      long first = b * 10L;
      h.readFrame(frame, root -> {
        assertThat(IngestHarness.fieldId(root, "id")).isEqualTo(1);
        assertThat(IngestHarness.fieldId(root, "name")).isEqualTo(2);
        assertThat(root.getSchema().findField("id").isNullable()).isFalse();
        assertThat(((BigIntVector) root.getVector("id")).get(4)).isEqualTo(first + 4);
        assertThat(root.getVector("name").getObject(0).toString()).isEqualTo("n" + first);
        assertThat(root.getVector("name").isNull(2)).isTrue();
      });
    }
  }

  @Test
  void ackWaitsForTheSegmentToExistInTheStore() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (IngestStream stream = open("events");
        var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        VectorSchemaRoot root = batch(0, 3)) {
      CompletableFuture<Long> ack = stream.send(root);
      Thread.sleep(300);
      assertThat(ack).isNotDone();
      assertThat(h.store.delegate().list(h.walOf(events).prefix() + "wal/")).isEmpty();
      release.countDown();
      assertThat(ack.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
      // The ack came after the segment was created, so it is there now.
      assertThat(h.store.delegate().list(h.walOf(events).prefix() + "wal/")).hasSize(1);
      stream.finish();
    }
  }

  @Test
  void acksMayArriveOutOfOrder() throws Exception {
    List<Long> order = new CopyOnWriteArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    RecordingListener listener = new RecordingListener(order);
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"),
            (op, key) -> release.await(10, TimeUnit.SECONDS));
        VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator)) {
      FlightClient.ClientStreamListener put =
          h.flightClient.startPut(IngestProtocol.descriptor(), root, listener);
      put.putMetadata(buf(IngestProtocol.encodeHeader(header("events"))));
      try (VectorSchemaRoot data = batch(0, 4)) {
        load(root, data);
      }
      put.putNext(buf(IngestProtocol.encodeRequestId(7)));
      // An empty batch has nothing to make durable: acknowledged at once, before 7.
      root.setRowCount(0);
      put.putNext(buf(IngestProtocol.encodeRequestId(8)));
      waitFor(() -> order.contains(8L));
      release.countDown();
      put.completed();
      put.getResult();
    }
    assertThat(order).containsExactly(0L, 8L, 7L);
  }

  @Test
  void unknownCatalogAndTableAreNotFound() {
    assertThatThrownBy(() -> h.client.open("nope", List.of("sales", "eu"), "events",
        WalOperation.UPSERT, BATCH))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
        .hasMessageContaining("catalog `nope` not found");
    assertThatThrownBy(() -> open("missing"))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
        .hasMessageContaining("table `sales.eu.missing` not found in catalog `tenant`");
    assertThatThrownBy(() -> h.client.open("Bad!", List.of("sales"), "events",
        WalOperation.UPSERT, BATCH))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("invalid catalog id 'Bad!'");
  }

  @Test
  void aStreamWhoseTableIsDroppedEndsNotFoundAndAcknowledgesNothingAfterTheDrop() throws Exception {
    List<CompletableFuture<Long>> beforeDrop = new ArrayList<>();
    List<CompletableFuture<Long>> afterDrop = new ArrayList<>();
    io.storageengine.wal.TableWal droppedWal = h.walOf(events);
    try (IngestStream stream = open("events")) {
      for (int b = 0; b < 5; b++) {
        try (VectorSchemaRoot root = batch(b * 10L, 10)) {
          beforeDrop.add(stream.send(root));
        }
      }
      CompletableFuture.allOf(beforeDrop.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
      h.catalog.dropTable(org.apache.iceberg.catalog.TableIdentifier.of(IngestHarness.NAMESPACE,
          "events"));
      for (int b = 5; b < 10; b++) {
        try (VectorSchemaRoot root = batch(b * 10L, 10)) {
          afterDrop.add(stream.send(root));
        } catch (FlightRuntimeException e) {
          break; // the stream already ended NOT_FOUND: nothing more can be sent
        }
      }
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
          .hasMessageContaining("table `tenant.sales.eu.events` was dropped");
    }
    assertThat(afterDrop).isNotEmpty();
    for (CompletableFuture<Long> ack : afterDrop) {
      assertThat(ack).as("a batch sent after the drop").isCompletedExceptionally();
    }
    // The first segment after the drop is durable in the dropped table's WAL, never acknowledged.
    long frames = h.wal.segmentsAfter(droppedWal, 0).stream()
        .mapToLong(seq -> h.wal.read(droppedWal, seq).orElseThrow().frames().size()).sum();
    assertThat(frames).isGreaterThan(beforeDrop.size());
  }

  @Test
  void badHeadersAreInvalidArgumentNamingTheField() throws Exception {
    assertThat(rawHeader("{\"request_id\":0,\"catalog\":\"tenant\",\"namespace\":[\"sales\",\"eu\"],"
        + "\"table_name\":\"events\",\"colour\":\"red\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: unknown field `colour`");
    assertThat(rawHeader("{\"request_id\":1,\"catalog\":\"tenant\",\"namespace\":[],"
        + "\"table_name\":\"events\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: field `request_id` must be 0, got 1");
    assertThat(rawHeader("{\"request_id\":0,\"namespace\":[],\"table_name\":\"events\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: missing field `catalog`");
    assertThat(rawHeader("{\"request_id\":0,\"catalog\":\"tenant\",\"namespace\":\"sales\","
        + "\"table_name\":\"events\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: field `namespace` must be an array of strings");
    assertThat(rawHeader("{\"request_id\":0,\"catalog\":\"tenant\",\"namespace\":[\"sales\",\"eu\"],"
        + "\"table_name\":\"events\",\"operation\":\"merge\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: field `operation` must be \"upsert\" or "
            + "\"delete\", got merge");
    assertThat(rawHeader("not json")).startsWith("INVALID_ARGUMENT: stream header: invalid JSON");
    assertThat(h.store.delegate().list("tenants/")).isEmpty();
  }

  @Test
  void deleteOnAnAppendTableIsRefused() {
    assertThatThrownBy(() -> h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "events",
        WalOperation.DELETE, BATCH))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("operation `delete`: table `tenant.sales.eu.events` is an append "
            + "table, which accepts only upsert");
  }

  @Test
  void badRequestIdsEndTheStreamAndNothingRejectedIsWritten() throws Exception {
    assertThat(rawBatches("{\"request_id\":0}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: field `request_id` must be > 0 "
            + "(0 is the header), got 0");
    assertThat(rawBatches("{\"request_id\":1,\"x\":2}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: unknown field `x`");
    assertThat(rawBatches("{\"request_id\":\"one\"}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: field `request_id` must be an "
            + "integer, got \"one\"");
    assertThat(rawBatches((String) null))
        .isEqualTo("INVALID_ARGUMENT: record batch without app_metadata: expected "
            + "{\"request_id\":n}");
    // The duplicate is refused; the first batch 5 was valid and is acknowledged and kept.
    assertThat(rawBatches("{\"request_id\":5}", "{\"request_id\":5}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: field `request_id` 5 is used twice "
            + "in this stream");
    assertThat(h.frames(events)).hasSize(1);
    assertThat(h.frames(events).get(0).requestIds()).containsExactly(5L);
  }

  @Test
  void invalidBatchIsRejectedNamingTheColumnAndNeverWritten() throws Exception {
    org.apache.arrow.vector.types.pojo.Schema wrong = new org.apache.arrow.vector.types.pojo.Schema(
        List.of(new Field("id", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));
    assertThatThrownBy(() -> h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "events",
        WalOperation.UPSERT, wrong))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("column `id`: expected long, got utf8");

    // Nulls are only visible per batch: the stream fails at that batch.
    try (IngestStream stream = open("events"); VectorSchemaRoot root = batch(0, 3)) {
      root.getVector("id").setNull(1);
      CompletableFuture<Long> ack = stream.send(root);
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("batch request_id 1: column `id`: null at row 1 in a required column");
      assertThat(ack).isCompletedExceptionally();
    }
    assertThat(h.frames(events)).isEmpty();
    assertThat(h.store.delegate().list(h.walOf(events).prefix() + "wal/")).isEmpty();
  }

  @Test
  void storageOutageIsUnavailableAndIngestionRecoversAfterwards() throws Exception {
    try (IngestStream stream = open("events")) {
      h.store.startOutage();
      CompletableFuture<Long> ack;
      try (VectorSchemaRoot root = batch(0, 3)) {
        ack = stream.send(root);
      }
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAVAILABLE))
          .hasMessageContaining("storage unavailable: could not write the WAL of table "
              + events.uuid() + " in catalog `tenant`");
      assertThat(ack).isCompletedExceptionally();
    } finally {
      h.store.endOutage();
    }
    assertThat(h.frames(events)).isEmpty();

    try (IngestStream stream = open("events"); VectorSchemaRoot root = batch(100, 2)) {
      assertThat(stream.send(root).get(10, TimeUnit.SECONDS)).isEqualTo(1L);
      stream.finish();
    }
    assertThat(h.frames(events)).hasSize(1);
  }

  @Test
  void outageAtStreamStartIsUnavailable() {
    h.store.startOutage();
    try {
      assertThatThrownBy(() -> open("events"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAVAILABLE))
          .hasMessageContaining("storage unavailable");
    } finally {
      h.store.endOutage();
    }
  }

  @Test
  void aBatchLargerThanTheStreamLimitIsResourceExhausted() throws Exception {
    h.close();
    h = new IngestHarness(c -> c[0] = c[0].withMaxStreamBytes(16 << 10));
    events = h.createTable("events", EVENTS, Map.of());
    try (IngestStream stream = open("events"); VectorSchemaRoot root = batch(0, 4000)) {
      stream.send(root);
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED))
          .hasMessageContaining("exceeds the per-stream limit of 16384 bytes");
    }
    assertThat(h.frames(events)).isEmpty();
  }

  @Test
  void slowStorageStopsReadingAtTheUnacknowledgedLimit() throws Exception {
    h.close();
    h = new IngestHarness(c -> c[0] = c[0].withMaxUnacknowledgedBatches(4)
        .withFlushBytes(1)); // every batch its own segment: acks trickle in
    events = h.createTable("events", EVENTS, Map.of());
    h.store.delay(Operation.PUT_IF_ABSENT, Duration.ofMillis(100));
    long batchBytes = sentBatchBytes();
    AtomicLong maxInFlight = new AtomicLong();
    Thread sampler = sampler(maxInFlight);
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    try (IngestStream stream = h.client.open(new IngestProtocol.Header(IngestHarness.TENANT,
        List.of("sales", "eu"), "events", WalOperation.UPSERT), BATCH, 100)) {
      for (int b = 0; b < 12; b++) {
        try (VectorSchemaRoot root = batch(b * 100L, 50)) {
          acks.add(stream.send(root));
        }
      }
      stream.finish();
    } finally {
      sampler.interrupt();
      sampler.join();
    }
    assertThat(acks).allMatch(f -> !f.isCompletedExceptionally());
    assertThat(maxInFlight.get()).isPositive().isLessThanOrEqualTo(4 * batchBytes);
    assertThat(h.frames(events)).hasSize(12 + 1);
  }

  @Test
  void theGlobalBudgetBoundsEveryStream() throws Exception {
    long batchBytes = sentBatchBytes();
    h.close();
    long budget = batchBytes * 2 + batchBytes / 2;
    h = new IngestHarness(c -> c[0] = c[0].withGlobalBytes(budget).withFlushBytes(1));
    events = h.createTable("events", EVENTS, Map.of());
    h.store.delay(Operation.PUT_IF_ABSENT, Duration.ofMillis(60));
    AtomicLong maxInFlight = new AtomicLong();
    Thread sampler = sampler(maxInFlight);
    try (IngestStream a = open("events"); IngestStream b = open("events")) {
      for (int i = 0; i < 5; i++) {
        try (VectorSchemaRoot root = batch(i * 100L, 50)) {
          a.send(root);
          b.send(root);
        }
      }
      a.finish();
      b.finish();
    } finally {
      sampler.interrupt();
      sampler.join();
    }
    assertThat(maxInFlight.get()).isPositive().isLessThanOrEqualTo(budget);
    assertThat(h.frames(events)).hasSize(10);
  }

  /** Sends one batch of the size used by the backpressure tests; returns its IPC size. */
  private long sentBatchBytes() throws Exception {
    try (IngestStream stream = open("events"); VectorSchemaRoot root = batch(-1000, 50)) {
      stream.send(root).get(10, TimeUnit.SECONDS);
      stream.finish();
    }
    List<WalFrame> frames = h.frames(events);
    return frames.get(frames.size() - 1).arrowIpc().length;
  }

  private Thread sampler(AtomicLong max) {
    Thread t = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        max.accumulateAndGet(h.service.inFlightBytes(), Math::max);
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
    return t;
  }

  private IngestProtocol.Header header(String table) {
    return new IngestProtocol.Header(IngestHarness.TENANT, List.of("sales", "eu"), table,
        WalOperation.UPSERT);
  }

  private ArrowBuf buf(byte[] bytes) {
    ArrowBuf buf = h.clientAllocator.buffer(bytes.length);
    buf.writeBytes(bytes);
    return buf;
  }

  /** Sends a raw header and returns "CODE: message" of the failure. */
  private String rawHeader(String json) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator)) {
      RecordingListener listener = new RecordingListener(new CopyOnWriteArrayList<>());
      FlightClient.ClientStreamListener put =
          h.flightClient.startPut(IngestProtocol.descriptor(), root, listener);
      put.putMetadata(buf(json.getBytes(StandardCharsets.UTF_8)));
      put.completed();
      return failureOf(put);
    }
  }

  /** Sends a valid header, then one 2-row batch per metadata string (null: none). */
  private String rawBatches(String... metadata) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(BATCH, h.clientAllocator);
        VectorSchemaRoot data = batch(0, 2)) {
      RecordingListener listener = new RecordingListener(new CopyOnWriteArrayList<>());
      FlightClient.ClientStreamListener put =
          h.flightClient.startPut(IngestProtocol.descriptor(), root, listener);
      put.putMetadata(buf(IngestProtocol.encodeHeader(header("events"))));
      load(root, data);
      for (String m : metadata) {
        if (m == null) {
          put.putNext();
        } else {
          put.putNext(buf(m.getBytes(StandardCharsets.UTF_8)));
        }
      }
      put.completed();
      return failureOf(put);
    }
  }

  private static void load(VectorSchemaRoot target, VectorSchemaRoot source) {
    try (var data = new org.apache.arrow.vector.VectorUnloader(source).getRecordBatch()) {
      new org.apache.arrow.vector.VectorLoader(target).load(data);
    }
  }

  private static String failureOf(FlightClient.ClientStreamListener put) {
    try {
      put.getResult();
      return "OK";
    } catch (FlightRuntimeException e) {
      return e.status().code() + ": " + e.status().description();
    }
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not reached");
      }
      Thread.sleep(5);
    }
  }

  /** Records ack request ids in arrival order. */
  static final class RecordingListener implements FlightClient.PutListener {
    final List<Long> acks;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    RecordingListener(List<Long> acks) {
      this.acks = acks;
    }

    @Override
    public void onNext(PutResult val) {
      ArrowBuf m = val.getApplicationMetadata();
      byte[] bytes = new byte[(int) m.readableBytes()];
      m.getBytes(0, bytes);
      acks.add(IngestProtocol.parseAck(bytes));
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      done.complete(null);
    }

    @Override
    public void getResult() {
      try {
        done.join();
      } catch (java.util.concurrent.CompletionException e) {
        throw e.getCause() instanceof FlightRuntimeException f ? f
            : CallStatus.UNKNOWN.withCause(e).toRuntimeException();
      }
    }
  }
}

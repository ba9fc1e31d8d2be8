package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.ingest.client.IdempotentIngestStream;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code producer-state} action over a real Flight server: a producer's highest durable
 * sequence while it is only in the WAL, after reconciliation advanced {@code producers.json} and
 * garbage collection deleted the segments (asked of a fresh service too), none for an unknown
 * producer, NOT_FOUND for an unknown table; and a failed WAL append that withdraws the
 * producer's later batches, so its durable batches stay a prefix of what it sent.
 */
class ProducerStateTest {
  private static final List<String> NS = List.of("sales", "eu");
  private IngestHarness h;
  private Table events;

  @BeforeEach
  void start() throws Exception {
    h = new IngestHarness();
    events = h.createTable("events", NativeIngestTest.EVENTS, Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  private VectorSchemaRoot batch(long firstId, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(NativeIngestTest.BATCH, h.clientAllocator);
    root.allocateNew();
    for (int i = 0; i < rows; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, firstId + i);
      ((VarCharVector) root.getVector("name")).setSafe(i, ("n" + i).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(rows);
    return root;
  }

  private IdempotentIngestStream open(String producer) {
    return h.client.openIdempotent(new IngestProtocol.Header(IngestHarness.TENANT, NS, "events",
        WalOperation.UPSERT, producer), NativeIngestTest.BATCH, 8, 20, Duration.ofMillis(20));
  }

  private OptionalLong fresh(String producer) {
    try (IngestService cold = new IngestService(h.serverAllocator, id -> h.catalog, h.wal, IngestConfig.defaults())) {
      return cold.lastSequence(new ProducerState.Request(IngestHarness.TENANT, NS, "events", producer));
    }
  }

  @Test
  void theHighestDurableSequenceCountsTheWalAndSurvivesReconcileAndGc() throws Exception {
    assertThat(h.client.lastSequence(IngestHarness.TENANT, NS, "events", "kafka/c/t/0")).isEmpty();
    try (IdempotentIngestStream stream = open("kafka/c/t/0")) {
      // Sequences with gaps (the highest Kafka offset of each batch).
      for (long sequence : new long[] {9, 25, 40}) {
        try (VectorSchemaRoot root = batch(sequence, 3)) {
          stream.send(root, sequence);
        }
      }
      stream.finish();
    }
    assertThat(h.client.lastSequence(IngestHarness.TENANT, NS, "events", "kafka/c/t/0")).hasValue(40);
    assertThat(fresh("kafka/c/t/0")).as("only in the WAL, asked of a fresh server").hasValue(40);
    assertThat(h.client.lastSequence(IngestHarness.TENANT, NS, "events", "kafka/c/t/1")).isEmpty();

    TableWal table = h.walOf(events);
    List<Long> segments = h.wal.segmentsAfter(table, 0);
    long last = segments.get(segments.size() - 1);
    h.wal.advancePublished(table, last);
    assertThat(h.wal.collectGarbage(table, last, Duration.ofDays(7))).isPositive();
    assertThat(h.wal.segmentsAfter(table, 0)).isEmpty();
    assertThat(fresh("kafka/c/t/0")).as("after reconcile and GC").hasValue(40);
    assertThat(h.client.lastSequence(IngestHarness.TENANT, NS, "events", "kafka/c/t/0")).hasValue(40);

    assertThatThrownBy(() -> h.client.lastSequence(IngestHarness.TENANT, NS, "nope", "kafka/c/t/0"))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
  }

  @Test
  void aFailedAppendWithdrawsTheProducersLaterBatches() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    try (var hook = h.store.before(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/") && key.endsWith(".seg"),
            (op, key) -> {
              if (calls.getAndIncrement() == 0) {
                Thread.sleep(400); // the second batch arrives and waits for the next segment
                throw new IllegalStateException("injected: the first segment is not written");
              }
            });
        IdempotentIngestStream stream = open("prefix")) {
      CompletableFuture<Long> first;
      CompletableFuture<Long> second;
      try (VectorSchemaRoot root = batch(0, 2)) {
        first = stream.send(root, 1);
      }
      Thread.sleep(150);
      try (VectorSchemaRoot root = batch(2, 2)) {
        second = stream.send(root, 2);
      }
      assertThat(first.get()).isEqualTo(1);
      assertThat(second.get()).isEqualTo(2);
      stream.finish();
      assertThat(stream.reconnects()).isPositive();
    }
    assertThat(calls.get()).as("the hook ran").isGreaterThan(1);
    assertThat(h.frames(events)).extracting(WalFrame::producer).extracting(p -> p.sequence())
        .as("durable in the order sent: the second batch never overtook the failed first")
        .containsExactly(1L, 2L);
  }
}

package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.ingest.client.IdempotentIngestStream;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import io.storageengine.wal.WalSegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A batch that is durable although the server could not acknowledge it (the WAL state read
 * after the segment's create failed, so the append reported UNAVAILABLE): the idempotent client
 * reconnects and resends it, and the new stream's catch-up with the WAL finds the segment, so the
 * resend is acknowledged as a duplicate and not written again; readers see one frame.
 */
class IdempotentIngestionTest {
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

  private VectorSchemaRoot batch(int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(NativeIngestTest.BATCH, h.clientAllocator);
    root.allocateNew();
    for (int i = 0; i < rows; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, i);
      ((VarCharVector) root.getVector("name")).setSafe(i, ("n" + i).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(rows);
    return root;
  }

  @Test
  void aDurableBatchWhoseAckWasLostIsResentAndReadOnce() throws Exception {
    AtomicBoolean once = new AtomicBoolean();
    // After the first segment is created, the state read that would confirm it fails on every
    // attempt: the append reports UNAVAILABLE although the segment is durable.
    try (var hook = h.store.after(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"), (op, key) -> {
      if (once.compareAndSet(false, true)) {
        h.store.failNext(Operation.GET, 2, k -> k.endsWith("state.json"));
      }
    });
        IdempotentIngestStream stream = h.client.openIdempotent(new IngestProtocol.Header(IngestHarness.TENANT,
            List.of("sales", "eu"), "events", WalOperation.UPSERT, "lost-ack"), NativeIngestTest.BATCH, 8, 20,
            Duration.ofMillis(20));
        VectorSchemaRoot root = batch(3)) {
      assertThat(stream.send(root).get()).isEqualTo(0);
      stream.finish();
      assertThat(stream.reconnects()).isPositive();
      assertThat(stream.duplicates()).isEqualTo(1);
    }
    TableWal table = h.walOf(events);
    List<WalSegment> segments = new ArrayList<>();
    for (long seq : h.wal.segmentsAfter(table, 0)) {
      segments.add(h.wal.read(table, seq).orElseThrow());
    }
    assertThat(segments).as("the resend was not written again").hasSize(1);
    List<WalFrame> kept = new ArrayList<>();
    for (WalSegment s : ProducerDedup.withoutDuplicates(h.wal, table, segments, Duration.ofDays(7))) {
      kept.addAll(s.frames());
    }
    assertThat(kept).hasSize(1);
    assertThat(kept.get(0).producer().producerId()).isEqualTo("lost-ack");
    assertThat(kept.get(0).producer().sequence()).isZero();
  }
}

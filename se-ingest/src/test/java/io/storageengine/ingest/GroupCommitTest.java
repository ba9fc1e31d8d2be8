package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Schema;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The group committer over the real WAL: one segment per window, failures, close. */
class GroupCommitTest {
  final FaultInjectingObjectStore store = new FaultInjectingObjectStore(new MemoryObjectStore());
  final ObjectStoreWal wal = new ObjectStoreWal(store, "w", 1, Duration.ofMillis(1));
  final InMemoryCatalog catalog = catalog();
  final TableWal table = new TableWal("tenant",
      catalog.loadTable(TableIdentifier.of(Namespace.of("a"), "t")).uuid());
  final List<long[]> segments = new CopyOnWriteArrayList<>();

  private static InMemoryCatalog catalog() {
    InMemoryCatalog catalog = new InMemoryCatalog();
    catalog.initialize("tenant", Map.of());
    catalog.createNamespace(Namespace.of("a"));
    catalog.createTable(TableIdentifier.of(Namespace.of("a"), "t"),
        new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
    return catalog;
  }

  GroupCommitter committer(IngestConfig config) {
    return new GroupCommitter(wal, id -> catalog,
        (t, seq, rows, bytes) -> segments.add(new long[] {seq, rows}), config);
  }

  IngestTarget target(boolean entity) {
    return new IngestTarget("tenant", TableIdentifier.of(Namespace.of("a"), "t"), table,
        new Schema(Types.NestedField.required(1, "id", Types.LongType.get())), entity,
        entity ? List.of("id") : List.of(), null, WalOperation.UPSERT);
  }

  static WalFrame frame(long requestId, int bytes) {
    return new WalFrame(WalOperation.UPSERT, 0, new long[] {requestId}, 1, new byte[bytes]);
  }

  @Test
  void writesOneSegmentPerWindowAndRegistersTheTableName() throws Exception {
    long window = millis(200);
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(200)))) {
      TableCommitter c = group.committer(target(true));
      assertThat(group.committer(target(true))).isSameAs(c);
      // The table's first frame is written at once; the frames after it share the next window,
      // which starts one interval after that segment started.
      long firstStart = System.nanoTime();
      assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      for (int i = 2; i <= 6; i++) {
        acks.add(c.submit(frame(i, 10)));
      }
      for (CompletableFuture<Long> ack : acks) {
        assertThat(ack.get(5, TimeUnit.SECONDS)).isEqualTo(2L);
      }
      // The window may close early by the time the segment is expected to take to write (at
      // most half the interval), never sooner: the second segment waited for the window.
      assertThat(System.nanoTime() - firstStart).as("the second segment waited for its window")
          .isGreaterThanOrEqualTo(window / 2);
    }
    assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L, 2L);
    assertThat(wal.read(table, 2).orElseThrow().frames()).extracting(f -> f.requestIds()[0])
        .containsExactly(2L, 3L, 4L, 5L, 6L);
    assertThat(segments).hasSize(2);
    assertThat(segments.get(1)).containsExactly(2L, 5L);
    assertThat(wal.tableName(table)).isEqualTo(Optional.of(new TableName(List.of("a"), "t")));
  }

  @Test
  void aFrameOnAnIdleTableIsWrittenAtOnce() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofHours(1)))) {
      TableCommitter c = group.committer(target(false));
      // No segment of the table started within the interval: nothing to wait for.
      assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      // The next frame waits for the window after that segment's start (an hour here).
      CompletableFuture<Long> second = c.submit(frame(2, 10));
      Thread.sleep(200);
      assertThat(second).isNotDone();
    }
  }

  @Test
  void flushBytesStartASegmentBeforeTheWindowEnds() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofHours(1)).withFlushBytes(100))) {
      TableCommitter c = group.committer(target(true));
      CompletableFuture<Long> first = c.submit(frame(1, 40));
      CompletableFuture<Long> second = c.submit(frame(2, 70));
      assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      // A segment holds at most flush-bytes: the second frame waits for its own window ...
      Thread.sleep(200);
      assertThat(second).isNotDone();
      // ... or until enough bytes are waiting again.
      CompletableFuture<Long> third = c.submit(frame(3, 50));
      assertThat(second.get(5, TimeUnit.SECONDS)).isEqualTo(2L);
      assertThat(third).isNotDone();
    }
  }

  @Test
  void aWindowClosesEarlyByTheExpectedWriteTime() throws Exception {
    // Every segment takes at least 400 ms to write; the interval bounds the wait for the ack.
    store.delay(Operation.PUT_IF_ABSENT, Duration.ofMillis(400));
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(1000)))) {
      TableCommitter c = group.committer(target(false));
      // The table's first frame is written at once (the write is all of its wait) ...
      long first = System.nanoTime();
      CompletableFuture<Long> firstDone = c.submit(frame(1, 1000));
      Thread.sleep(50);
      // ... and a frame arriving during that write waits for the window after it.
      long second = System.nanoTime();
      CompletableFuture<Long> secondDone = c.submit(frame(2, 1000));
      assertThat(firstDone.get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      long firstAck = System.nanoTime() - first;
      assertThat(firstAck).isGreaterThanOrEqualTo(millis(400)).isLessThan(millis(1000));
      // Now a write is known to take 400 ms or more: the window ends that much earlier (but
      // lasts at least half the interval), so the ack comes about one interval after the frame,
      // not one interval after the first segment started plus the write.
      assertThat(secondDone.get(5, TimeUnit.SECONDS)).isEqualTo(2L);
      long secondAck = System.nanoTime() - second;
      // Lower bound: half the interval plus the write. Upper bound relative to the first ack (the
      // write), so a slow machine (both acks late) does not fail the test: the window did end early.
      assertThat(secondAck).isGreaterThanOrEqualTo(millis(900)).isLessThan(millis(1000) + firstAck - millis(200));
    }
  }

  static long millis(long millis) {
    return TimeUnit.MILLISECONDS.toNanos(millis);
  }

  @Test
  void aFailedAppendFailsExactlyItsRequests() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(50)))) {
      TableCommitter c = group.committer(target(true));
      store.failNext(Operation.PUT_IF_ABSENT, 1, key -> key.contains("/wal/"));
      CompletableFuture<Long> failed = c.submit(frame(1, 10));
      assertThatThrownBy(() -> failed.get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
          .hasMessageStartingWith("storage unavailable: could not write the WAL of table "
              + table.tableUuid() + " in catalog `tenant`");
      CompletableFuture<Long> next = c.submit(frame(2, 10));
      assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo(1L);
    }
    assertThat(wal.read(table, 1).orElseThrow().frames()).extracting(f -> f.requestIds()[0])
        .containsExactly(2L);
  }

  @Test
  void segmentsOfATableAreWrittenOneAtATimeInArrivalOrder() throws Exception {
    store.delay(Operation.PUT_IF_ABSENT, Duration.ofMillis(100));
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofHours(1)).withFlushBytes(10))) {
      TableCommitter c = group.committer(target(false));
      for (int i = 1; i <= 4; i++) {
        acks.add(c.submit(frame(i, 10)));
      }
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
    }
    assertThat(acks.stream().map(CompletableFuture::join)).containsExactly(1L, 2L, 3L, 4L);
    // One create per segment: no two appends of ours ever raced for a slot.
    assertThat(store.calls(Operation.PUT_IF_ABSENT)).isEqualTo(4);
  }

  @Test
  void closeFlushesWhatIsPendingAndRefusesNewFrames() throws Exception {
    GroupCommitter group = committer(IngestConfig.defaults().withFlushInterval(Duration.ofHours(1)));
    TableCommitter c = group.committer(target(true));
    assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
    CompletableFuture<Long> pending = c.submit(frame(2, 10));
    Thread.sleep(100);
    assertThat(pending).as("waits for the window after the first segment").isNotDone();
    group.close();
    assertThat(pending).isCompletedWithValue(2L);
    assertThatThrownBy(() -> c.submit(frame(3, 10)))
        .isInstanceOf(SeException.class)
        .hasMessage("ingestion is shutting down: retry");
  }

  @Test
  void aSegmentWrittenAfterTheTableWasDroppedIsNotAcknowledged() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(50)))) {
      TableCommitter c = group.committer(target(false));
      assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      catalog.dropTable(TableIdentifier.of(Namespace.of("a"), "t"));

      CompletableFuture<Long> afterDrop = c.submit(frame(2, 10));
      assertThatThrownBy(() -> afterDrop.get(5, TimeUnit.SECONDS))
          .cause()
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageStartingWith("table `tenant.a.t` was dropped (no table of catalog `tenant` "
              + "has its UUID " + table.tableUuid() + " any more)");
      // Durable in the dropped table's WAL (collected later), but never acknowledged.
      assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L, 2L);
      // Later batches are refused at once, without writing another segment.
      assertThatThrownBy(() -> c.submit(frame(3, 10)))
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining("was dropped");
      assertThat(group.committer(target(false))).as("the dropped table's committer is retired")
          .isNotSameAs(c);
    }
    assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L, 2L);
  }

  @Test
  void aRenamedTableKeepsBeingAcknowledged() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(50)))) {
      TableCommitter c = group.committer(target(false));
      assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      catalog.createNamespace(Namespace.of("b"));
      catalog.renameTable(TableIdentifier.of(Namespace.of("a"), "t"),
          TableIdentifier.of(Namespace.of("b"), "renamed"));
      assertThat(c.submit(frame(2, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(2L);
      assertThat(c.submit(frame(3, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(3L);
    }
  }

  @Test
  void aTableDroppedAndRecreatedUnderTheSameNameIsADroppedTable() throws Exception {
    try (GroupCommitter group = committer(IngestConfig.defaults()
        .withFlushInterval(Duration.ofMillis(50)))) {
      TableCommitter c = group.committer(target(false));
      assertThat(c.submit(frame(1, 10)).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
      TableIdentifier id = TableIdentifier.of(Namespace.of("a"), "t");
      catalog.dropTable(id);
      catalog.createTable(id, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      CompletableFuture<Long> afterDrop = c.submit(frame(2, 10));
      assertThatThrownBy(() -> afterDrop.get(5, TimeUnit.SECONDS))
          .cause()
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageStartingWith("table `tenant.a.t` was dropped");
    }
  }
}

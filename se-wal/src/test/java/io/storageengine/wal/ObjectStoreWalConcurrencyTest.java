package io.storageengine.wal;

import static io.storageengine.testing.FaultInjectingObjectStore.Operation.DELETE;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_ABSENT;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_MATCH;
import static io.storageengine.wal.ObjectStoreWalTest.bytes;
import static io.storageengine.wal.ObjectStoreWalTest.frame;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.LongStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Several actors on one table: writers, a publisher, a garbage collector. */
class ObjectStoreWalConcurrencyTest {
  private static final int WRITERS = 4;

  private final MemoryObjectStore memory = new MemoryObjectStore();
  private final FaultInjectingObjectStore store = new FaultInjectingObjectStore(memory);
  private final TableWal table = new TableWal("acme", UUID.randomUUID());
  private final ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void concurrentWritersProduceAGapFreeDuplicateFreeLog() throws Exception {
    Map<Long, List<WalFrame>> acknowledged = appendConcurrently(40, 3);
    assertReadsBack(acknowledged, WRITERS * 40);
  }

  @Test
  void concurrentWritersWithLostResponsesStillWriteEachAppendOnce() throws Exception {
    store.loseResponseNext(PUT_IF_ABSENT, 12, key -> key.endsWith(".seg"));
    // Enough attempts per call that the 12 lost responses cannot exhaust one append's retries.
    Map<Long, List<WalFrame>> acknowledged = appendConcurrently(25, 20);
    assertReadsBack(acknowledged, WRITERS * 25);
    assertThat(store.calls(PUT_IF_ABSENT)).isGreaterThanOrEqualTo(WRITERS * 25 + 12);
  }

  @Test
  void concurrentWritersWithRealArrowPayloads() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Map<Long, List<WalFrame>>>> futures = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        ObjectStoreWal wal = new ObjectStoreWal(store, "arrow-writer-" + w);
        futures.add(pool.submit(() -> {
          Map<Long, List<WalFrame>> mine = new ConcurrentHashMap<>();
          start.await();
          for (int i = 0; i < 10; i++) {
            long firstId = writer * 1000L + i * 10L;
            List<WalFrame> frames = List.of(new WalFrame(WalOperation.UPSERT, 1,
                new long[] {i + 1}, 3, ArrowPayloads.rows(allocator, firstId, 3)));
            mine.put(wal.append(table, frames), frames);
          }
          return mine;
        }));
      }
      start.countDown();
      Map<Long, List<WalFrame>> acknowledged = collect(futures);
      assertReadsBack(acknowledged, WRITERS * 10);

      List<Long> ids = new ArrayList<>();
      ObjectStoreWal reader = new ObjectStoreWal(memory, "reader");
      for (long seq : reader.segmentsAfter(table, 0)) {
        byte[] ipc = reader.read(table, seq).orElseThrow().frames().get(0).arrowIpc();
        ids.addAll(ArrowPayloads.read(allocator, ipc).ids());
      }
      assertThat(ids).hasSize(WRITERS * 10 * 3).doesNotHaveDuplicates();
    }
  }

  @Test
  void writerPausedAfterCreateRewritesAboveACollectedSlot() throws Exception {
    ObjectStoreWal paused = new ObjectStoreWal(store, "paused-writer");
    ObjectStoreWal actor = new ObjectStoreWal(memory, "actor"); // not subject to the pause
    CountDownLatch created = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean once = new AtomicBoolean();
    store.after(PUT_IF_ABSENT, key -> key.equals(table.segmentKey(1)), (op, key) -> {
      if (once.compareAndSet(false, true)) {
        created.countDown();
        assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
      }
    });
    List<WalFrame> frames = List.of(frame(99, bytes("paused rows")));
    Future<Long> append = pool.submit(() -> paused.append(table, frames));
    assertThat(created.await(10, TimeUnit.SECONDS)).isTrue();

    // While the writer sleeps between its create and its state check, others move on.
    assertThat(actor.append(table, List.of(frame(1, bytes("a"))))).isEqualTo(2);
    assertThat(actor.append(table, List.of(frame(2, bytes("b"))))).isEqualTo(3);
    actor.advancePublished(table, 3);
    assertThat(actor.collectGarbage(table, 3)).isEqualTo(3);
    assertThat(append).isNotDone();
    release.countDown();

    assertThat(append.get(10, TimeUnit.SECONDS)).isEqualTo(4);
    assertThat(actor.segmentsAfter(table, 0)).containsExactly(4L);
    WalSegment rewritten = actor.read(table, 4).orElseThrow();
    assertThat(rewritten.writerId()).isEqualTo("paused-writer");
    WalSegmentCodecTest.assertSameFrame(rewritten.frames().get(0), frames.get(0));
    assertThat(store.calls(DELETE)).isEqualTo(1);
  }

  @Test
  void writerWithStaleStateLandingInARecycledSlotDeletesAndRewrites() throws Exception {
    ObjectStoreWal paused = new ObjectStoreWal(store, "stale-writer");
    ObjectStoreWal actor = new ObjectStoreWal(memory, "actor");
    CountDownLatch chosen = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean once = new AtomicBoolean();
    store.before(PUT_IF_ABSENT, key -> key.equals(table.segmentKey(1)), (op, key) -> {
      if (once.compareAndSet(false, true)) {
        chosen.countDown();
        assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
      }
    });
    List<WalFrame> frames = List.of(frame(7, bytes("late rows")));
    Future<Long> append = pool.submit(() -> paused.append(table, frames));
    assertThat(chosen.await(10, TimeUnit.SECONDS)).isTrue();

    // The writer chose slot 1 from state it read; slot 1 is filled, published and collected.
    actor.append(table, List.of(frame(1, bytes("a"))));
    actor.append(table, List.of(frame(2, bytes("b"))));
    actor.advancePublished(table, 2);
    assertThat(actor.collectGarbage(table, 2)).isEqualTo(2);
    release.countDown();

    assertThat(append.get(10, TimeUnit.SECONDS)).isEqualTo(3);
    assertThat(memory.get(table.segmentKey(1))).isEmpty();
    assertThat(actor.segmentsAfter(table, 0)).containsExactly(3L);
    WalSegmentCodecTest.assertSameFrame(
        actor.read(table, 3).orElseThrow().frames().get(0), frames.get(0));
  }

  @Test
  void concurrentStateChangesNeverLowerEitherSeq() throws Exception {
    store.loseResponseNext(PUT_IF_MATCH, 20);
    AtomicBoolean done = new AtomicBoolean();
    Future<Integer> observer = pool.submit(() -> {
      ObjectStoreWal watcher = new ObjectStoreWal(memory, "watcher");
      WalState last = WalState.EMPTY;
      int reads = 0;
      while (!done.get()) {
        WalState now = watcher.state(table);
        assertThat(now.publishedSeq()).isGreaterThanOrEqualTo(last.publishedSeq());
        assertThat(now.gcSeq()).isGreaterThanOrEqualTo(last.gcSeq())
            .isLessThanOrEqualTo(now.publishedSeq());
        last = now;
        reads++;
      }
      return reads;
    });
    List<Future<Long>> actors = new ArrayList<>();
    for (int a = 0; a < WRITERS; a++) {
      long seed = a;
      ObjectStoreWal wal = new ObjectStoreWal(store, "state-actor-" + a, 30, Duration.ZERO);
      actors.add(pool.submit(() -> {
        Random random = new Random(seed);
        long highestAdvanced = 0;
        for (int i = 0; i < 60; i++) {
          long value = 1 + random.nextInt(10_000);
          if (i % 4 == 3) {
            wal.collectGarbage(table, value);
          } else {
            highestAdvanced = Math.max(highestAdvanced, value);
            wal.advancePublished(table, value);
            assertThat(wal.state(table).publishedSeq()).isGreaterThanOrEqualTo(value);
          }
        }
        return highestAdvanced;
      }));
    }
    long highestPublished = 0;
    for (Future<Long> f : actors) {
      highestPublished = Math.max(highestPublished, f.get(30, TimeUnit.SECONDS));
    }
    done.set(true);
    assertThat(observer.get(10, TimeUnit.SECONDS)).isPositive();

    WalState end = new ObjectStoreWal(memory, "check").state(table);
    assertThat(end.publishedSeq()).isEqualTo(highestPublished);
    assertThat(end.gcSeq()).isPositive().isLessThanOrEqualTo(end.publishedSeq());
  }

  /** Each writer appends {@code perWriter} segments of 1-2 frames; returns seq -> frames. */
  private Map<Long, List<WalFrame>> appendConcurrently(int perWriter, int attempts)
      throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Map<Long, List<WalFrame>>>> futures = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      ObjectStoreWal wal = new ObjectStoreWal(store, "writer-" + w, attempts, Duration.ZERO);
      Random random = new Random(w);
      futures.add(pool.submit(writer(wal, random, perWriter, start)));
    }
    start.countDown();
    return collect(futures);
  }

  private Callable<Map<Long, List<WalFrame>>> writer(
      ObjectStoreWal wal, Random random, int appends, CountDownLatch start) {
    return () -> {
      Map<Long, List<WalFrame>> mine = new ConcurrentHashMap<>();
      start.await();
      for (int i = 0; i < appends; i++) {
        List<WalFrame> frames = new ArrayList<>();
        for (int f = 0, n = 1 + random.nextInt(2); f < n; f++) {
          byte[] payload = new byte[16 + random.nextInt(200)];
          random.nextBytes(payload);
          frames.add(new WalFrame(f == 0 ? WalOperation.UPSERT : WalOperation.DELETE,
              random.nextInt(5), new long[] {random.nextLong(), i}, random.nextInt(100), payload));
        }
        long seq = wal.append(table, frames);
        assertThat(mine.put(seq, frames)).as("seq %d acknowledged twice", seq).isNull();
      }
      return mine;
    };
  }

  private static Map<Long, List<WalFrame>> collect(
      List<Future<Map<Long, List<WalFrame>>>> futures) throws Exception {
    Map<Long, List<WalFrame>> all = new ConcurrentHashMap<>();
    for (Future<Map<Long, List<WalFrame>>> f : futures) {
      for (Map.Entry<Long, List<WalFrame>> e : f.get(60, TimeUnit.SECONDS).entrySet()) {
        assertThat(all.put(e.getKey(), e.getValue()))
            .as("seq %d acknowledged to two writers", e.getKey()).isNull();
      }
    }
    return all;
  }

  private void assertReadsBack(Map<Long, List<WalFrame>> acknowledged, int expected) {
    ObjectStoreWal reader = new ObjectStoreWal(memory, "reader");
    List<Long> expectedSeqs = LongStream.rangeClosed(1, expected).boxed().toList();
    assertThat(acknowledged.keySet()).containsExactlyInAnyOrderElementsOf(expectedSeqs);
    assertThat(reader.segmentsAfter(table, 0)).containsExactlyElementsOf(expectedSeqs);
    for (Map.Entry<Long, List<WalFrame>> e : acknowledged.entrySet()) {
      WalSegment segment = reader.read(table, e.getKey()).orElseThrow();
      assertThat(segment.frames()).hasSameSizeAs(e.getValue());
      for (int i = 0; i < e.getValue().size(); i++) {
        WalSegmentCodecTest.assertSameFrame(segment.frames().get(i), e.getValue().get(i));
      }
    }
  }
}

package io.storageengine.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import io.storageengine.testing.FaultInjectingObjectStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Frames of idempotent writes: the version 2 format, the windows' rules and producers.json. */
class ProducerFramesTest {
  private static final UUID TABLE = UUID.fromString("6f1c1d2e-0a4b-4c8d-9e0f-112233445566");
  private static final Duration DAY = Duration.ofDays(1);

  @Test
  void framesWithAProducerRoundTripInVersionTwoAndPlainSegmentsStayVersionOne() {
    WalFrame plain = frame(null);
    WalFrame stamped = frame(new ProducerStamp("orders-7:p/1", 42, 1_000));
    byte[] v2 = WalSegmentCodec.encode("w", "n", TABLE, List.of(plain, stamped));
    byte[] v1 = WalSegmentCodec.encode("w", "n", TABLE, List.of(plain));

    assertThat(WalSegmentCodec.decodeHeader("k", v2).version()).isEqualTo(2);
    assertThat(WalSegmentCodec.decodeHeader("k", v1).version()).isEqualTo(1);
    WalSegment decoded = WalSegmentCodec.decode("k", 3, v2);
    assertThat(decoded.frames().get(0).producer()).isNull();
    assertThat(decoded.frames().get(1).producer()).isEqualTo(stamped.producer());
    assertThat(decoded.frames().get(1).arrowIpc()).isEqualTo(stamped.arrowIpc());
    assertThat(WalSegmentCodec.encode(decoded)).isEqualTo(v2);
    assertThat(WalSegmentCodec.decode("k", 1, v1).frames().get(0).producer()).isNull();

    v2[v2.length - 5] ^= 1; // in the last frame's Arrow IPC bytes
    assertThatThrownBy(() -> WalSegmentCodec.decode("k", 3, v2)).isInstanceOf(SeException.class)
        .hasMessageContaining("frame 1: checksum mismatch");
  }

  @Test
  void producerIdsAreChecked() {
    assertThatThrownBy(() -> ProducerStamp.checkProducerId("", "field `producer_id`"))
        .hasMessageContaining("field `producer_id` must be a non-empty string");
    assertThatThrownBy(() -> ProducerStamp.checkProducerId("a b", "field `producer_id`"))
        .hasMessageContaining("field `producer_id` must start with a letter or digit");
    assertThatThrownBy(() -> ProducerStamp.checkProducerId("x".repeat(129), "field `producer_id`"))
        .hasMessageContaining("at most 128 characters");
    assertThatThrownBy(() -> new ProducerStamp("p", -1, 0)).hasMessageContaining("sequence must be >= 0");
  }

  @Test
  void theFirstFrameOfAPairCountsEveryLaterOneIsADuplicate() {
    ProducerWindows windows = new ProducerWindows();
    ProducerStamp one = new ProducerStamp("p", 1, 1_000);
    assertThat(windows.admit(one, 5, 0, DAY)).isTrue();
    assertThat(windows.admit(one, 5, 0, DAY)).as("the same frame again").isTrue();
    assertThat(windows.admit(one, 5, 1, DAY)).as("a later frame of the segment").isFalse();
    assertThat(windows.admit(one, 6, 0, DAY)).as("a later segment").isFalse();
    assertThat(windows.admit(new ProducerStamp("q", 1, 1_000), 6, 1, DAY)).as("another producer").isTrue();
    assertThat(windows.lookup("p", 1, 2_000, DAY)).isEqualTo(ProducerWindows.Lookup.DUPLICATE);
    assertThat(windows.lookup("p", 2, 2_000, DAY)).isEqualTo(ProducerWindows.Lookup.NEW);

    ProducerWindows parsed = ProducerWindows.parse("k", windows.toJson());
    assertThat(parsed.admit(one, 6, 0, DAY)).as("after a round trip through JSON").isFalse();
    assertThat(parsed.admit(one, 5, 0, DAY)).isTrue();
  }

  @Test
  void aFullWindowDropsItsLowestSequencesAndAnIdleProducerExpires() {
    ProducerWindows windows = new ProducerWindows();
    for (int s = 0; s < ProducerWindows.WINDOW + 10; s++) {
      windows.admit(new ProducerStamp("p", s, 1_000), s + 1, 0, DAY);
    }
    assertThat(windows.lowestRemembered("p")).isEqualTo(10);
    assertThat(windows.lookup("p", 9, 1_000, DAY)).isEqualTo(ProducerWindows.Lookup.BELOW_WINDOW);
    assertThat(windows.lookup("p", 10, 1_000, DAY)).isEqualTo(ProducerWindows.Lookup.DUPLICATE);

    long later = 1_000 + DAY.toMillis() + 1;
    assertThat(windows.lookup("p", 10, later, DAY)).as("idle longer than the retention").isEqualTo(ProducerWindows.Lookup.NEW);
    assertThat(windows.admit(new ProducerStamp("p", 10, later), 500, 0, DAY))
        .as("readers apply the same rule by the frames' write times").isTrue();
    windows.expire(later + DAY.toMillis() + 1, DAY);
    assertThat(windows.producerCount()).isZero();
  }

  @Test
  void garbageCollectionFoldsWhatItDeletesIntoProducersJson() {
    try (MemoryObjectStore store = new MemoryObjectStore()) {
      ObjectStoreWal wal = new ObjectStoreWal(store, "writer");
      TableWal table = new TableWal("c", TABLE);
      ProducerWindows start = wal.catchUpProducerWindows(table, null, DAY);
      assertThat(start.producerCount()).isZero();
      assertThat(store.get(table.producersKey())).isPresent();
      long now = System.currentTimeMillis();
      long first = wal.append(table, List.of(frame(new ProducerStamp("p", 0, now))));
      long second = wal.append(table, List.of(frame(new ProducerStamp("p", 0, now)),
          frame(new ProducerStamp("p", 1, now))));
      List<WalSegment> segments = List.of(wal.read(table, first).orElseThrow(), wal.read(table, second).orElseThrow());
      List<WalSegment> unique = ProducerDedup.withoutDuplicates(wal, table, segments, DAY);
      assertThat(unique.get(0).frames()).hasSize(1);
      assertThat(unique.get(1).frames()).extracting(f -> f.producer().sequence()).containsExactly(1L);

      wal.advancePublished(table, second);
      assertThat(wal.collectGarbage(table, second, DAY)).isEqualTo(2);
      assertThat(wal.read(table, first)).isEmpty();
      ProducerWindows after = wal.producerWindows(table, second + 1, DAY);
      assertThat(after.throughSeq()).isEqualTo(second);
      assertThat(after.lookup("p", 0, now, DAY)).isEqualTo(ProducerWindows.Lookup.DUPLICATE);
      assertThat(after.lookup("p", 1, now, DAY)).isEqualTo(ProducerWindows.Lookup.DUPLICATE);
      assertThat(after.lookup("p", 2, now, DAY)).isEqualTo(ProducerWindows.Lookup.NEW);
      long third = wal.append(table, List.of(frame(new ProducerStamp("p", 1, now))));
      assertThat(ProducerDedup.withoutDuplicates(wal, table, List.of(wal.read(table, third).orElseThrow()), DAY)
          .get(0).frames()).as("a resend after GC").isEmpty();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aDedupPassOverTheTailReadsProducersJsonOnceAndResumesFromItsState() throws Exception {
    try (FaultInjectingObjectStore store = new FaultInjectingObjectStore(new MemoryObjectStore())) {
      ObjectStoreWal wal = new ObjectStoreWal(store, "writer");
      TableWal table = new TableWal("c", TABLE);
      wal.catchUpProducerWindows(table, null, DAY);
      long now = System.currentTimeMillis();
      long plain = wal.append(table, List.of(frame(null)));
      List<Long> seqs = new ArrayList<>();
      seqs.add(plain);
      for (int i = 0; i < 40; i++) {
        // Each batch is sent once and resent once in the next segment: segment k (k >= 2 in
        // the list) carries sequences k-2 (a resend) and k-1.
        seqs.add(wal.append(table, i == 0 ? List.of(frame(new ProducerStamp("p", 0, now)))
            : List.of(frame(new ProducerStamp("p", i - 1, now)), frame(new ProducerStamp("p", i, now)))));
      }
      List<WalSegment> segments = new ArrayList<>();
      for (long seq : seqs) {
        segments.add(wal.read(table, seq).orElseThrow());
      }
      AtomicLong producerReads = new AtomicLong();
      AtomicLong segmentReads = new AtomicLong();
      try (FaultInjectingObjectStore.Registration ignored = store.before(FaultInjectingObjectStore.Operation.GET,
          key -> true, (op, key) -> (key.equals(table.producersKey()) ? producerReads : segmentReads).incrementAndGet())) {
        List<WalSegment> expected = ProducerDedup.withoutDuplicates(wal, table, segments, DAY);
        producerReads.set(0);
        segmentReads.set(0);
        ProducerDedup.Pass pass = new ProducerDedup.Pass(wal, table, DAY, ProducerDedup.State.START,
            seq -> wal.read(table, seq).orElseThrow());
        List<WalSegment> unique = new ArrayList<>();
        for (WalSegment segment : segments.subList(0, 20)) {
          unique.add(pass.withoutDuplicates(segment));
        }
        ProducerDedup.Pass resumed = new ProducerDedup.Pass(wal, table, DAY, pass.state(),
            seq -> wal.read(table, seq).orElseThrow());
        for (WalSegment segment : segments.subList(20, segments.size())) {
          unique.add(resumed.withoutDuplicates(segment));
        }
        assertThat(unique).usingRecursiveFieldByFieldElementComparator().isEqualTo(expected);
        assertThat(unique.stream().mapToLong(s -> s.frames().size()).sum()).as("each batch once").isEqualTo(41);
        assertThat(producerReads).as("producers.json, for 41 segments").hasValue(1);
        assertThat(segmentReads).as("segments the caller gave").hasValue(0);

        // Segments a caller skips (staged before) are read only once windows are kept.
        producerReads.set(0);
        ProducerDedup.Pass skipping = new ProducerDedup.Pass(wal, table, DAY, ProducerDedup.State.START,
            seq -> wal.read(table, seq).orElseThrow());
        assertThat(skipping.withoutDuplicates(segments.get(0)).frames()).hasSize(1);
        assertThat(skipping.withoutDuplicates(segments.get(5)).frames()).extracting(f -> f.producer().sequence())
            .containsExactly(4L);
        segmentReads.set(0);
        assertThat(skipping.withoutDuplicates(segments.get(9)).frames()).extracting(f -> f.producer().sequence())
            .containsExactly(8L);
        assertThat(segmentReads).as("segments 6-8, skipped").hasValue(3);
        assertThat(producerReads).hasValue(1);
        assertThatThrownBy(() -> skipping.withoutDuplicates(segments.get(9))).isInstanceOf(IllegalArgumentException.class);
      }
    }
  }

  @Test
  void aDamagedProducersFileIsInternal() {
    assertThatThrownBy(() -> ProducerWindows.parse("k", "{\"x\":1}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOfSatisfying(SeException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
        .hasMessageContaining("corrupt producer windows k");
  }

  private static WalFrame frame(ProducerStamp stamp) {
    return new WalFrame(WalOperation.UPSERT, 1, new long[] {1}, 1,
        "ipc".getBytes(StandardCharsets.UTF_8), stamp);
  }
}

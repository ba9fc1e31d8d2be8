package io.storageengine.wal;

import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStore.Blob;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;

/**
 * Reads and advances a table's {@code producers.json} ({@link ProducerWindows}), only by
 * compare-and-swap: a change that lost a race is made again on the state that won. It only
 * ever moves forward: {@code through_seq} never decreases, so garbage collection, which raises
 * it over the segments it is about to delete first, never forgets what those segments held.
 */
final class ProducerWindowFile {
  private final ObjectStore store;
  private final StoreRetry retry;

  ProducerWindowFile(ObjectStore store, StoreRetry retry) {
    this.store = store;
    this.retry = retry;
  }

  /** The stored windows, empty when the table never had a producer. */
  Optional<ProducerWindows> read(TableWal table) {
    return readVersioned(table).map(Versioned::windows);
  }

  /** Creates an empty file unless one exists (before a first producer frame is appended). */
  void ensureExists(TableWal table) {
    String key = table.producersKey();
    if (readVersioned(table).isEmpty()) {
      // A lost race means another writer created it: as good.
      retry.call("create " + key, () -> store.putIfAbsent(key, new ProducerWindows().toJson()));
    }
  }

  /**
   * Folds the segments up to {@code throughSeq} into the stored windows (taken from
   * {@code known} when there, else read with {@code reader} one at a time and not kept; missing
   * ones are skipped), expires
   * idle producers as of {@code nowMillis}, and stores the result. Does nothing when the file
   * does not exist (no producer ever wrote) or is already that far.
   */
  void advance(TableWal table, long throughSeq, Duration retention, long nowMillis,
      List<WalSegment> known, LongFunction<Optional<WalSegment>> reader) {
    String key = table.producersKey();
    Map<Long, WalSegment> bySeq = new HashMap<>();
    for (WalSegment segment : known) {
      bySeq.put(segment.seq(), segment);
    }
    while (true) {
      Optional<Versioned> current = readVersioned(table);
      if (current.isEmpty() || current.get().windows().throughSeq() >= throughSeq) {
        return;
      }
      ProducerWindows windows = current.get().windows();
      for (long seq = windows.throughSeq() + 1; seq <= throughSeq; seq++) {
        // A segment read here is not kept for a retry after a lost race (read again then): GC
        // advances over every segment it collects, which after a long backlog is gigabytes.
        WalSegment segment = bySeq.get(seq);
        Optional<WalSegment> found = segment != null ? Optional.of(segment) : reader.apply(seq);
        found.ifPresent(s -> windows.fold(s, retention));
      }
      windows.foldedThrough(throughSeq);
      windows.expire(nowMillis, retention);
      byte[] json = windows.toJson();
      if (retry.call("update " + key, () -> store.putIfMatch(key, json, current.get().etag()))
          .isPresent()) {
        return;
      }
    }
  }

  private Optional<Versioned> readVersioned(TableWal table) {
    String key = table.producersKey();
    Optional<Blob> blob = retry.call("read " + key, () -> store.get(key));
    return blob.map(b -> new Versioned(ProducerWindows.parse(key, b.data()), b.etag()));
  }

  private record Versioned(ProducerWindows windows, String etag) {}
}

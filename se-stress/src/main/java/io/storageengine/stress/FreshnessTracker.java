package io.storageengine.stress;

import java.util.PriorityQueue;

/**
 * Freshness of one table: the time from a batch's ack until the freshness probe (a
 * {@code SELECT max(column)} through Flight SQL) first shows a value at least as large as the
 * largest the batch wrote. Batches of one WAL segment are published together, so the first
 * visible row of a batch means the batch is visible. With a point probe, the time from the ack
 * of the last upsert batch until a query of its first key alone shows the batch's version (a
 * sample per probe, not per batch). Thread-safe.
 */
final class FreshnessTracker {
  private final PriorityQueue<long[]> pending = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
  private final LatencyRecorder recorder;
  private long visible = Long.MIN_VALUE;

  FreshnessTracker(LatencyRecorder recorder) {
    this(recorder, false);
  }

  /** The first key and version of the last upsert batch acknowledged, and when: {key, version, ackNanos}. */
  private long[] lastPoint;
  /** Whether the probe reads points ({@link #lastPoint}) rather than the column's maximum. */
  private final boolean points;

  /** A tracker of a probe of the column's maximum ({@code points} false) or of single keys. */
  FreshnessTracker(LatencyRecorder recorder, boolean points) {
    this.recorder = recorder;
    this.points = points;
  }

  /** {@code batch} was acknowledged at {@code ackNanos}. */
  synchronized void acked(PlannedBatch batch, long ackNanos) {
    if (!points) {
      acked(batch.freshnessMark(), ackNanos);
    } else if (batch.operation() != io.storageengine.wal.WalOperation.DELETE && batch.rows() > 0) {
      lastPoint = new long[] {batch.ids()[0], batch.versions()[0], ackNanos};
    }
  }

  /** The last upsert batch's first key, its version and the batch's ack time; null when none (or taken). */
  synchronized long[] takePoint() {
    long[] point = lastPoint;
    lastPoint = null;
    return point;
  }

  /** The point probe saw {@code point} ({@link #takePoint}) at {@code nowNanos}. */
  void observedPoint(long[] point, long nowNanos) {
    recorder.record(nowNanos - point[2], point[2]);
  }

  /** A batch whose probed column reaches {@code mark} was acknowledged at {@code ackNanos}. */
  synchronized void acked(long mark, long ackNanos) {
    if (mark < 0) {
      return;
    }
    if (mark <= visible) {
      recorder.record(0, ackNanos); // already visible when acknowledged (another batch published it)
      return;
    }
    pending.add(new long[] {mark, ackNanos});
  }

  /** The probe saw {@code max} at {@code nowNanos}. */
  synchronized void observed(long max, long nowNanos) {
    visible = Math.max(visible, max);
    while (!pending.isEmpty() && pending.peek()[0] <= visible) {
      long ackNanos = pending.poll()[1];
      recorder.record(nowNanos - ackNanos, ackNanos);
    }
  }

  /** Acknowledged batches not yet seen by the probe. */
  synchronized int unresolved() {
    return pending.size();
  }
}

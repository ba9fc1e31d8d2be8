package io.storageengine.stress;

import java.util.PriorityQueue;

/**
 * Freshness of one table: the time from a batch's ack until the freshness probe (a
 * {@code SELECT max(column)} through Flight SQL) first shows a value at least as large as the
 * largest the batch wrote. Batches of one WAL segment are published together, so the first
 * visible row of a batch means the batch is visible. Thread-safe.
 */
final class FreshnessTracker {
  private final PriorityQueue<long[]> pending = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
  private final LatencyRecorder recorder;
  private long visible = Long.MIN_VALUE;

  FreshnessTracker(LatencyRecorder recorder) {
    this.recorder = recorder;
  }

  /** A batch whose probed column reaches {@code mark} was acknowledged at {@code ackNanos}. */
  synchronized void acked(long mark, long ackNanos) {
    if (mark < 0) {
      return;
    }
    if (mark <= visible) {
      recorder.record(0); // already visible when acknowledged (another batch published it)
      return;
    }
    pending.add(new long[] {mark, ackNanos});
  }

  /** The probe saw {@code max} at {@code nowNanos}. */
  synchronized void observed(long max, long nowNanos) {
    visible = Math.max(visible, max);
    while (!pending.isEmpty() && pending.peek()[0] <= visible) {
      recorder.record(nowNanos - pending.poll()[1]);
    }
  }

  /** Acknowledged batches not yet seen by the probe. */
  synchronized int unresolved() {
    return pending.size();
  }
}

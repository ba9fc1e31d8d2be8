package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for one table (ARCHITECTURE.md 6.4): collects validated frames for the flush
 * interval, or until flush-bytes are waiting, writes them as ONE WAL segment, then completes
 * every request in it with the segment's seq. A failed append fails exactly the requests in that
 * segment, with UNAVAILABLE.
 *
 * <p>The window is the interval between the starts of a table's segments: a segment starts one
 * flush interval after the previous one started, so a table busy with writes gets about one
 * segment per interval, and a frame arriving when the table's last segment started an interval
 * ago or more (an idle table, or its first frame) is written at once instead of waiting a window
 * no other frame shares. The flush interval also bounds how long a frame waits for its ack, so a
 * window closes early by the time the segment is expected to take to write, at most half the
 * interval: the oldest frame of a segment is then acknowledged about one interval after it
 * arrived, instead of one interval plus a whole segment write. The expectation is learnt from the
 * recent appends of this table, like a TCP retransmission timeout: their mean duration plus twice
 * their mean deviation, scaled by the bytes waiting, so that a slower than average write rarely
 * makes the ack late.
 *
 * <p>A table writes one segment at a time: the WAL then keeps the arrival order of frames (it
 * decides between equal versions of entity rows), and our own appends never race for the same
 * sequence number, which would cost the loser a whole rewritten segment. Overlapping appends
 * would also leave a gap before a later segment whenever an earlier one fails, and the
 * reconciler reads only the contiguous prefix of the WAL. Frames keep collecting while a segment
 * is written; a segment holds at most flush-bytes (or one larger frame).
 *
 * <p>Once a segment is durable, and before any of its requests is acknowledged, the table's
 * identity is confirmed ({@link TableIdentityCheck}): when the table was dropped, the segment's
 * requests fail NOT_FOUND, so do all waiting and later ones, and the committer is retired. The
 * segment itself stays in the dropped table's WAL until that WAL is collected.
 */
final class TableCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(TableCommitter.class);
  /** A timer is moved earlier only by more than this, so that not every frame reschedules it. */
  private static final long TIMER_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /** Weight of the newest append in the moving averages of {@link #recordWrite}. */
  private static final double WRITE_AVERAGE_WEIGHT = 0.3;

  private final TableWal table;
  private final WalWriter wal;
  private final ScheduledExecutorService executor;
  private final IngestListener listener;
  private final long intervalNanos;
  private final long flushBytes;
  private final TableIdentityCheck identity;
  private final Runnable onDropped;

  private final Object lock = new Object();
  private final ArrayDeque<PendingWrite> pending = new ArrayDeque<>();
  private long pendingBytes;
  private boolean flushing;
  private boolean closing;
  /** The writes of the segment being written (empty between segments). */
  private List<PendingWrite> writing = List.of();
  /**
   * Producers a failed append left with a gap: their frames are refused until a stream of the
   * producer opens again ({@link #producerOpened}), so a producer's durable batches are always
   * a prefix of what it sent.
   */
  private final Set<String> brokenProducers = new HashSet<>();
  /** Set once the table is known to be dropped: every request from then on fails with it. */
  private SeException dropped;
  private ScheduledFuture<?> timer;
  private long timerDueNanos;
  /** When the table's last segment started (an interval before the committer was made: none yet). */
  private long lastFlushNanos;
  /** Moving averages of recent appends of this table: duration, its deviation, and size. */
  private double recentWriteNanos;
  private double recentWriteDeviation;
  private double recentWriteBytes;

  /** A frame waiting for its segment. */
  private record PendingWrite(WalFrame frame, long enqueuedNanos, CompletableFuture<Long> done) {}

  /**
   * @param identity confirms the table still exists after each segment is durable
   * @param onDropped called once when the table turned out to be dropped (to retire this)
   */
  TableCommitter(TableWal table, WalWriter wal, ScheduledExecutorService executor,
      IngestListener listener, IngestConfig config, TableIdentityCheck identity,
      Runnable onDropped) {
    this.table = table;
    this.identity = identity;
    this.onDropped = onDropped;
    this.wal = wal;
    this.executor = executor;
    this.listener = listener;
    this.intervalNanos = config.flushInterval().toNanos();
    this.flushBytes = config.flushBytes();
    this.lastFlushNanos = System.nanoTime() - intervalNanos;
  }

  /**
   * Queues {@code frame}; the future completes with the seq of the segment holding it.
   * UNAVAILABLE for a frame of a producer whose earlier frame failed since its stream opened.
   */
  CompletableFuture<Long> submit(WalFrame frame) {
    PendingWrite write = new PendingWrite(frame, System.nanoTime(), new CompletableFuture<>());
    synchronized (lock) {
      if (dropped != null) {
        throw dropped;
      }
      if (frame.producer() != null && brokenProducers.contains(frame.producer().producerId())) {
        throw new SeException(ErrorCode.UNAVAILABLE, "an earlier batch of producer `"
            + frame.producer().producerId() + "` could not be written: reopen the stream and "
            + "resend from the first unacknowledged batch");
      }
      if (closing) {
        throw new SeException(ErrorCode.UNAVAILABLE, "ingestion is shutting down: retry");
      }
      pending.add(write);
      pendingBytes += frame.arrowIpc().length;
      scheduleLocked();
    }
    return write.done();
  }

  /** A stream of {@code producerId} opened: its frames are taken again (see {@link #submit}). */
  void producerOpened(String producerId) {
    synchronized (lock) {
      brokenProducers.remove(producerId);
    }
  }

  /**
   * Completes once every frame queued or being written when it is called is durable or failed
   * (never exceptionally): afterwards no frame submitted before the call can still change the
   * table's WAL through this process.
   */
  CompletableFuture<Void> settled() {
    List<CompletableFuture<Long>> waits = new ArrayList<>();
    synchronized (lock) {
      writing.forEach(w -> waits.add(w.done()));
      pending.forEach(w -> waits.add(w.done()));
    }
    return CompletableFuture.allOf(waits.stream()
        .map(f -> f.handle((seq, error) -> null)).toArray(CompletableFuture[]::new));
  }

  /** Flushes everything waiting and refuses new frames; returns when the last segment is done. */
  void close() {
    synchronized (lock) {
      closing = true;
      scheduleLocked();
      while (flushing || !pending.isEmpty()) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private void scheduleLocked() {
    if (flushing || pending.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    // The earlier of: one interval after the last segment started (at once on an idle table), and
    // the oldest frame's ack bound.
    long bound = pending.peek().enqueuedNanos() + intervalNanos - expectedWriteNanosLocked();
    long next = lastFlushNanos + intervalNanos;
    long due = next - bound < 0 ? next : bound;
    if (closing || pendingBytes >= flushBytes || due - now <= 0) {
      cancelTimerLocked();
      flushing = true;
      executor.execute(this::flush);
    } else if (timer == null || due - timerDueNanos < -TIMER_SLACK_NANOS) {
      // More bytes arrived, so the expected write takes longer: the window closes earlier.
      cancelTimerLocked();
      timerDueNanos = due;
      timer = executor.schedule(() -> onTimer(due), due - now, TimeUnit.NANOSECONDS);
    }
  }

  private void cancelTimerLocked() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  /** How long writing what is pending is expected to take: at most half the interval. */
  private long expectedWriteNanosLocked() {
    if (recentWriteBytes <= 0) {
      return 0;
    }
    double expected = (recentWriteNanos + 2 * recentWriteDeviation)
        * (pendingBytes / recentWriteBytes);
    return (long) Math.min(expected, intervalNanos / 2.0);
  }

  private void recordWrite(long nanos, long bytes) {
    synchronized (lock) {
      if (recentWriteBytes <= 0) {
        recentWriteNanos = nanos;
        recentWriteDeviation = nanos / 2.0;
        recentWriteBytes = Math.max(1, bytes);
      } else {
        recentWriteDeviation +=
            WRITE_AVERAGE_WEIGHT * (Math.abs(nanos - recentWriteNanos) - recentWriteDeviation);
        recentWriteNanos += WRITE_AVERAGE_WEIGHT * (nanos - recentWriteNanos);
        recentWriteBytes += WRITE_AVERAGE_WEIGHT * (Math.max(1, bytes) - recentWriteBytes);
      }
    }
  }

  private void onTimer(long due) {
    synchronized (lock) {
      // A timer cancelled too late to stop it must not forget the one that replaced it.
      if (timer != null && timerDueNanos == due) {
        timer = null;
      }
      scheduleLocked();
    }
  }

  private void flush() {
    List<PendingWrite> writes = new ArrayList<>();
    long bytes = 0;
    synchronized (lock) {
      // One segment holds up to flush-bytes (at least one frame); the rest waits its turn.
      while (!pending.isEmpty()
          && (writes.isEmpty() || bytes + pending.peek().frame().arrowIpc().length <= flushBytes)) {
        PendingWrite w = pending.poll();
        writes.add(w);
        bytes += w.frame().arrowIpc().length;
      }
      pendingBytes -= bytes;
      writing = writes;
      lastFlushNanos = System.nanoTime();
    }
    try {
      write(writes, bytes);
    } finally {
      synchronized (lock) {
        writing = List.of();
        flushing = false;
        scheduleLocked();
        lock.notifyAll();
      }
    }
  }

  private void write(List<PendingWrite> writes, long bytes) {
    if (writes.isEmpty()) {
      return;
    }
    List<WalFrame> frames = new ArrayList<>(writes.size());
    long rows = 0;
    for (PendingWrite w : writes) {
      frames.add(w.frame());
      rows += w.frame().rowCount();
    }
    long seq;
    long started = System.nanoTime();
    try {
      seq = wal.append(table, frames);
    } catch (RuntimeException | Error e) {
      LOG.warn("WAL append failed for {} ({} frames)", table, frames.size(), e);
      String detail = e instanceof SeException se ? ": " + se.getMessage() : "";
      SeException failure = new SeException(ErrorCode.UNAVAILABLE,
          "storage unavailable: could not write the WAL of table " + table.tableUuid()
              + " in catalog `" + table.catalogId() + "`" + detail + "; retry the batch", e);
      List<PendingWrite> failed = new ArrayList<>(writes);
      failed.addAll(withdrawLaterFramesOfProducers(writes));
      for (PendingWrite w : failed) {
        w.done().completeExceptionally(failure);
      }
      return;
    }
    recordWrite(System.nanoTime() - started, bytes);
    try {
      identity.requireExists();
    } catch (SeException e) {
      refuse(writes, seq, e);
      return;
    }
    for (PendingWrite w : writes) {
      w.done().complete(seq);
    }
    LOG.debug("wrote WAL segment {} of {}: {} frames, {} rows, {} bytes in {} ms", seq, table,
        frames.size(), rows, bytes, (System.nanoTime() - started) / 1_000_000);
    try {
      listener.segmentWritten(table, seq, rows, bytes);
    } catch (RuntimeException e) {
      LOG.warn("ingest listener failed for segment {} of {}", seq, table, e);
    }
  }

  /**
   * After the failed append of {@code failed}: takes the waiting frames of the same producers
   * out of the queue and refuses their later ones until they reopen, so that no later batch of
   * a producer becomes durable while an earlier one is not (a producer that resumes after its
   * highest durable sequence, as the Kafka sink does, would otherwise skip the gap).
   */
  private List<PendingWrite> withdrawLaterFramesOfProducers(List<PendingWrite> failed) {
    Set<String> producers = new HashSet<>();
    for (PendingWrite w : failed) {
      if (w.frame().producer() != null) {
        producers.add(w.frame().producer().producerId());
      }
    }
    List<PendingWrite> withdrawn = new ArrayList<>();
    if (producers.isEmpty()) {
      return withdrawn;
    }
    synchronized (lock) {
      brokenProducers.addAll(producers);
      for (Iterator<PendingWrite> it = pending.iterator(); it.hasNext(); ) {
        PendingWrite w = it.next();
        if (w.frame().producer() != null && producers.contains(w.frame().producer().producerId())) {
          it.remove();
          pendingBytes -= w.frame().arrowIpc().length;
          withdrawn.add(w);
        }
      }
    }
    return withdrawn;
  }

  /**
   * Segment {@code seq} is durable but may not be acknowledged: the table was dropped
   * (NOT_FOUND: this and every later request fail) or the catalog could not confirm it exists
   * (UNAVAILABLE: only this segment's requests fail, the client may retry).
   */
  private void refuse(List<PendingWrite> writes, long seq, SeException failure) {
    List<PendingWrite> waiting = new ArrayList<>();
    if (failure.code() == ErrorCode.NOT_FOUND) {
      synchronized (lock) {
        dropped = failure;
        waiting.addAll(pending);
        pending.clear();
        pendingBytes = 0;
        cancelTimerLocked();
      }
      LOG.warn("{}: WAL segment {} of {} and {} waiting batches are refused", failure.getMessage(),
          seq, table, waiting.size());
      try {
        onDropped.run();
      } catch (RuntimeException e) {
        LOG.warn("could not retire the committer of dropped table {}", table, e);
      }
    } else {
      LOG.warn("WAL segment {} of {} is durable but not acknowledged: {}", seq, table,
          failure.getMessage());
    }
    for (PendingWrite w : writes) {
      w.done().completeExceptionally(failure);
    }
    for (PendingWrite w : waiting) {
      w.done().completeExceptionally(failure);
    }
  }
}

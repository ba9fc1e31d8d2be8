package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.ProducerWindows;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The write side of idempotent ingestion (ARCHITECTURE.md 6.1, 6.5): per table, the producer
 * windows this process knows, so that a resent batch that is already durable is acknowledged
 * again without being written again.
 *
 * <p>A fast path, not the guarantee: the windows are caught up with the WAL when a stream with
 * a producer id opens (segments of other writers included, so a restarted server or another
 * server behind the load balancer knows what was written before), and learn every batch this
 * process makes durable. A batch of another writer that became durable after the catch-up is
 * not known here and is written again; readers then skip the later frame ({@link
 * io.storageengine.wal.ProducerDedup}), so the table holds it once either way.
 *
 * <p>Catch-ups of one table are shared: at most one reads the WAL at a time, and every open
 * that arrives while one runs waits for the next one, which starts when the running one ends and
 * serves all of them, reading only the segments after the windows the last one left. So each open
 * still gets windows caught up after it arrived, while a burst of opens reads a long tail once
 * instead of once per open (a long unreconciled tail read by hundreds of opens at once held as
 * many segments in memory and was read as many times).
 *
 * <p>Thread-safe.
 */
final class ProducerWindowCache {
  private final WalWriter wal;
  private final ConcurrentHashMap<TableWal, Entry> tables = new ConcurrentHashMap<>();

  /** One table's windows; guarded by itself. */
  private static final class Entry {
    ProducerWindows windows;
    /** Batches made durable while a catch-up reads the WAL, replayed onto its result. */
    final List<Learnt> learnt = new ArrayList<>();
    int catchingUp;
    /** The catch-up reading the WAL now, or null. */
    CompletableFuture<Void> running;
    /** The catch-up that starts once {@link #running} ends, shared by the opens waiting for it, or null. */
    CompletableFuture<Void> next;
  }

  private record Learnt(ProducerStamp stamp, long walSeq) {}

  ProducerWindowCache(WalWriter wal) {
    this.wal = wal;
  }

  /**
   * Catches the table's windows up with its WAL (creating {@code producers.json} on first use);
   * called when a stream with a producer id opens, before its first batch. Storage failures are
   * UNAVAILABLE.
   */
  void open(TableWal table, Duration retention) {
    Entry entry = tables.computeIfAbsent(table, t -> new Entry());
    CompletableFuture<Void> round;
    boolean reads;
    synchronized (entry) {
      if (entry.next == null) {
        entry.next = new CompletableFuture<>();
      }
      round = entry.next;
      try {
        while (!round.isDone() && entry.running != null && entry.running != round) {
          entry.wait();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SeException(ErrorCode.UNAVAILABLE, "interrupted while the producer windows of table "
            + table.tableUuid() + " were read; retry", e);
      }
      // Its round is over (read by another open of it), or runs (another open reads it), or no
      // round runs (this open reads its round, for every open waiting for it).
      reads = !round.isDone() && entry.running == null;
      if (reads) {
        entry.running = round;
        entry.next = null;
      }
    }
    if (!reads) {
      await(round);
      return;
    }
    try {
      catchUp(entry, table, retention);
      round.complete(null);
    } catch (RuntimeException | Error e) {
      round.completeExceptionally(e);
      throw e;
    } finally {
      synchronized (entry) {
        entry.running = null;
        entry.notifyAll();
      }
    }
  }

  /** Waits for a round another open reads, and fails as it failed. */
  private static void await(CompletableFuture<Void> round) {
    try {
      round.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  /** One catch-up: the windows known so far (or the stored ones) with the segments after them. */
  private void catchUp(Entry entry, TableWal table, Duration retention) {
    ProducerWindows known;
    synchronized (entry) {
      known = entry.windows == null ? null : entry.windows.copy();
      entry.catchingUp++;
    }
    ProducerWindows caughtUp = null;
    try {
      caughtUp = wal.catchUpProducerWindows(table, known, retention);
    } catch (SeException e) {
      if (e.code() == ErrorCode.UNAVAILABLE) {
        throw new SeException(ErrorCode.UNAVAILABLE, "storage unavailable: could not read the "
            + "producer windows of table " + table.tableUuid() + ": " + e.getMessage() + "; retry", e);
      }
      throw e;
    } finally {
      synchronized (entry) {
        if (caughtUp != null && (entry.windows == null
            || caughtUp.throughSeq() >= entry.windows.throughSeq())) {
          for (Learnt l : entry.learnt) {
            caughtUp.admit(l.stamp(), l.walSeq(), Integer.MAX_VALUE, retention);
          }
          entry.windows = caughtUp;
        }
        if (--entry.catchingUp == 0) {
          entry.learnt.clear();
        }
      }
    }
  }

  /**
   * True when the batch of {@code producerId} with {@code sequence} is already durable;
   * INVALID_ARGUMENT when the sequence is below the producer's window, so that whether it was
   * written cannot be told.
   */
  boolean isDurable(TableWal table, String producerId, long sequence, Duration retention) {
    Entry entry = tables.get(table);
    if (entry == null) {
      return false;
    }
    ProducerWindows.Lookup lookup;
    long lowest;
    synchronized (entry) {
      if (entry.windows == null) {
        return false;
      }
      lookup = entry.windows.lookup(producerId, sequence, System.currentTimeMillis(), retention);
      lowest = entry.windows.lowestRemembered(producerId);
    }
    return switch (lookup) {
      case DUPLICATE -> true;
      case NEW -> false;
      case BELOW_WINDOW -> throw SeException.invalid("batch app_metadata: field `sequence` %d is "
          + "below the window of producer `%s` (its lowest remembered sequence is %d of the last "
          + "%d): whether it was written cannot be told", sequence, producerId, lowest,
          ProducerWindows.WINDOW);
    };
  }

  /**
   * The highest durable sequence of {@code producerId} in the table as this process knows it
   * (call {@link #open} first to catch up with the WAL): empty for a producer that wrote nothing
   * or was forgotten.
   */
  OptionalLong highestSequence(TableWal table, String producerId, Duration retention) {
    Entry entry = tables.get(table);
    if (entry == null) {
      return OptionalLong.empty();
    }
    synchronized (entry) {
      return entry.windows == null ? OptionalLong.empty()
          : entry.windows.highestSequence(producerId, System.currentTimeMillis(), retention);
    }
  }

  /** Remembers that the frame carrying {@code stamp} is durable in segment {@code walSeq}. */
  void durable(TableWal table, ProducerStamp stamp, long walSeq, Duration retention) {
    Entry entry = tables.computeIfAbsent(table, t -> new Entry());
    synchronized (entry) {
      // The frame index is unknown here; the largest one orders after every frame of the
      // segment, which only the readers' rule needs, never this lookup. Without windows yet
      // (the first catch-up still reads) the catch-up's result learns it.
      if (entry.windows != null) {
        entry.windows.admit(stamp, walSeq, Integer.MAX_VALUE, retention);
      }
      if (entry.catchingUp > 0) {
        entry.learnt.add(new Learnt(stamp, walSeq));
      }
    }
  }
}

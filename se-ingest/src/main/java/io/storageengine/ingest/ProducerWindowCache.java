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

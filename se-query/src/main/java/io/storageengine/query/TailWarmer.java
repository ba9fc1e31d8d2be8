package io.storageengine.query;

import io.storageengine.common.Cancel;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the WAL tail folds of the entity tables that queries read whole grown in the background.
 * A query of such a table folds the segments acknowledged since the fold it finds (see
 * {@link EntityTailFolds}): under steady upserts that is the newest segment, and its fold (the
 * lookup of its keys' rows in the whole snapshot) was most of the query's time. Once a query has
 * read an entity table whole ({@link #read}), the warmer checks that table every interval and,
 * when a segment arrived after its kept fold ({@link Warm#behind}), grows the fold as the next
 * such query would ({@link Warm#warm}); a query arriving meanwhile waits for that fold and reads
 * its layers, one arriving after reads them at once. The result is the same as without the
 * warmer: a query still folds whatever its fold does not cover. A table not read whole for
 * {@link #HOT_NANOS} is no longer warmed, so an unqueried table costs nothing; at most
 * {@value #MAX_TABLES} tables are warmed (least recently read dropped), as many as folds are kept.
 *
 * <p>One thread warms the tables in turn. A warm that fails is logged at DEBUG and tried again at
 * the next segment (a query reading the table reports the error itself). Thread-safe.
 */
final class TailWarmer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TailWarmer.class);
  /** How long after a table's last whole read it is warmed. */
  static final long HOT_NANOS = Duration.ofSeconds(30).toNanos();
  /** Tables warmed at most. */
  static final int MAX_TABLES = EntityTailFolds.MAX_TABLES;

  /** What the warmer does to one table. */
  interface Warm {
    /** Whether the table's kept fold has a segment after it (cheap: at most one store read). */
    boolean behind(HotTable table);

    /** Grows the table's kept fold to the tail's end, as a query reading it whole would. */
    void warm(HotTable table, Cancel cancel);
  }

  /** A table read whole: its tenant, identifier and Iceberg uuid. */
  record HotTable(String catalogId, TableIdentifier id, java.util.UUID uuid) {}

  private final Warm warm;
  /** Tables by their last whole read (nanos), least recently read first; guarded by this. */
  private final LinkedHashMap<HotTable, Long> hot = new LinkedHashMap<>(16, 0.75f, true);
  private final Cancel stop = new Cancel();
  private final ScheduledThreadPoolExecutor thread;
  private long warmed;

  /** A warmer checking every {@code interval} (positive). */
  TailWarmer(Warm warm, Duration interval) {
    this.warm = warm;
    this.thread = Threads.scheduledPool(1, Threads.daemonNamed("se-wal-tail-warm"));
    thread.scheduleWithFixedDelay(this::tick, interval.toNanos(), interval.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** A query read {@code table} whole, with its WAL tail: warm it for the next {@link #HOT_NANOS}. */
  synchronized void read(HotTable table) {
    hot.put(table, System.nanoTime());
    if (hot.size() > MAX_TABLES) {
      hot.remove(hot.keySet().iterator().next());
    }
  }

  /** The tables warmed now (tests). */
  synchronized List<HotTable> tables() {
    return List.copyOf(hot.keySet());
  }

  /** Folds grown by the warmer so far (tests). */
  synchronized long warmed() {
    return warmed;
  }

  private void tick() {
    long now = System.nanoTime();
    List<HotTable> tables = new ArrayList<>();
    synchronized (this) {
      hot.entrySet().removeIf(entry -> now - entry.getValue() > HOT_NANOS);
      tables.addAll(hot.keySet());
    }
    for (HotTable table : tables) {
      if (stop.reason() != null) {
        return;
      }
      try {
        if (warm.behind(table)) {
          warm.warm(table, stop);
          synchronized (this) {
            warmed++;
          }
        }
      } catch (RuntimeException e) {
        if (stop.reason() == null) {
          LOG.debug("warming the WAL tail fold of {} failed: {}", table.id(), e.toString());
        }
      }
    }
  }

  /** Stops the thread, interrupting a fold in flight; waits for it to end. */
  @Override
  public void close() {
    stop.cancel(new SeException(ErrorCode.UNAVAILABLE, "the query engine is closing"));
    thread.shutdownNow();
    try {
      thread.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.storageengine.query;

import io.storageengine.common.Cancel;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.wal.TableWal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Folds the WAL segments this process acknowledges for an entity table onto the table's kept tail
 * fold ({@link EntityTailFolds}) right away, instead of leaving the fold to the next query that
 * reads the table: that query then finds its layers made (or waits for the one being made) and
 * pays for the query alone. Only tables a query read with their WAL tail within
 * {@link #WINDOW_NANOS} are folded ahead (at most {@link #MAX_TABLES} are remembered, the least
 * recently read forgotten first), so tables nobody queries cost nothing.
 *
 * <p>One background thread for the process; a table's requests that arrive while one of its folds
 * waits are merged into it, and one arriving during its fold makes another after it. A fold ahead
 * is what a query's would be (the same kept layers, the same turn per table, see
 * {@link EntityTailFolds#read}); one that fails is left to the next query (logged at debug).
 * Closing stops a fold in flight.
 */
final class EntityTailWarmer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EntityTailWarmer.class);
  /** How long after a query read a table's tail its new segments are folded ahead. */
  static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);
  /** Tables remembered as read. */
  static final int MAX_TABLES = 256;

  /** A table a query read with its tail: how to load it again, and when. */
  record Recent(TableIdentifier id, TableName name, long readNanos) {}

  /** Folds the tail of the table {@code recent} names, of tenant {@code catalogId}, stopped by {@code cancel}. */
  interface Fold {
    void fold(String catalogId, Recent recent, Cancel cancel);
  }

  private final Fold fold;
  /** Tables read lately, least recently read first. */
  private final Map<TableWal, Recent> recent = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<TableWal, Recent> eldest) {
      return size() > MAX_TABLES;
    }
  };
  /** Tables whose fold ahead waits for the thread. */
  private final Set<TableWal> queued = ConcurrentHashMap.newKeySet();
  private final ExecutorService thread = Executors.newSingleThreadExecutor(Threads.daemonNamed("se-wal-tail-ahead"));
  private final Cancel stop = new Cancel();

  EntityTailWarmer(Fold fold) {
    this.fold = fold;
  }

  /** A query read {@code table}'s tail (its identifier and the name it was written as). */
  void read(TableWal table, TableIdentifier id, TableName name) {
    synchronized (recent) {
      recent.put(table, new Recent(id, name, System.nanoTime()));
    }
  }

  /** This process acknowledged a new segment of {@code table}: fold it ahead if a query read the table lately. */
  void appended(TableWal table) {
    if (lately(table) == null || !queued.add(table)) {
      return;
    }
    try {
      thread.execute(() -> run(table));
    } catch (RejectedExecutionException e) {
      queued.remove(table); // closed
    }
  }

  /** Tables folded ahead of their queries, or waiting to be (tests). */
  int tables() {
    synchronized (recent) {
      return recent.size();
    }
  }

  private Recent lately(TableWal table) {
    synchronized (recent) {
      Recent r = recent.get(table);
      if (r != null && System.nanoTime() - r.readNanos() > WINDOW_NANOS) {
        recent.remove(table);
        return null;
      }
      return r;
    }
  }

  private void run(TableWal table) {
    queued.remove(table);
    Recent r = lately(table);
    if (r == null) {
      return;
    }
    try {
      fold.fold(table.catalogId(), r, stop);
    } catch (RuntimeException e) {
      LOG.debug("folding the WAL tail of table {} ahead of its queries failed; the next query folds it: {}",
          TenantMetadata.displayName(r.id()), e.toString());
    }
  }

  @Override
  public void close() {
    stop.cancel(SeException.unavailable("the query engine is shutting down", null));
    thread.shutdownNow();
  }
}

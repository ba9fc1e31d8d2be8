package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles continuously ({@code se dev}, {@code se reconcile --watch}): a named daemon thread
 * that every interval reconciles each table with segments after its {@code published_seq}.
 * A failing table backs off exponentially (interval, 2x, 4x ... up to {@link #MAX_BACKOFF})
 * without delaying the others; {@link #trigger} runs a table at the next opportunity.
 */
public final class ReconcileLoop implements AutoCloseable {
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);
  public static final Duration MAX_BACKOFF = Duration.ofMinutes(1);
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileLoop.class);

  private final Reconciler reconciler;
  private final WalLog wal;
  private final String catalogId;
  private final Duration interval;
  private final Consumer<ReconcileResult> listener;
  private final Object lock = new Object();
  private final Set<TableWal> triggered = new LinkedHashSet<>();
  private final Map<TableWal, Backoff> backoffs = new HashMap<>();
  private final Thread thread;
  private volatile boolean closed;

  private record Backoff(int failures, long notBeforeNanos) {}

  /**
   * @param catalogId reconcile only this catalog's tables, or all when null
   * @param listener receives every pass result (committed, failed ...) on the loop thread
   */
  public ReconcileLoop(Reconciler reconciler, WalLog wal, String catalogId, Duration interval,
      Consumer<ReconcileResult> listener) {
    this.reconciler = reconciler;
    this.wal = wal;
    this.catalogId = catalogId;
    this.interval = interval;
    this.listener = listener;
    this.thread = new Thread(this::loop, "se-reconcile-loop" + (catalogId == null ? "" : "-" + catalogId));
    this.thread.setDaemon(true);
  }

  public ReconcileLoop start() {
    thread.start();
    return this;
  }

  /** Asks the loop to reconcile {@code table} soon (a failing table still honours its backoff). */
  public void trigger(TableWal table) {
    synchronized (lock) {
      triggered.add(table);
      lock.notifyAll();
    }
  }

  private void loop() {
    while (!closed) {
      try {
        runOnce();
      } catch (RuntimeException e) {
        // Listing the WAL failed (storage unavailable): try again next interval.
        LOG.warn("reconcile loop iteration failed: {}", e.getMessage());
      }
      synchronized (lock) {
        if (!closed && triggered.isEmpty()) {
          try {
            lock.wait(Math.max(1, interval.toMillis()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }
  }

  private void runOnce() {
    Set<TableWal> due = new LinkedHashSet<>();
    synchronized (lock) {
      due.addAll(triggered);
      triggered.clear();
    }
    for (TableWal t : wal.tables(catalogId)) {
      if (reconciler.hasPending(t)) {
        due.add(t);
      }
    }
    long now = System.nanoTime();
    for (TableWal table : due) {
      if (closed) {
        return;
      }
      if (catalogId != null && !catalogId.equals(table.catalogId())) {
        continue;
      }
      Backoff backoff = backoffs.get(table);
      if (backoff != null && now < backoff.notBeforeNanos()) {
        continue;
      }
      ReconcileResult result = reconciler.reconcileReportingFailure(table);
      if (result.outcome() == ReconcileResult.Outcome.FAILED) {
        int failures = backoff == null ? 1 : backoff.failures() + 1;
        long delay = Math.min(MAX_BACKOFF.toNanos(), interval.toNanos() << Math.min(failures, 20));
        backoffs.put(table, new Backoff(failures, System.nanoTime() + delay));
      } else {
        backoffs.remove(table);
      }
      try {
        listener.accept(result);
      } catch (RuntimeException e) {
        LOG.warn("reconcile listener failed: {}", e.getMessage());
      }
    }
  }

  /** Stops the loop after the pass in progress, if any, and waits for the thread to end. */
  @Override
  public void close() {
    closed = true;
    synchronized (lock) {
      lock.notifyAll();
    }
    if (thread.isAlive() && Thread.currentThread() != thread) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

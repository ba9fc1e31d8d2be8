package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles continuously ({@code se dev}, {@code se reconcile --watch}).
 *
 * <p>Passes run on a small pool of named daemon threads, so passes of different tables run
 * concurrently while each table has at most one pass at a time. {@link #trigger} starts the
 * named table's pass at once when a pool thread is free (the ingestor calls it after every WAL
 * segment, so this is what freshness depends on); a table triggered while its pass runs gets one
 * more pass right after it, because the running pass may have listed the WAL before the new
 * segment landed. A ticker thread lists every table with a WAL once per interval and starts a
 * pass for each one with segments after its {@code published_seq}: that catches segments
 * written by other processes and retries failures; triggers never list.
 *
 * <p>A failing table backs off exponentially (interval, 2x, 4x ... up to {@link #MAX_BACKOFF})
 * without delaying the others; a trigger does not override its backoff.
 */
public final class ReconcileLoop implements TableGate, AutoCloseable {
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);
  public static final Duration MAX_BACKOFF = Duration.ofMinutes(1);
  /**
   * Passes in flight at once by default: one per core, at least 2 (a pass waits on storage and
   * the catalog part of the time) and at most 4 (each pass also runs DuckDB on every core).
   */
  public static final int DEFAULT_PARALLELISM =
      Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileLoop.class);

  private final Reconciler reconciler;
  private final WalLog wal;
  private final String catalogId;
  private final Duration interval;
  private final Consumer<ReconcileResult> listener;
  private final Object listenerLock = new Object();
  private final Object lock = new Object();
  /** Tables with a pass queued or running, or with failures; guarded by {@link #lock}. */
  private final Map<TableWal, TableState> tables = new HashMap<>();
  private final ThreadPoolExecutor passes;
  private final Set<Thread> passThreads = ConcurrentHashMap.newKeySet();
  private final Thread ticker;
  private volatile boolean closed;

  /** Scheduling state of one table. */
  private static final class TableState {
    boolean scheduled; // a pass is queued or running
    boolean again; // triggered while scheduled: run once more afterwards
    int exclusiveWaiters; // callers of exclusive() waiting for the running pass to end
    int failures;
    long notBeforeNanos;
  }

  /**
   * A loop with {@link #DEFAULT_PARALLELISM} passes in flight at most.
   *
   * @param catalogId reconcile only this catalog's tables, or all when null
   * @param listener receives every pass result (committed, failed ...), one call at a time
   */
  public ReconcileLoop(Reconciler reconciler, WalLog wal, String catalogId, Duration interval,
      Consumer<ReconcileResult> listener) {
    this(reconciler, wal, catalogId, interval, listener, DEFAULT_PARALLELISM);
  }

  /**
   * @param catalogId reconcile only this catalog's tables, or all when null
   * @param listener receives every pass result (committed, failed ...), one call at a time
   * @param parallelism passes of different tables that may run at once
   */
  public ReconcileLoop(Reconciler reconciler, WalLog wal, String catalogId, Duration interval,
      Consumer<ReconcileResult> listener, int parallelism) {
    if (parallelism <= 0) {
      throw new IllegalArgumentException("reconcile parallelism must be positive, got " + parallelism);
    }
    this.reconciler = reconciler;
    this.wal = wal;
    this.catalogId = catalogId;
    this.interval = interval;
    this.listener = listener;
    String suffix = catalogId == null ? "" : "-" + catalogId;
    AtomicInteger threadNo = new AtomicInteger();
    this.passes = new ThreadPoolExecutor(parallelism, parallelism, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "se-reconcile-pass" + suffix + "-" + threadNo.incrementAndGet());
          t.setDaemon(true);
          passThreads.add(t);
          return t;
        });
    this.ticker = new Thread(this::tick, "se-reconcile-loop" + suffix);
    this.ticker.setDaemon(true);
  }

  public ReconcileLoop start() {
    ticker.start();
    return this;
  }

  /** Asks the loop to reconcile {@code table} now (a failing table still honours its backoff). */
  public void trigger(TableWal table) {
    request(table, true);
  }

  /**
   * Schedules a pass over {@code table} unless one is scheduled already (then, for a trigger,
   * one more pass follows it) or the table is backing off.
   */
  private void request(TableWal table, boolean triggered) {
    if (catalogId != null && !catalogId.equals(table.catalogId())) {
      return;
    }
    synchronized (lock) {
      if (closed) {
        return;
      }
      TableState state = tables.computeIfAbsent(table, t -> new TableState());
      if (state.scheduled) {
        state.again |= triggered;
        return;
      }
      if (state.failures > 0 && System.nanoTime() < state.notBeforeNanos) {
        return; // the ticker retries once the backoff has passed
      }
      state.scheduled = true;
      passes.execute(() -> runPass(table));
    }
  }

  private void runPass(TableWal table) {
    ReconcileResult result = null;
    try {
      if (!closed) {
        result = reconciler.reconcileReportingFailure(table);
      }
    } finally {
      finished(table, result);
    }
    if (result != null) {
      synchronized (listenerLock) {
        try {
          listener.accept(result);
        } catch (RuntimeException e) {
          LOG.warn("reconcile listener failed: {}", e.getMessage());
        }
      }
    }
  }

  /** Records the pass's outcome (null: it did not run or threw an Error) and runs a pending rerun. */
  private void finished(TableWal table, ReconcileResult result) {
    synchronized (lock) {
      TableState state = tables.get(table);
      if (closed) {
        tables.remove(table);
        return;
      }
      if (result == null || result.outcome() == ReconcileResult.Outcome.FAILED) {
        state.failures++;
        long delay = Math.min(MAX_BACKOFF.toNanos(), interval.toNanos() << Math.min(state.failures, 20));
        state.notBeforeNanos = System.nanoTime() + delay;
        state.again = false; // the ticker retries once the backoff has passed
      } else {
        state.failures = 0;
      }
      released(table, state);
    }
  }

  /**
   * A pass or an exclusive piece of work of {@code table} ended (call with {@link #lock} held):
   * a waiting exclusive caller goes next (a pending rerun waits for it), else a pending rerun
   * starts unless the table backs off, else an idle table without failures is forgotten.
   */
  private void released(TableWal table, TableState state) {
    state.scheduled = false;
    if (state.exclusiveWaiters > 0) {
      lock.notifyAll();
    } else if (state.again && (state.failures == 0 || System.nanoTime() >= state.notBeforeNanos)) {
      state.again = false;
      state.scheduled = true;
      passes.execute(() -> runPass(table));
    } else if (!state.again && state.failures == 0) {
      tables.remove(table);
    }
  }

  /**
   * {@inheritDoc} A caller waiting here goes before a pass triggered meanwhile, so steady
   * ingestion does not starve it; the loop being closed runs {@code work} without waiting.
   */
  @Override
  public <T> T exclusive(TableWal table, Supplier<T> work) {
    TableState state;
    synchronized (lock) {
      state = tables.computeIfAbsent(table, t -> new TableState());
      state.exclusiveWaiters++;
      try {
        while (state.scheduled && !closed) {
          lock.wait();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the reconcile pass of a table", e);
      } finally {
        state.exclusiveWaiters--;
      }
      state.scheduled = true;
    }
    try {
      return work.get();
    } finally {
      synchronized (lock) {
        if (closed) {
          state.scheduled = false;
          lock.notifyAll();
        } else {
          released(table, state);
        }
      }
    }
  }

  /** The interval tick: finds tables with pending segments that nobody triggered. */
  private void tick() {
    reconciler.warmUp();
    while (!closed) {
      try {
        for (TableWal table : wal.tables(catalogId)) {
          if (closed) {
            return;
          }
          if (isIdle(table) && reconciler.hasPending(table)) {
            request(table, false);
          }
        }
      } catch (RuntimeException e) {
        // Listing the WAL failed (storage unavailable): try again next interval.
        LOG.warn("reconcile loop iteration failed: {}", e.getMessage());
      }
      synchronized (lock) {
        if (!closed) {
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

  /** True when the table has no pass scheduled and is not backing off (worth a listing). */
  private boolean isIdle(TableWal table) {
    synchronized (lock) {
      TableState state = tables.get(table);
      return state == null
          || (!state.scheduled && (state.failures == 0 || System.nanoTime() >= state.notBeforeNanos));
    }
  }

  /**
   * Stops the loop: no new passes start, queued ones are dropped, and this waits for the passes
   * in flight to end and for every thread of the loop to stop.
   */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    passes.shutdown();
    boolean interrupted = false;
    try {
      if (ticker.isAlive() && Thread.currentThread() != ticker) {
        ticker.join();
      }
      // A listener closing the loop from a pass thread cannot wait for its own pass.
      if (!passThreads.contains(Thread.currentThread())) {
        while (!passes.awaitTermination(1, TimeUnit.MINUTES)) {
          LOG.info("waiting for reconcile passes in flight to end");
        }
        for (Thread t : passThreads) {
          t.join(); // terminated pools still have their threads exiting
        }
      }
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}

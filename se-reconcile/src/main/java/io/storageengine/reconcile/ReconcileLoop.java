package io.storageengine.reconcile;

import io.storageengine.common.AdmissionPressure;
import io.storageengine.common.Threads;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
 * segment landed. A ticker thread lists the tables with a pending marker ({@link
 * WalLog#pendingTables}) once per interval and starts a pass for each one with segments after
 * its {@code published_seq} (a stale marker is cleared): that catches segments written by other
 * processes and retries failures at a cost of O(tenants + tables with new WAL) per tick;
 * triggers never list. The first tick, and then one at most every {@link
 * #DEFAULT_SWEEP_INTERVAL}, is a full sweep over every table with a WAL ({@link WalLog#tables})
 * instead, which puts the marker of a table with pending segments but none (a writer crashed
 * between its segment and its marker, or WAL written before markers existed).
 *
 * <p>With {@link #withAdmissionPressure}, a pass about to start while the process admits a
 * burst of ingest streams waits until the burst ends, but never past the given maximum
 * deferral after it was scheduled: a burst of stream opens gets the CPU first, and freshness
 * under any load loses at most that deferral.
 *
 * <p>A failing table backs off exponentially (interval, 2x, 4x ... up to {@link #MAX_BACKOFF})
 * without delaying the others; a trigger does not override its backoff.
 *
 * <p>A stuck table is impossible to miss: from its first failed pass until a pass succeeds it is
 * <em>failing</em> ({@link ReconcileStatus}: since when, consecutive failures, last error, the
 * pending WAL range). The change of state is logged once at WARN with the cause (and the
 * recovery once at INFO), the status is kept on cluster storage for every process to see
 * ({@link ReconcileStatusStore}, when given), reported as the
 * {@code se_reconcile_table_failing} and {@code se_reconcile_table_consecutive_failures} gauges,
 * and listed by {@link #failingTables()}.
 *
 * <p>A table found dropped from its catalog is reported once and not passed over again; after
 * {@link #DEFAULT_DROPPED_WAL_RETENTION} (a safety age: a catalog that briefly answers "no such
 * table" loses nothing) a last pass checks again that no table has its UUID and deletes its WAL.
 */
public final class ReconcileLoop implements TableGate, AutoCloseable {
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);
  public static final Duration MAX_BACKOFF = Duration.ofMinutes(1);
  /** How often at most a tick is a full sweep over every table with a WAL, by default. */
  public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofMinutes(1);
  /** How long the WAL of a dropped table is kept before it is deleted, by default. */
  public static final Duration DEFAULT_DROPPED_WAL_RETENTION = Duration.ofHours(1);
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
  private final Map<TableWal, ReconcileStatus> failing = new ConcurrentHashMap<>();
  private ReconcileStatusStore statusStore;
  private Duration droppedWalRetention = DEFAULT_DROPPED_WAL_RETENTION;
  private Clock clock = Clock.systemUTC();
  private Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;
  private AdmissionPressure admissionPressure = AdmissionPressure.NONE;
  private long maxDeferralNanos;
  /** How often a deferred pass asks again whether the burst ended. */
  static final Duration DEFERRAL_POLL = Duration.ofMillis(20);

  /** Scheduling state of one table. */
  private static final class TableState {
    boolean scheduled; // a pass is queued or running
    boolean again; // triggered while scheduled: run once more afterwards
    int exclusiveWaiters; // callers of exclusive() waiting for the running pass to end
    int failures;
    long notBeforeNanos;
    Instant failingSince; // first of the consecutive failures; null when healthy
    long droppedSinceNanos; // when the table was first found dropped; 0 when not dropped
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
    this(reconciler, wal, catalogId, interval, listener, parallelism, null);
  }

  /**
   * A loop with {@link #DEFAULT_PARALLELISM} passes in flight at most, on {@code threads}.
   *
   * @param threads makes the ticker and the pass threads (a process's composition root passes
   *     threads whose uncaught throwables take its fatal-error path)
   */
  public ReconcileLoop(Reconciler reconciler, WalLog wal, String catalogId, Duration interval,
      Consumer<ReconcileResult> listener, ThreadFactory threads) {
    this(reconciler, wal, catalogId, interval, listener, DEFAULT_PARALLELISM, threads);
  }

  /**
   * @param catalogId reconcile only this catalog's tables, or all when null
   * @param listener receives every pass result (committed, failed ...), one call at a time
   * @param parallelism passes of different tables that may run at once
   * @param threads makes the ticker and the pass threads; null: daemon threads named
   *     {@code se-reconcile-loop[-catalog]} and {@code se-reconcile-pass[-catalog]-N}
   */
  public ReconcileLoop(Reconciler reconciler, WalLog wal, String catalogId, Duration interval,
      Consumer<ReconcileResult> listener, int parallelism, ThreadFactory threads) {
    if (parallelism <= 0) {
      throw new IllegalArgumentException("reconcile parallelism must be positive, got " + parallelism);
    }
    this.reconciler = reconciler;
    this.wal = wal;
    this.catalogId = catalogId;
    this.interval = interval;
    this.listener = listener;
    String suffix = catalogId == null ? "" : "-" + catalogId;
    ThreadFactory passFactory = threads != null ? threads : Threads.daemon("se-reconcile-pass" + suffix);
    this.passes = new ThreadPoolExecutor(parallelism, parallelism, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = passFactory.newThread(r);
          passThreads.add(t);
          return t;
        });
    this.ticker = (threads != null ? threads : Threads.daemonNamed("se-reconcile-loop" + suffix))
        .newThread(this::tick);
  }

  /** Keeps each table's status on cluster storage too (call before {@link #start}). */
  public ReconcileLoop withStatusStore(ReconcileStatusStore store) {
    this.statusStore = store;
    return this;
  }

  /** How long a dropped table's WAL is kept before it is deleted (call before {@link #start}). */
  public ReconcileLoop withDroppedWalRetention(Duration retention) {
    if (retention == null || retention.isNegative()) {
      throw new IllegalArgumentException("dropped WAL retention must not be negative, got " + retention);
    }
    this.droppedWalRetention = retention;
    return this;
  }

  /**
   * How often at most a tick is a full sweep over every table with a WAL (call before {@link
   * #start}); the first tick always is one.
   */
  public ReconcileLoop withSweepInterval(Duration interval) {
    if (interval == null || interval.isNegative()) {
      throw new IllegalArgumentException("sweep interval must not be negative, got " + interval);
    }
    this.sweepInterval = interval;
    return this;
  }

  /**
   * Defers passes to bursts of stream admission (call before {@link #start}): a pass about to
   * start while {@code pressure} is high waits until it is not, or until {@code maxDeferral}
   * has passed since the pass was scheduled (triggered, found by a tick, or queued as a rerun),
   * whichever comes first. So every pass starts at most {@code maxDeferral} later than it would
   * have without pressure (the passes queued behind a waiting one were scheduled after it and
   * wait no longer than their own deadline); the table stays
   * scheduled meanwhile (a trigger then adds one more pass, an {@link #exclusive} caller waits
   * for it). {@link Duration#ZERO}: passes never wait.
   */
  public ReconcileLoop withAdmissionPressure(AdmissionPressure pressure, Duration maxDeferral) {
    if (pressure == null) {
      throw new IllegalArgumentException("admission pressure must not be null");
    }
    if (maxDeferral == null || maxDeferral.isNegative()) {
      throw new IllegalArgumentException("reconcile admission deferral must not be negative, got " + maxDeferral);
    }
    this.admissionPressure = pressure;
    this.maxDeferralNanos = maxDeferral.toNanos();
    return this;
  }

  /** The clock of the failing-since times (call before {@link #start}; tests). */
  public ReconcileLoop withClock(Clock clock) {
    this.clock = clock;
    return this;
  }

  public ReconcileLoop start() {
    ticker.start();
    return this;
  }

  /** The tables whose reconciliation is failing now, with their status. */
  public Map<TableWal, ReconcileStatus> failingTables() {
    return Map.copyOf(failing);
  }

  /** The table's status as this loop knows it ({@link ReconcileStatus#HEALTHY} when unknown). */
  public ReconcileStatus status(TableWal table) {
    return failing.getOrDefault(table, ReconcileStatus.HEALTHY);
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
      if (state.droppedSinceNanos != 0 && !droppedWalDue(state)) {
        return; // dropped: nothing to publish; its WAL is deleted once the retention passed
      }
      state.scheduled = true;
      execute(table);
    }
  }

  /** Queues a pass over {@code table} (call with {@link #lock} held, the table scheduled). */
  private void execute(TableWal table) {
    long scheduled = System.nanoTime();
    passes.execute(() -> runPass(table, scheduled));
  }

  private void runPass(TableWal table, long scheduledNanos) {
    ReconcileResult result = null;
    boolean collect = false;
    try {
      deferWhileAdmitting(scheduledNanos);
      if (!closed) {
        synchronized (lock) {
          TableState state = tables.get(table);
          collect = state.droppedSinceNanos != 0 && droppedWalDue(state);
        }
        result = reconciler.capturingFailure(table, collect
            ? () -> reconciler.deleteWalIfDropped(table)
            : () -> reconciler.reconcile(table), false);
        try {
          recordStatus(table, result, collect);
        } catch (RuntimeException e) {
          LOG.warn("could not record the reconcile status of {}: {}", table, e.toString());
        }
      }
    } finally {
      finished(table, result, collect);
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

  /**
   * Waits while the process admits a burst of streams, until the maximum deferral after the pass
   * was scheduled at {@code scheduledNanos} at most (see {@link #withAdmissionPressure}); returns
   * at once when the loop closes.
   */
  private void deferWhileAdmitting(long scheduledNanos) {
    long deadline = scheduledNanos + maxDeferralNanos;
    if (maxDeferralNanos == 0 || deadline - System.nanoTime() <= 0 || !admissionPressure.high()) {
      return;
    }
    synchronized (lock) {
      long left;
      while (!closed && (left = deadline - System.nanoTime()) > 0 && admissionPressure.high()) {
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, Math.min(left, DEFERRAL_POLL.toNanos()));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /**
   * Records the pass's outcome (null: it did not run or threw an Error) and runs a pending rerun.
   * {@code collected}: the pass was the one deleting a dropped table's WAL.
   */
  private void finished(TableWal table, ReconcileResult result, boolean collected) {
    synchronized (lock) {
      TableState state = tables.get(table);
      if (closed) {
        tables.remove(table);
        return;
      }
      if (result != null && result.outcome() == ReconcileResult.Outcome.TABLE_DROPPED) {
        // Kept (not forgotten) while its WAL exists, so it is not found and passed over again.
        state.droppedSinceNanos = collected ? 0
            : state.droppedSinceNanos != 0 ? state.droppedSinceNanos : System.nanoTime();
      } else if (result != null && result.outcome() != ReconcileResult.Outcome.FAILED) {
        state.droppedSinceNanos = 0;
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
      execute(table);
    } else if (!state.again && state.failures == 0 && state.droppedSinceNanos == 0) {
      tables.remove(table);
    }
  }

  private boolean droppedWalDue(TableState state) {
    return System.nanoTime() - state.droppedSinceNanos >= droppedWalRetention.toNanos();
  }

  /**
   * Updates the table's status after a pass (on the pass thread, before the table is released,
   * so the statuses of one table are recorded in order): logs a change of state once, keeps the
   * status on cluster storage and in the gauges.
   */
  private void recordStatus(TableWal table, ReconcileResult result, boolean collected) {
    boolean failed = result.outcome() == ReconcileResult.Outcome.FAILED;
    Instant since;
    boolean wasFailing;
    boolean firstDrop = false;
    synchronized (lock) {
      TableState state = tables.get(table);
      wasFailing = state.failingSince != null;
      if (failed && !wasFailing) {
        state.failingSince = clock.instant();
      } else if (!failed) {
        state.failingSince = null;
      }
      since = state.failingSince;
      if (result.outcome() == ReconcileResult.Outcome.TABLE_DROPPED && state.droppedSinceNanos == 0
          && !collected) {
        firstDrop = true;
      }
    }
    ReconcileStatus previous = failing.get(table);
    // Iceberg names a loaded table "<catalog>.<ns>.<table>"; the label is "<ns>.<table>".
    String name = result.tableName() != null
        ? result.tableName().substring(result.tableName().indexOf('.') + 1)
        : previous != null ? previous.tableName() : knownName(table);
    if (firstDrop) {
      LOG.info("table {} ({}) of catalog {} no longer exists: its WAL is not published and will "
          + "be deleted after {}", table.tableUuid(), name == null ? "name unknown" : name,
          table.catalogId(), droppedWalRetention);
    }
    if (!failed) {
      if (wasFailing) {
        failing.remove(table);
        LOG.info("reconcile of table {} of catalog {} recovered after {} consecutive failures",
            name == null ? table.tableUuid() : name, table.catalogId(),
            previous == null ? "?" : previous.consecutiveFailures());
        publishStatus(table, name, ReconcileStatus.HEALTHY);
      }
      return;
    }
    long[] pending = pendingRange(table);
    ReconcileStatus status = new ReconcileStatus(name, since,
        previous == null ? 1 : previous.consecutiveFailures() + 1, result.message(), pending[0],
        pending[1]);
    failing.put(table, status);
    if (!wasFailing) {
      LOG.warn("reconcile of table {} of catalog {} is failing: {}; it is retried with backoff "
          + "and reported as failing until a pass succeeds", name == null ? table.tableUuid() : name,
          table.catalogId(), status.describe());
    }
    publishStatus(table, name, status);
  }

  private void publishStatus(TableWal table, String name, ReconcileStatus status) {
    String label = name == null ? table.tableUuid().toString() : name;
    reconciler.telemetry().metrics().reconcileTableHealth(table.catalogId(), label, status.failing(),
        status.consecutiveFailures());
    if (statusStore != null) {
      try {
        statusStore.write(table, status);
      } catch (RuntimeException e) {
        LOG.debug("could not record the reconcile status of {}: {}", table, e.getMessage());
      }
    }
  }

  /** The table's name as recorded next to its WAL ({@code ns.table}), or null. */
  private String knownName(TableWal table) {
    try {
      return wal.tableName(table)
          .map(n -> String.join(".", n.namespace()) + (n.namespace().isEmpty() ? "" : ".") + n.name())
          .orElse(null);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** First unpublished and last present WAL seq ({0, 0} when none or unknown). */
  private long[] pendingRange(TableWal table) {
    try {
      long published = wal.state(table).publishedSeq();
      List<Long> after = wal.segmentsAfter(table, published);
      return after.isEmpty() ? new long[] {0, 0} : new long[] {after.get(0), after.get(after.size() - 1)};
    } catch (RuntimeException e) {
      return new long[] {0, 0};
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

  @Override
  public boolean wantsRewrittenRows(TableWal table, long rows) {
    return reconciler.keyIndexes().wantsRewritten(table.catalogId(), table.tableUuid(), rows);
  }

  @Override
  public void rewritten(TableWal table, RewrittenRows rows) {
    reconciler.keyIndexes().offer(rows);
  }

  /** The interval tick: finds tables with pending segments that nobody triggered. */
  private void tick() {
    reconciler.warmUp();
    long lastSweep = 0;
    boolean swept = false;
    while (!closed) {
      try {
        if (!swept || System.nanoTime() - lastSweep >= sweepInterval.toNanos()) {
          long started = System.nanoTime();
          sweep();
          swept = true;
          lastSweep = started;
        } else {
          passMarkedTables();
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

  /**
   * A normal tick: a pass for each marked table with segments after its {@code published_seq};
   * a marked table without any gets its marker cleared.
   */
  private void passMarkedTables() {
    for (TableWal table : wal.pendingTables(catalogId)) {
      if (closed) {
        return;
      }
      if (!isIdle(table)) {
        continue;
      }
      if (reconciler.hasPending(table)) {
        request(table, false);
      } else {
        reconciler.clearPending(table);
      }
    }
  }

  /**
   * A full sweep: a pass for each table with a WAL and segments after its {@code published_seq},
   * whose missing marker is put first (so a failing pass is retried by the normal ticks).
   */
  private void sweep() {
    Set<TableWal> marked = new HashSet<>(wal.pendingTables(catalogId));
    for (TableWal table : wal.tables(catalogId)) {
      if (closed) {
        return;
      }
      if (!isIdle(table)) {
        continue;
      }
      if (reconciler.hasPending(table)) {
        if (!marked.contains(table)) {
          wal.markPending(table);
        }
        request(table, false);
      } else if (marked.contains(table)) {
        reconciler.clearPending(table);
      }
    }
  }

  /** True when the table has no pass scheduled and is not backing off (worth a listing). */
  private boolean isIdle(TableWal table) {
    synchronized (lock) {
      TableState state = tables.get(table);
      return state == null
          || (!state.scheduled && (state.failures == 0 || System.nanoTime() >= state.notBeforeNanos)
              && (state.droppedSinceNanos == 0 || droppedWalDue(state)));
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

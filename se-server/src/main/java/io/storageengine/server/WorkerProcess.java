package io.storageengine.server;

import io.storageengine.broker.BrokerClient;
import io.storageengine.broker.TaskHandler;
import io.storageengine.broker.TaskKeys;
import io.storageengine.broker.Worker;
import io.storageengine.broker.Task;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.storageengine.reconcile.ReconcileLoop;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.ReconcileStatus;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code se start worker}: leases reconcile and maintenance tasks from the broker found through
 * {@code broker/queue.json}, runs them against cluster storage and the tenants' catalogs, and
 * acknowledges. After a reconcile task commits, the worker schedules the table's maintenance
 * (at most once per {@code --maintenance.interval} per table and worker). A worker that dies mid-task has its lease expire; reconciliation is exactly-once,
 * so the rerun elsewhere duplicates nothing.
 */
public final class WorkerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerProcess.class);

  private final EngineContext context;
  private final Worker worker;
  /**
   * How often the worker looks for tables with unpublished WAL and no task: the safety net for
   * a server that died between writing a segment and scheduling its reconcile task.
   */
  static final Duration SWEEP = Duration.ofSeconds(15);
  /**
   * Every how many sweeps one (and the first) is a full one over every table with a WAL; the
   * others look only at the tables with a pending marker ({@link ObjectStoreWal#pendingTables}).
   */
  static final int FULL_SWEEP_EVERY = 4;
  /** Sweeps run so far (the scheduler runs one at a time). */
  private final AtomicLong sweeps = new AtomicLong();
  /** Table -> when this worker last scheduled its maintenance (nanoTime). */
  private final Map<TableWal, Long> maintenanceScheduled = new ConcurrentHashMap<>();

  private WorkerProcess(EngineContext context, int concurrency) {
    this.context = context;
    boolean ok = false;
    try {
      this.worker = startWorker(context, concurrency);
      ok = true;
    } finally {
      if (!ok) {
        context.close();
      }
    }
  }

  private Worker startWorker(EngineContext context, int concurrency) {
    ObjectStore store = context.store();
    ObjectStoreWal wal = context.wal();
    Reconciler reconciler = context.reconciler();
    Maintainer maintainer = context.maintainer();
    Duration maintenanceInterval = context.config().duration(ConfigKey.MAINTENANCE_INTERVAL);
    BrokerClient broker = new BrokerClient(store, context.clusterToken().value(), context.tls().trust());
    Map<String, TaskHandler> handlers = new LinkedHashMap<>();
    ReconcileStatusStore statuses = new ReconcileStatusStore(store);
    ReconcilePass pass = (task, table, run) -> {
      ReconcileResult result;
      try {
        result = run.get();
      } catch (RuntimeException e) {
        recordFailure(statuses, wal, table, SeException.codeOf(e) + ": " + e.getMessage());
        throw e;
      }
      if (result.outcome() == ReconcileResult.Outcome.FAILED) {
        recordFailure(statuses, wal, table, result.message());
        throw new SeException(ErrorCode.UNAVAILABLE, result.message());
      }
      if (result.outcome() == ReconcileResult.Outcome.TABLE_DROPPED) {
        LOG.debug("task {}: {}", task.key(), result.message());
        return result;
      }
      LOG.info("task {}: {} {}..{}", task.key(), result.outcome(), result.fromSeq(), result.toSeq());
      recordSuccess(statuses, table);
      if (result.outcome() == ReconcileResult.Outcome.COMMITTED) {
        scheduleMaintenance(broker, table, maintenanceInterval);
      }
      return result;
    };
    handlers.put(TaskKeys.RECONCILE, task -> {
      TableWal table = tableOf(task);
      ReconcileResult result = pass.run(task, table, () -> droppedSince(store, table)
          .filter(since -> Duration.between(since, Instant.now()).compareTo(DROPPED_WAL_RETENTION) >= 0)
          .isPresent() ? reconciler.deleteWalIfDropped(table)
          : reconciler.reconcile(table, (t, slices) -> scheduleSlices(broker, t, slices)));
      if (result.outcome() == ReconcileResult.Outcome.TABLE_DROPPED) {
        markDropped(store, table);
      }
    });
    handlers.put(TaskKeys.RECONCILE_SLICE, task -> {
      TableWal table = tableOf(task);
      pass.run(task, table, () -> reconciler.reconcileSlice(table, TaskKeys.sliceOf(task)));
    });
    handlers.put(TaskKeys.MAINTAIN, task -> {
      MaintenanceResult result = maintainer.maintain(tableOf(task));
      LOG.info("task {}: {}", task.key(), result);
      if (result.outcome() == MaintenanceResult.Outcome.FAILED) {
        throw new SeException(ErrorCode.UNAVAILABLE, String.join("; ", result.errors()));
      }
    });
    Worker worker = context.own(new Worker(broker, handlers, concurrency, Clock.systemUTC(), Worker.Options.defaults(),
        context.threads("se-worker")));
    worker.start();
    // Registered after the worker, so closing stops the sweep first.
    context.scheduler("se-worker-sweep").scheduleWithFixedDelay(
        () -> sweep(wal, broker, sweeps.getAndIncrement() % FULL_SWEEP_EVERY == 0), SWEEP.toMillis(),
        SWEEP.toMillis(), TimeUnit.MILLISECONDS);
    LOG.info("worker {} started with concurrency {}", worker.id(), concurrency);
    return worker;
  }

  public static WorkerProcess start(ServerConfig config, int concurrency) {
    return start(config, concurrency, null);
  }

  /** As {@link #start(ServerConfig, int)} on a given cluster store (tests). */
  public static WorkerProcess start(ServerConfig config, int concurrency, ObjectStore store) {
    return start(EngineContext.builder(config).store(store).writerPrefix("se-worker").build(), concurrency);
  }

  /** A worker on {@code context}, which it then owns: closing the worker closes the context. */
  public static WorkerProcess start(EngineContext context, int concurrency) {
    return new WorkerProcess(context, concurrency);
  }

  /**
   * A sliced table's reconcile task becomes one task per slice (coalesced with pending ones), so
   * that the slices run on whichever workers lease them, concurrently.
   */
  private static void scheduleSlices(BrokerClient broker, TableWal table, List<Integer> slices) {
    String uuid = table.tableUuid().toString();
    for (int slice : slices) {
      broker.schedule(TaskKeys.reconcileSliceKey(table.catalogId(), uuid, slice), TaskKeys.RECONCILE_SLICE,
          TaskKeys.slicePayload(table.catalogId(), uuid, slice));
    }
  }

  private static TableWal tableOf(Task task) {
    return new TableWal(TaskKeys.catalogOf(task), UUID.fromString(TaskKeys.tableUuidOf(task)));
  }

  /**
   * Schedules a reconcile task for every table whose WAL has segments beyond {@code published_seq}:
   * of the tables with a pending marker (clearing a stale one), or when {@code full} of every
   * table with a WAL, putting the marker of a pending table that has none.
   */
  private static void sweep(ObjectStoreWal wal, BrokerClient broker, boolean full) {
    try {
      Set<TableWal> marked = new HashSet<>(wal.pendingTables(null));
      for (TableWal table : full ? wal.tables(null) : List.copyOf(marked)) {
        long published = wal.state(table).publishedSeq();
        if (!wal.segmentsAfter(table, published).isEmpty()) {
          if (!marked.contains(table)) {
            wal.markPending(table);
          }
          ReconcileScheduler.scheduleReconcile(broker, table);
        } else if (marked.contains(table)) {
          wal.clearPending(table);
        }
      }
    } catch (RuntimeException e) {
      LOG.debug("WAL sweep incomplete, next in {}: {}", SWEEP, e.getMessage());
    }
  }

  /**
   * A table that just got a commit is due for maintenance at most once per {@code interval}
   * from this worker; the broker's unique key keeps one maintenance task per table pending
   * however many workers ask. Best effort: a failed schedule only delays maintenance.
   */
  private void scheduleMaintenance(BrokerClient broker, TableWal table, Duration interval) {
    long now = System.nanoTime();
    Long last = maintenanceScheduled.get(table);
    if (last != null && now - last < interval.toNanos()) {
      return;
    }
    maintenanceScheduled.put(table, now);
    try {
      String uuid = table.tableUuid().toString();
      broker.schedule(TaskKeys.maintainKey(table.catalogId(), uuid), TaskKeys.MAINTAIN,
          TaskKeys.tablePayload(table.catalogId(), uuid));
    } catch (RuntimeException e) {
      LOG.debug("no maintenance task scheduled for {}: {}", table, e.getMessage());
    }
  }

  /**
   * Runs one reconcile task's pass of {@code table}: a failure (thrown or FAILED) is recorded in
   * the table's status and fails the task; a success clears the status and, after a commit,
   * schedules maintenance. Returns the result (TABLE_DROPPED included) to the caller.
   */
  @FunctionalInterface
  private interface ReconcilePass {
    ReconcileResult run(Task task, TableWal table, Supplier<ReconcileResult> pass);
  }

  /**
   * A failed reconcile task: the table's status on cluster storage becomes (or stays) failing,
   * with one more consecutive failure; the change to failing is logged once, by the worker that
   * saw it, whichever worker runs the next task.
   */
  private static void recordFailure(ReconcileStatusStore statuses, ObjectStoreWal wal, TableWal table,
      String error) {
    try {
      ReconcileStatus previous = statuses.read(table);
      long published = wal.state(table).publishedSeq();
      List<Long> pending = wal.segmentsAfter(table, published);
      String name = wal.tableName(table)
          .map(n -> String.join(".", n.namespace()) + (n.namespace().isEmpty() ? "" : ".") + n.name())
          .orElse(null);
      ReconcileStatus status = new ReconcileStatus(name,
          previous.failing() ? previous.failingSince() : Instant.now(), previous.consecutiveFailures() + 1,
          error, pending.isEmpty() ? 0 : pending.get(0), pending.isEmpty() ? 0 : pending.get(pending.size() - 1));
      statuses.write(table, status);
      if (!previous.failing()) {
        LOG.warn("reconcile of table {} of catalog {} is failing: {}", name == null ? table.tableUuid() : name,
            table.catalogId(), status.describe());
      }
    } catch (RuntimeException e) {
      LOG.debug("could not record the reconcile status of {}: {}", table, e.getMessage());
    }
  }

  private static void recordSuccess(ReconcileStatusStore statuses, TableWal table) {
    try {
      ReconcileStatus previous = statuses.read(table);
      if (previous.failing()) {
        statuses.write(table, ReconcileStatus.HEALTHY);
        LOG.info("reconcile of table {} of catalog {} recovered after {} consecutive failures",
            previous.tableName() == null ? table.tableUuid() : previous.tableName(), table.catalogId(),
            previous.consecutiveFailures());
      }
    } catch (RuntimeException e) {
      LOG.debug("could not record the reconcile status of {}: {}", table, e.getMessage());
    }
  }

  /** How long a dropped table's WAL is kept before a worker deletes it (as the reconcile loop does). */
  static final Duration DROPPED_WAL_RETENTION = ReconcileLoop.DEFAULT_DROPPED_WAL_RETENTION;

  /** The marker of a table first found dropped, shared by all workers; deleted with the WAL. */
  private static String droppedKey(TableWal table) {
    return table.prefix() + "dropped.json";
  }

  private static Optional<Instant> droppedSince(ObjectStore store, TableWal table) {
    return store.get(droppedKey(table)).map(blob -> {
      try {
        return Instant.parse(Json.parse(blob.data()).path("first_seen").asText(""));
      } catch (RuntimeException e) {
        return Instant.now(); // unreadable marker: start the retention again
      }
    });
  }

  /** Records when the table was first found dropped; logs that once (the worker creating the marker). */
  private static void markDropped(ObjectStore store, TableWal table) {
    ObjectNode marker = Json.object();
    marker.put("first_seen", Instant.now().toString());
    if (store.putIfAbsent(droppedKey(table), Json.toBytes(marker)).isPresent()) {
      LOG.info("table {} of catalog {} no longer exists: its WAL is not published and will be deleted after {}",
          table.tableUuid(), table.catalogId(), DROPPED_WAL_RETENTION);
    }
  }

  /** Stops the sweep and the worker, then everything else the context owns. */
  @Override
  public void close() {
    context.close();
  }
}

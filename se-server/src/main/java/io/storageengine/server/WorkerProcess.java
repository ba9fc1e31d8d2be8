package io.storageengine.server;

import io.storageengine.broker.BrokerClient;
import io.storageengine.broker.TaskHandler;
import io.storageengine.broker.TaskKeys;
import io.storageengine.broker.Worker;
import io.storageengine.broker.Task;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
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

  private final ClusterStorage storage;
  private final BufferAllocator allocator = new RootAllocator();
  private final Worker worker;
  /**
   * How often the worker looks for tables with unpublished WAL and no task: the safety net for
   * a server that died between writing a segment and scheduling its reconcile task.
   */
  static final Duration SWEEP = Duration.ofSeconds(15);
  private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "se-worker-sweep");
    t.setDaemon(true);
    return t;
  });
  /** Table -> when this worker last scheduled its maintenance (nanoTime). */
  private final Map<TableWal, Long> maintenanceScheduled = new ConcurrentHashMap<>();

  private WorkerProcess(ServerConfig config, int concurrency, ObjectStore injectedStore) {
    this.storage = ClusterStorage.open(config, injectedStore);
    ObjectStoreWal wal = new ObjectStoreWal(storage.store(), "se-worker-" + ProcessHandle.current().pid()
        + "-" + UUID.randomUUID().toString().substring(0, 8));
    Reconciler reconciler = new Reconciler(storage.registry(), wal, storage.store(), allocator, ReconcileOptions.defaults());
    Maintainer maintainer = new Maintainer(storage.registry(), wal, storage.store(), allocator,
        ReconcileOptions.defaults(), MaintenancePolicy.defaults());
    Duration maintenanceInterval = config.duration(ConfigKey.MAINTENANCE_INTERVAL);
    BrokerClient broker = new BrokerClient(storage.store());
    Map<String, TaskHandler> handlers = new LinkedHashMap<>();
    handlers.put(TaskKeys.RECONCILE, task -> {
      TableWal table = tableOf(task);
      ReconcileResult result = reconciler.reconcile(table);
      LOG.info("task {}: {} {}..{}", task.key(), result.outcome(), result.fromSeq(), result.toSeq());
      if (result.outcome() == ReconcileResult.Outcome.FAILED) {
        throw new SeException(ErrorCode.UNAVAILABLE, result.message());
      }
      if (result.outcome() == ReconcileResult.Outcome.COMMITTED) {
        scheduleMaintenance(broker, table, maintenanceInterval);
      }
    });
    handlers.put(TaskKeys.MAINTAIN, task -> {
      MaintenanceResult result = maintainer.maintain(tableOf(task));
      LOG.info("task {}: {}", task.key(), result);
      if (result.outcome() == MaintenanceResult.Outcome.FAILED) {
        throw new SeException(ErrorCode.UNAVAILABLE, String.join("; ", result.errors()));
      }
    });
    this.worker = new Worker(broker, handlers, concurrency, Clock.systemUTC());
    worker.start();
    sweeper.scheduleWithFixedDelay(() -> sweep(wal, broker), SWEEP.toMillis(), SWEEP.toMillis(), TimeUnit.MILLISECONDS);
    LOG.info("worker {} started with concurrency {}", worker.id(), concurrency);
  }

  public static WorkerProcess start(ServerConfig config, int concurrency) {
    return new WorkerProcess(config, concurrency, null);
  }

  /** As {@link #start(ServerConfig, int)} on a given cluster store (tests). */
  public static WorkerProcess start(ServerConfig config, int concurrency, ObjectStore store) {
    return new WorkerProcess(config, concurrency, store);
  }

  private static TableWal tableOf(Task task) {
    return new TableWal(TaskKeys.catalogOf(task), UUID.fromString(TaskKeys.tableUuidOf(task)));
  }

  /** Schedules a reconcile task for every table whose WAL has segments beyond {@code published_seq}. */
  private static void sweep(ObjectStoreWal wal, BrokerClient broker) {
    try {
      for (TableWal table : wal.tables(null)) {
        long published = wal.state(table).publishedSeq();
        if (!wal.segmentsAfter(table, published).isEmpty()) {
          ReconcileScheduler.scheduleReconcile(broker, table);
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

  @Override
  public void close() {
    sweeper.shutdownNow();
    worker.close();
    storage.close();
    allocator.close();
  }
}

package io.storageengine.server;

import io.storageengine.broker.BrokerClient;
import io.storageengine.broker.TaskHandler;
import io.storageengine.broker.TaskKeys;
import io.storageengine.broker.Worker;
import io.storageengine.common.SeException;
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
 * {@code se start worker}: leases reconcile tasks from the broker found through
 * {@code broker/queue.json}, runs them against cluster storage and the tenants' catalogs, and
 * acknowledges. A worker that dies mid-task has its lease expire; reconciliation is exactly-once,
 * so the rerun elsewhere duplicates nothing.
 */
public final class WorkerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerProcess.class);

  private final ClusterStorage storage;
  private final BufferAllocator allocator = new RootAllocator();
  private final Worker worker;

  private WorkerProcess(ServerConfig config, int concurrency) {
    this.storage = ClusterStorage.open(config, null);
    ObjectStoreWal wal = new ObjectStoreWal(storage.store(), "se-worker-" + ProcessHandle.current().pid()
        + "-" + UUID.randomUUID().toString().substring(0, 8));
    Reconciler reconciler = new Reconciler(storage.registry(), wal, storage.store(), allocator, ReconcileOptions.defaults());
    Map<String, TaskHandler> handlers = new LinkedHashMap<>();
    handlers.put(TaskKeys.RECONCILE, task -> {
      TableWal table = new TableWal(TaskKeys.catalogOf(task), UUID.fromString(TaskKeys.tableUuidOf(task)));
      ReconcileResult result = reconciler.reconcile(table);
      LOG.info("task {}: {} {}..{}", task.key(), result.outcome(), result.fromSeq(), result.toSeq());
      if (result.outcome() == ReconcileResult.Outcome.FAILED) {
        throw new SeException(io.storageengine.common.ErrorCode.UNAVAILABLE, result.message());
      }
    });
    this.worker = new Worker(new BrokerClient(storage.store()), handlers, concurrency, Clock.systemUTC());
    worker.start();
    LOG.info("worker {} started with concurrency {}", worker.id(), concurrency);
  }

  public static WorkerProcess start(ServerConfig config, int concurrency) {
    return new WorkerProcess(config, concurrency);
  }

  @Override
  public void close() {
    worker.close();
    storage.close();
    allocator.close();
  }
}

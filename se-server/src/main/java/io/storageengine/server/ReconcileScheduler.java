package io.storageengine.server;

import io.storageengine.broker.BrokerClient;
import io.storageengine.broker.TaskKeys;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code se start server}: after each WAL segment, asks the broker (when one is recorded in
 * {@code broker/queue.json}) to reconcile the table. Never blocks ingestion: requests run on one
 * background thread, duplicates coalesce in the broker, and a missing or unreachable broker only
 * means the WAL waits for {@code se reconcile} or the next successful schedule.
 */
final class ReconcileScheduler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileScheduler.class);

  private final BrokerClient client;
  private final ExecutorService executor;

  ReconcileScheduler(ObjectStore store) {
    this.client = new BrokerClient(store, Duration.ofSeconds(5), 2, Duration.ofMillis(100));
    this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(10_000), r -> {
      Thread t = new Thread(r, "se-reconcile-scheduler");
      t.setDaemon(true);
      return t;
    }, new ThreadPoolExecutor.DiscardPolicy());
  }

  void segmentWritten(TableWal table) {
    executor.execute(() -> {
      try {
        client.schedule(TaskKeys.reconcileKey(table.catalogId(), table.tableUuid().toString()), TaskKeys.RECONCILE,
            TaskKeys.tablePayload(table.catalogId(), table.tableUuid().toString()));
      } catch (RuntimeException e) {
        LOG.debug("no reconcile task scheduled for {}: {}", table, e.getMessage());
      }
    });
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

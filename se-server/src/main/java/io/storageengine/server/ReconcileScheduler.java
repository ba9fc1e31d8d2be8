package io.storageengine.server;

import io.storageengine.broker.BrokerClient;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.broker.TaskKeys;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code se start server}: after each WAL segment, asks the broker (when one is recorded in
 * {@code broker/queue.json}) to reconcile the table. Never blocks ingestion: requests run on one
 * background thread and duplicates coalesce, here (a table is asked for once however many
 * segments arrive meanwhile) and in the broker (one pending task per table). A table whose
 * request failed (no broker, or a broker being replaced) stays due and is asked for again every
 * {@link #RETRY}, so a segment written while the broker was away is still published once a
 * broker is back.
 */
final class ReconcileScheduler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileScheduler.class);
  static final Duration RETRY = Duration.ofMillis(500);

  private final BrokerClient client;
  private final ScheduledExecutorService executor;
  /** Tables with a segment whose reconcile task is not yet known to the broker. */
  private final Set<TableWal> due = ConcurrentHashMap.newKeySet();

  /** @param executor the one background thread (shut down by {@link #close}) */
  ReconcileScheduler(ObjectStore store, ScheduledExecutorService executor, Optional<String> clusterToken,
      ClientTrust trust) {
    this.client = new BrokerClient(store, Duration.ofSeconds(5), 2, Duration.ofMillis(100), clusterToken, trust);
    this.executor = executor;
    executor.scheduleWithFixedDelay(this::scheduleDue, RETRY.toMillis(), RETRY.toMillis(), TimeUnit.MILLISECONDS);
  }

  void segmentWritten(TableWal table) {
    if (due.add(table)) {
      executor.execute(this::scheduleDue);
    }
  }

  private void scheduleDue() {
    List<TableWal> tables = new ArrayList<>(due);
    for (TableWal table : tables) {
      // Removed before asking: a segment written while the request is in flight marks it due again.
      due.remove(table);
      try {
        scheduleReconcile(client, table);
      } catch (RuntimeException e) {
        due.add(table);
        LOG.debug("reconcile task for {} not scheduled yet, retrying: {}", table, e.getMessage());
        return; // the broker is away: the rest would fail the same way; retry all later
      }
    }
  }

  /** Asks the broker for {@code table}'s reconcile task (coalesced with a pending one). */
  static void scheduleReconcile(BrokerClient broker, TableWal table) {
    String uuid = table.tableUuid().toString();
    broker.schedule(TaskKeys.reconcileKey(table.catalogId(), uuid), TaskKeys.RECONCILE,
        TaskKeys.tablePayload(table.catalogId(), uuid));
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

package io.storageengine.server;

import io.storageengine.catalog.Tables;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.reconcile.ReconcileLoop;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.server.observability.ServerObservability;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * {@code se reconcile}: publishes WAL to Iceberg straight from cluster storage, with no server
 * involved, so it pairs with {@code se start server}. One-shot or watching.
 */
public final class ReconcileRunner implements AutoCloseable {
  private final ServerObservability observability;
  private final ClusterStorage storage;
  private final BufferAllocator allocator = new RootAllocator();
  private final DuckRuntime duckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
  private final ObjectStoreWal wal;
  private final Reconciler reconciler;
  private final Maintainer maintainer;

  public ReconcileRunner(ServerConfig config) {
    this.observability = ServerObservability.start();
    this.storage = ClusterStorage.open(config, null, observability.catalogListener(),
        raw -> observability.traced(raw, "cluster"));
    this.wal = new ObjectStoreWal(storage.store(), "se-reconcile-" + ProcessHandle.current().pid() + "-"
        + UUID.randomUUID().toString().substring(0, 8));
    this.reconciler = new Reconciler(storage.registry(), wal, storage.store(), allocator, duckdb, ReconcileOptions.defaults());
    this.maintainer = new Maintainer(storage.registry(), wal, storage.store(), allocator, duckdb, ReconcileOptions.defaults(),
        MaintenancePolicy.defaults());
  }

  /** {@code se maintain}: one maintenance pass over every table (of {@code catalogId}), or one table. */
  public List<MaintenanceResult> maintain(String catalogId, String table) {
    if (table == null) {
      return maintainer.maintainAll(catalogId);
    }
    if (catalogId == null) {
      throw SeException.invalid("--table needs --catalog-id");
    }
    return List.of(maintainer.maintain(catalogId, Tables.parseIdentifier(table)));
  }

  /**
   * One pass: every table with pending WAL (of {@code catalogId} when not null), or the one
   * {@code table} ({@code ns.name}, needs {@code catalogId}).
   */
  public List<ReconcileResult> once(String catalogId, String table) {
    if (table == null) {
      return reconciler.reconcileAll(catalogId);
    }
    if (catalogId == null) {
      throw SeException.invalid("--table needs --catalog-id");
    }
    return List.of(reconciler.reconcile(tableWal(catalogId, table)));
  }

  /** Reconciles continuously until the thread is interrupted. */
  public void watch(String catalogId, java.time.Duration interval, Consumer<ReconcileResult> results)
      throws InterruptedException {
    try (ReconcileLoop loop = new ReconcileLoop(reconciler, wal, catalogId, interval, results)
        .withStatusStore(new ReconcileStatusStore(storage.store())).start()) {
      Thread.currentThread().join();
    }
  }

  private TableWal tableWal(String catalogId, String table) {
    TableIdentifier ident = Tables.parseIdentifier(table);
    try {
      Table loaded = storage.registry().catalog(catalogId).loadTable(ident);
      return new TableWal(catalogId, loaded.uuid());
    } catch (NoSuchTableException e) {
      throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
    }
  }

  @Override
  public void close() {
    storage.close();
    duckdb.close();
    allocator.close();
    observability.close();
  }
}

package io.storageengine.server;

import io.storageengine.catalog.Tables;
import io.storageengine.common.SeException;
import io.storageengine.reconcile.ReconcileLoop;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import java.util.List;
import java.util.function.Consumer;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * {@code se reconcile}: publishes WAL to Iceberg straight from cluster storage, with no server
 * involved, so it pairs with {@code se start server}. One-shot or watching.
 */
public final class ReconcileRunner implements AutoCloseable {
  private final EngineContext context;
  private final ObjectStoreWal wal;
  private final Reconciler reconciler;
  private final Maintainer maintainer;

  public ReconcileRunner(ServerConfig config) {
    this(EngineContext.builder(config).writerPrefix("se-reconcile").build());
  }

  /** A runner on {@code context}, which it then owns: closing the runner closes the context. */
  public ReconcileRunner(EngineContext context) {
    this.context = context;
    this.wal = context.wal();
    this.reconciler = context.reconciler();
    this.maintainer = context.maintainer();
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
   * {@code se maintain --split-slice}: splits slice {@code sliceId} of the sliced entity table
   * {@code table} of {@code catalogId} now, online; the change made, empty when the table's
   * slices-meta changed meanwhile.
   */
  public java.util.Optional<String> splitSlice(String catalogId, String table, int sliceId) {
    if (catalogId == null || table == null) {
      throw SeException.invalid("--split-slice needs --catalog-id and --table");
    }
    return maintainer.splitSlice(catalogId, Tables.parseIdentifier(table), sliceId);
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
    try (ReconcileLoop loop = new ReconcileLoop(reconciler, wal, catalogId, interval, results,
        context.threads("se-reconcile"))
        .withStatusStore(new ReconcileStatusStore(context.store())).start()) {
      Thread.currentThread().join();
    }
  }

  private TableWal tableWal(String catalogId, String table) {
    TableIdentifier ident = Tables.parseIdentifier(table);
    try {
      Table loaded = context.registry().catalog(catalogId).loadTable(ident);
      return new TableWal(catalogId, loaded.uuid());
    } catch (NoSuchTableException e) {
      throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
    }
  }

  @Override
  public void close() {
    context.close();
  }
}

package io.storageengine.reconcile.maintenance;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.TableGate;
import io.storageengine.reconcile.TableLocator;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps tables healthy under continuous reconciliation (ARCHITECTURE.md 10): compacts small
 * files and folds deletion vectors, rewrites manifests, expires snapshots (keeping the
 * {@code se.wal.seq} lineage), deletes orphan files, garbage-collects WAL segments and expired
 * tombstones. Policies come from table properties ({@link MaintenancePolicy}) over the defaults
 * given here. Maintenance commits never lose or duplicate a row and never block ingestion or
 * reconciliation: they conflict safely and retry. Thread-safe; may run in any number of
 * processes next to any number of reconcilers.
 */
public final class Maintainer {
  private static final Logger LOG = LoggerFactory.getLogger(Maintainer.class);

  private final TenantCatalogs catalogs;
  private final WalLog wal;
  private final MaintenancePolicy defaults;
  private final TableLocator locator;
  private final TableMaintainer tables;

  /**
   * @param clusterStore cluster storage holding the WAL and the tombstones
   * @param tombstones the engine's parsed tombstones and tombstone I/O threads (not closed here)
   * @param allocator parent allocator; each compaction uses (and closes) a child of it
   * @param duckdb the process's DuckDB runtime (databases, cached data file copies and footers)
   * @param options DuckDB threads, Parquet row group size and clock (shared with reconcile)
   * @param defaults the policy of tables that do not set {@code se.maintenance.*} properties
   */
  public Maintainer(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, MaintenancePolicy defaults) {
    this(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, defaults, MaintenanceHooks.NONE);
  }

  public Maintainer(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, MaintenancePolicy defaults, MaintenanceHooks hooks) {
    this(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, defaults, hooks, TableGate.NONE);
  }

  /**
   * @param gate compactions run through it, so that the reconcile passes of this process never
   *     commit to the table while it is compacted (see {@link TableGate})
   */
  public Maintainer(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, MaintenancePolicy defaults, MaintenanceHooks hooks,
      TableGate gate) {
    this.catalogs = catalogs;
    this.wal = wal;
    this.defaults = defaults;
    this.locator = new TableLocator(wal);
    this.tables = new TableMaintainer(wal, clusterStore, tombstones, allocator, duckdb, options, hooks, gate,
        new io.storageengine.reconcile.Reconciler(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options));
  }

  /**
   * One pass over the table a WAL belongs to. Step failures are reported in the result
   * (PARTIAL), not thrown; a catalog that cannot be reached yields FAILED.
   */
  public MaintenanceResult maintain(TableWal table) {
    long started = System.nanoTime();
    Optional<Table> found;
    try {
      found = locator.locate(catalogs.catalog(table.catalogId()), table);
    } catch (RuntimeException e) {
      return MaintenanceResult.skipped(table, null, MaintenanceResult.Outcome.FAILED,
          "catalog: " + SeException.codeOf(e) + ": catalog '" + table.catalogId() + "' is unavailable: "
              + e.getMessage(), (System.nanoTime() - started) / 1_000_000);
    }
    if (found.isEmpty()) {
      return MaintenanceResult.skipped(table, null, MaintenanceResult.Outcome.TABLE_DROPPED,
          null, (System.nanoTime() - started) / 1_000_000);
    }
    return tables.run(table, found.get(), defaults);
  }

  /**
   * One pass over the table {@code identifier} of {@code catalogId} ({@code se maintain
   * --table}); the table need not have a WAL. Throws {@code SeException(NOT_FOUND)} when the
   * catalog or the table does not exist.
   */
  public MaintenanceResult maintain(String catalogId, TableIdentifier identifier) {
    Table table = load(catalogId, identifier);
    return tables.run(new TableWal(catalogId, table.uuid()), table, defaults);
  }

  /**
   * Splits slice {@code sliceId} of the sliced entity table {@code identifier} of
   * {@code catalogId} at the midpoint of its hash range now ({@code se maintain --split-slice}),
   * online, by the protocol of {@link io.storageengine.reconcile.SliceMeta}; returns the change
   * ({@code "split [0] -> [2, 3]"}), empty when the slices-meta changed meanwhile. NOT_FOUND
   * for a missing table or slice, INVALID_ARGUMENT for a table that is not sliced.
   */
  public Optional<String> splitSlice(String catalogId, TableIdentifier identifier, int sliceId) {
    Table table = load(catalogId, identifier);
    return tables.splitSlice(new TableWal(catalogId, table.uuid()), table, sliceId);
  }

  /** The table, or NOT_FOUND naming it when the catalog or the table does not exist. */
  private Table load(String catalogId, TableIdentifier identifier) {
    Catalog catalog = catalogs.catalog(catalogId);
    try {
      return catalog.loadTable(identifier);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      throw SeException.notFound("table '%s' not found in catalog '%s'", identifier, catalogId);
    }
  }

  /**
   * One pass over every table with a WAL in {@code catalogId} (all catalogs when null). A
   * failing table does not stop the others.
   */
  public List<MaintenanceResult> maintainAll(String catalogId) {
    List<MaintenanceResult> results = new ArrayList<>();
    for (TableWal table : wal.tables(catalogId)) {
      try {
        results.add(maintain(table));
      } catch (RuntimeException e) {
        LOG.warn("maintenance of table {} failed: {}", table.tableUuid(), e.getMessage());
        results.add(MaintenanceResult.skipped(table, null, MaintenanceResult.Outcome.FAILED,
            SeException.codeOf(e) + ": " + e.getMessage(), 0));
      }
    }
    return results;
  }
}

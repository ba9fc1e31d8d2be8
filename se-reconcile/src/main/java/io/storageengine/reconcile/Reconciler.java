package io.storageengine.reconcile;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Files;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.parquet.ParquetUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes WAL segments into their Iceberg tables (ARCHITECTURE.md 7). Each pass over a table
 * reads the contiguous segments after the table's WAL high-water mark, materializes them and
 * commits exactly one snapshot carrying the new mark, then advances {@code published_seq}.
 * Exactly-once: the mark lives in the Iceberg snapshot, and a commit only lands on the lineage
 * it was computed from, so reruns, crashes and racing reconcilers never apply a range twice.
 * Thread-safe; any number of reconcilers (threads or processes) may run on the same tables.
 */
public final class Reconciler {
  private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

  private final TenantCatalogs catalogs;
  private final WalLog wal;
  private final ObjectStore clusterStore;
  private final TombstoneCache tombstones;
  private final BufferAllocator allocator;
  private final DuckRuntime duckdb;
  private final ReconcileOptions options;
  private final ReconcileHooks hooks;
  private final TableLocator locator;
  private final Telemetry telemetry;
  private final KeyIndexes keyIndexes;

  /**
   * @param clusterStore cluster storage holding the WAL (tombstones are kept next to it)
   * @param tombstones the engine's parsed tombstones and tombstone I/O threads (not closed here)
   * @param allocator parent allocator; each pass uses (and closes) a child of it
   * @param duckdb the process's DuckDB runtime (databases, cached data file copies and footers)
   */
  public Reconciler(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options) {
    this(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, ReconcileHooks.NONE);
  }

  public Reconciler(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, ReconcileHooks hooks) {
    this(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, hooks, Telemetry.none());
  }

  /**
   * @param telemetry receives each pass's {@code reconcile.*} spans and metrics, and the table
   *     health gauges of a {@link ReconcileLoop} over this reconciler
   */
  public Reconciler(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, ReconcileHooks hooks,
      Telemetry telemetry) {
    this(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, hooks, telemetry,
        new KeyIndexes(options.keyIndexBytes()));
  }

  /**
   * @param keyIndexes where the key indexes of entity tables are kept between passes (shared by
   *     reconcilers of one process, as tests that make a reconciler per pass do)
   */
  Reconciler(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, ReconcileHooks hooks,
      Telemetry telemetry, KeyIndexes keyIndexes) {
    this.telemetry = java.util.Objects.requireNonNull(telemetry, "telemetry");
    this.catalogs = catalogs;
    this.wal = wal;
    this.clusterStore = clusterStore;
    this.tombstones = tombstones;
    this.allocator = allocator;
    this.duckdb = duckdb;
    this.options = options;
    this.hooks = hooks;
    this.locator = new TableLocator(wal);
    this.keyIndexes = keyIndexes;
    keyIndexes.syncInBackgroundWith(duckdb, allocator, options.duckdbThreads(), KeyIndexes.BACKGROUND_SYNC_ROWS);
    telemetry.metrics().reconcileKeyIndexes(keyIndexes, k -> k.held()[0], k -> k.held()[1], k -> k.uses()[0],
        k -> k.uses()[1]);
  }

  /** The key indexes of entity tables kept between this reconciler's passes. */
  KeyIndexes keyIndexes() {
    return keyIndexes;
  }

  /** Where the passes report their spans and metrics. */
  public Telemetry telemetry() {
    return telemetry;
  }

  /**
   * One pass over one table. Returns COMMITTED, UP_TO_DATE or TABLE_DROPPED; throws
   * {@code SeException(UNAVAILABLE)} when the catalog or storage is unreachable (retry with
   * backoff; the WAL keeps the data) and {@code SeException(CONFLICT)} when commits kept
   * conflicting. Nothing is published by a pass that throws.
   */
  public ReconcileResult reconcile(TableWal table) {
    ReconcileResult result = new TableReconciler(catalogs, wal, clusterStore, tombstones, allocator, duckdb,
        options, hooks, locator, telemetry, keyIndexes).run(table);
    if (result.outcome() == ReconcileResult.Outcome.COMMITTED
        || result.outcome() == ReconcileResult.Outcome.UP_TO_DATE) {
      clearPending(table);
    }
    return result;
  }

  /**
   * As {@link #reconcile}, except that a sliced table's slices are handed to {@code dispatch}
   * (UP_TO_DATE, nothing committed by this pass) instead of being reconciled here.
   */
  public ReconcileResult reconcile(TableWal table, SliceDispatch dispatch) {
    return new TableReconciler(catalogs, wal, clusterStore, tombstones, allocator, duckdb, options, hooks, locator,
        telemetry, keyIndexes).dispatchingSlices(dispatch).run(table);
  }

  /**
   * The pass of one slice of a sliced table (ARCHITECTURE.md 9.1), as {@link #reconcile} returns
   * and throws; passes of different slices of one table may run at once, in any processes.
   * NOT_FOUND when the table has no such slice; a table that is not sliced gets its ordinary pass.
   */
  public ReconcileResult reconcileSlice(TableWal table, int sliceId) {
    ReconcileResult result = new TableReconciler(catalogs, wal, clusterStore, tombstones, allocator, duckdb,
        options, hooks, locator, telemetry, keyIndexes).forSlice(sliceId).run(table);
    if (result.outcome() == ReconcileResult.Outcome.COMMITTED
        || result.outcome() == ReconcileResult.Outcome.UP_TO_DATE) {
      clearPending(table);
    }
    return result;
  }

  /**
   * The slice ids of {@code table} from its slices-meta (created from {@code se.slice.count} when
   * missing); empty when the table is not sliced or no longer exists. UNAVAILABLE when the
   * catalog cannot be reached.
   */
  public List<Integer> slicesOf(TableWal table) {
    Optional<Table> found;
    try {
      found = locator.locate(catalogs.catalog(table.catalogId()), table);
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "catalog `" + table.catalogId() + "` is unavailable: "
          + e.getMessage(), e);
    }
    if (found.isEmpty()) {
      return List.of();
    }
    Table t = found.get();
    return SliceMeta.load(clusterStore, table, t)
        .map(layout -> layout.asOf(io.storageengine.catalog.TableSlices.marks(t, t.currentSnapshot())).stream()
            .map(io.storageengine.catalog.TableSlices.Slice::id).toList())
        .orElse(List.of());
  }

  /**
   * Clears the table's pending marker after a pass that published (or found nothing); the marker
   * is put back when segments remain ({@link WalLog#clearPending}). A failure does not fail the
   * pass: the marker then stays (or the full sweep puts it back) and only costs another pass.
   */
  void clearPending(TableWal table) {
    try {
      wal.clearPending(table);
    } catch (RuntimeException e) {
      LOG.debug("could not clear the pending marker of {}: {}", table, e.getMessage());
    }
  }

  /**
   * One pass over every table of {@code catalogId} (all catalogs when null) that has segments
   * after its {@code published_seq}. A failing table does not stop the others; it is reported
   * as FAILED with its message.
   */
  public List<ReconcileResult> reconcileAll(String catalogId) {
    List<ReconcileResult> results = new ArrayList<>();
    for (TableWal table : wal.tables(catalogId)) {
      if (!hasPending(table)) {
        continue;
      }
      results.add(reconcileReportingFailure(table));
    }
    return results;
  }

  /**
   * Starts DuckDB and writes and reads back one tiny Parquet file, so the first real pass does
   * not also pay for loading the native library and the Parquet and metrics code (seconds on a
   * busy machine, which the first acknowledged batches would see as freshness).
   */
  void warmUp() {
    long started = System.nanoTime();
    try (BufferAllocator warmUpAllocator = allocator.newChildAllocator("reconcile-warm-up", 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, warmUpAllocator, options.duckdbThreads(), "warm-up")) {
      Path file = duck.newDirectory("warm-up").resolve("warm-up.parquet");
      duck.execute("COPY (SELECT 1::BIGINT AS id, 'a' AS s) TO " + SqlQuoting.literal(file.toString())
          + " (FORMAT parquet, FIELD_IDS {id: 1, s: 2}, COMPRESSION zstd)");
      ParquetUtil.fileMetrics(Files.localInput(file.toFile()), MetricsConfig.getDefault());
      LOG.debug("reconcile warm-up took {} ms", (System.nanoTime() - started) / 1_000_000);
    } catch (RuntimeException e) {
      // Only an optimisation: a real pass reports whatever is wrong with DuckDB.
      LOG.debug("reconcile warm-up failed: {}", e.getMessage());
    }
  }

  /** True when the table's WAL has segments after its {@code published_seq}. */
  public boolean hasPending(TableWal table) {
    return !wal.segmentsAfter(table, wal.state(table).publishedSeq()).isEmpty();
  }

  /**
   * Deletes the WAL of a table that no longer exists in its catalog (checked again here, by UUID,
   * like a pass does): TABLE_DROPPED, with the number of files deleted in the message. A table
   * found after all gets an ordinary pass instead. Throws like {@link #reconcile}.
   */
  public ReconcileResult deleteWalIfDropped(TableWal table) {
    Catalog catalog = catalogs.catalog(table.catalogId());
    Optional<Table> found;
    try {
      found = locator.locate(catalog, table);
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "catalog `" + table.catalogId()
          + "` is unavailable: " + e.getMessage(), e);
    }
    if (found.isPresent()) {
      return reconcile(table);
    }
    int deleted = wal.deleteTable(table);
    LOG.info("deleted the WAL of table {} of catalog {}, dropped from its catalog ({} files)",
        table.tableUuid(), table.catalogId(), deleted);
    return new ReconcileResult(table, null, ReconcileResult.Outcome.TABLE_DROPPED, 0, 0, 0, 0, 0, 0,
        0, 1, "table " + table.tableUuid() + " was dropped from catalog " + table.catalogId()
            + "; its WAL was deleted (" + deleted + " files)");
  }

  ReconcileResult reconcileReportingFailure(TableWal table) {
    return capturingFailure(table, () -> reconcile(table), true);
  }

  /**
   * {@code pass} over {@code table}, a failure returned as FAILED; logged at WARN when
   * {@code warn} (one-shot runs), else at DEBUG (the loop logs state changes itself).
   */
  ReconcileResult capturingFailure(TableWal table, java.util.function.Supplier<ReconcileResult> pass,
      boolean warn) {
    try {
      return pass.get();
    } catch (RuntimeException e) {
      ErrorCode code = SeException.codeOf(e);
      if (warn) {
        LOG.warn("reconcile of table {} failed ({}): {}", table.tableUuid(), code, e.getMessage());
      } else {
        LOG.debug("reconcile of table {} failed ({}): {}", table.tableUuid(), code, e.getMessage());
      }
      if (code == ErrorCode.INTERNAL) {
        LOG.debug("reconcile of table {}: internal failure", table.tableUuid(), e); // where, for operators
      }
      return new ReconcileResult(table, null, ReconcileResult.Outcome.FAILED, 0, 0, 0, 0, 0, 0, 0, 1,
          code + ": " + e.getMessage());
    }
  }
}

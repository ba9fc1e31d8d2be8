package io.storageengine.reconcile.maintenance;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.TableGate;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.TombstoneStore;
import io.storageengine.reconcile.WalHighWaterMark;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One maintenance pass over one table: on a sliced entity table a split or merge of its slices
 * ({@link SliceResizer}), then compaction, manifest rewrite, snapshot expiry, orphan cleanup,
 * WAL garbage collection and tombstone expiry, in that order (expiry first drops the
 * files compaction replaced, so orphan cleanup lists fewer). A failing step is reported and the
 * others still run: each is safe on its own.
 */
final class TableMaintainer {
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final WalLog wal;
  private final ObjectStore clusterStore;
  private final TombstoneCache tombstoneCache;
  private final ReconcileOptions options;
  private final Compactor compactor;
  private final SliceResizer resizer;
  private final TableGate gate;

  /** @param reconciler runs the passes that bring the slices of a merge to the same progress */
  TableMaintainer(WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones, BufferAllocator allocator, DuckRuntime duckdb,
      ReconcileOptions options, MaintenanceHooks hooks, TableGate gate, io.storageengine.reconcile.Reconciler reconciler) {
    this.wal = wal;
    this.clusterStore = clusterStore;
    this.tombstoneCache = tombstones;
    this.options = options;
    this.compactor = new Compactor(allocator, duckdb, options, hooks);
    this.resizer = new SliceResizer(clusterStore, allocator, duckdb, options, hooks, reconciler);
    this.gate = gate;
  }

  MaintenanceResult run(TableWal tableWal, Table table, MaintenancePolicy defaults) {
    long started = System.nanoTime();
    MaintenancePolicy policy;
    try {
      policy = MaintenancePolicy.forTable(table, defaults);
    } catch (SeException e) {
      return MaintenanceResult.skipped(tableWal, table.name(), MaintenanceResult.Outcome.FAILED,
          "policy: " + e.getMessage(), elapsed(started));
    }
    if (!policy.enabled()) {
      return MaintenanceResult.skipped(tableWal, table.name(), MaintenanceResult.Outcome.DISABLED, null,
          elapsed(started));
    }
    List<String> errors = new ArrayList<>();
    List<String> sliceChanges = step(errors, "slices", List.<String>of(), () -> gate.exclusive(tableWal, () -> {
      table.refresh();
      return resizer.resize(tableWal.catalogId(), tableWal, table).map(List::of).orElse(List.of());
    }));
    // A table with row lineage is read and rewritten while its passes go on (their deletes are
    // carried onto the new files) and holds them back only to commit; one without, throughout.
    MaintenanceResult.Compaction compaction = step(errors, "compaction", MaintenanceResult.Compaction.NONE,
        () -> TableUtil.formatVersion(table) >= 3
            ? compactor.compact(tableWal.catalogId(), table, policy, Compactor.CommitGate.through(gate, tableWal))
            : gate.exclusive(tableWal, () -> {
              table.refresh(); // plan on the commit of the pass that just ended
              return compactor.compact(tableWal.catalogId(), table, policy, Compactor.CommitGate.NONE);
            }));
    int[] manifests = step(errors, "manifests", new int[] {0, 0}, () -> ManifestRewriter.rewrite(table, policy));
    int expired = step(errors, "snapshot expiry", 0,
        () -> SnapshotExpiry.expire(table, policy, options.clock().millis()));
    int orphans = step(errors, "orphan files", 0,
        () -> OrphanFileCleaner.clean(table, policy, options.clock().millis()));
    int segments = step(errors, "wal gc", 0,
        () -> WalGarbageCollector.collect(wal, tableWal, table, policy, options.clock().millis()));
    long gcSeq = step(errors, "wal state", 0L, () -> wal.state(tableWal).gcSeq());
    MaintenanceResult.Tombstones tombstones = step(errors, "tombstones", MaintenanceResult.Tombstones.NONE, () -> {
      TombstoneStore.Expiry e = new TombstoneStore(clusterStore, tableWal, tombstoneCache).expire(options.clock().instant(),
          TombstoneStore.retention(table, options.defaultTombstoneRetention()), WalHighWaterMark.of(table));
      return new MaintenanceResult.Tombstones(e.entriesExpired(), e.filesDeleted(), e.filesRewritten());
    });
    MaintenanceResult result = new MaintenanceResult(tableWal, table.name(),
        errors.isEmpty() ? MaintenanceResult.Outcome.MAINTAINED : MaintenanceResult.Outcome.PARTIAL,
        compaction, manifests[0], manifests[1], expired, orphans, segments, gcSeq, tombstones,
        List.copyOf(errors), elapsed(started), sliceChanges);
    if (result.didWork() || !errors.isEmpty()) {
      LOG.info("maintained {}: slices {}, compacted {} files into {} ({} deletion vectors folded, {} rows deleted "
          + "meanwhile carried, {} conflicts), manifests {} -> {}, {} snapshots expired, {} orphans, {} WAL segments, "
          + "{} tombstones; errors {}",
          table.name(), sliceChanges, compaction.dataFilesRemoved(), compaction.dataFilesAdded(), compaction.deleteVectorsFolded(),
          compaction.rowsCarried(), compaction.conflicts(), manifests[0], manifests[1], expired, orphans, segments,
          tombstones.entriesExpired(), errors);
    }
    return result;
  }

  /** Splits slice {@code sliceId} of the sliced table now ({@code se table split-slice}). */
  Optional<String> splitSlice(TableWal tableWal, Table table, int sliceId) {
    return gate.exclusive(tableWal, () -> {
      table.refresh();
      return resizer.split(tableWal.catalogId(), tableWal, table, sliceId);
    });
  }

  private static <T> T step(List<String> errors, String name, T fallback, Supplier<T> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      LOG.warn("maintenance step {} failed: {}", name, e.getMessage());
      errors.add(name + ": " + SeException.codeOf(e) + ": " + e.getMessage());
      return fallback;
    }
  }

  private static long elapsed(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }
}

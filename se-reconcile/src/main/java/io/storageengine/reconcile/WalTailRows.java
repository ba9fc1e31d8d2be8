package io.storageengine.reconcile;

import io.storageengine.common.Cancel;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What reconciliation will make of WAL segments not reconciled yet, for readers that show it
 * before the commit (queries that read their own writes). Every step is reconcile's own:
 * segments are staged by {@link WalStaging} (columns matched by field id to the table's schema,
 * safe widenings applied, every frame checked), and the rows are written as Parquet with the
 * Iceberg field ids, so a reader sees the file as one more data file of the table.
 *
 * <ul>
 *   <li>Append tables ({@link #writeAppendRows}): every staged row, as {@link AppendMaterializer}
 *       writes them.</li>
 *   <li>Entity tables ({@link #foldEntityLayer}): the steps of {@link EntityMaterializer} up to
 *       the fold against a given snapshot ({@link CandidateFiles}, {@link BatchCurrentRows},
 *       {@link BatchTombstones#load}, {@link EntityFold}): the rows the keys end with, and the
 *       positions of the snapshot's rows they replace or delete; folded incrementally, a layer
 *       per step onto the layers before ({@link EntityTailLayer}).</li>
 * </ul>
 */
public final class WalTailRows {
  private final DuckRuntime duckdb;
  private final BufferAllocator allocator;
  private final ObjectStore clusterStore;
  private final TombstoneCache tombstones;
  private final ReconcileOptions options;
  /** The candidate files of the snapshots folded onto, planned in memory for small snapshots. */
  private final CandidateFiles.Cache candidates = new CandidateFiles.Cache();
  /** The key indexes of the process's reconciler, if it shares them ({@link #sharingKeyIndexesOf}). */
  private volatile KeyIndexes keyIndexes;
  /** The schema of the shared DuckDB database holding entity folds' layer states. */
  static final String STATE_SCHEMA = "se_wal_tail_state";
  private static final Logger LOG = LoggerFactory.getLogger(WalTailRows.class);

  /**
   * @param clusterStore where entity tables' tombstones are (null: entity tables cannot be folded)
   * @param options the reconcile options (DuckDB threads, tombstone retention, clock)
   */
  public WalTailRows(DuckRuntime duckdb, BufferAllocator allocator, ObjectStore clusterStore,
      TombstoneCache tombstones, ReconcileOptions options) {
    this.duckdb = duckdb;
    this.allocator = allocator;
    this.clusterStore = clusterStore;
    this.tombstones = tombstones;
    this.options = options;
  }

  /**
   * Folds of entity tails look their keys up in {@code reconciler}'s key indexes (a process that
   * reconciles and serves queries, such as {@code se dev}) when one describes the snapshot
   * folded onto and no pass holds it, instead of reading the snapshot's candidate files.
   */
  public WalTailRows sharingKeyIndexesOf(Reconciler reconciler) {
    this.keyIndexes = reconciler.keyIndexes();
    return this;
  }

  /** Whether {@link #foldEntityLayer} is available (tombstones can be read). */
  public boolean foldsEntities() {
    return clusterStore != null && tombstones != null;
  }

  /**
   * Writes the append rows of {@code segments} to the Parquet file {@code target} (replaced) and
   * returns how many rows it holds.
   *
   * @param scope the tenant (catalog id) the segments belong to
   * @throws io.storageengine.common.SeException INVALID_ARGUMENT or INTERNAL for a segment that
   *     reconciliation refuses as well
   */
  public long writeAppendRows(String scope, Schema schema, List<WalSegment> segments, Path target) {
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-" + scope, 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, options.duckdbThreads(), scope)) {
      long rows = WalStaging.load(duck, schema, segments);
      copy(duck, schema, "SELECT " + columnList(schema) + " FROM " + WalStaging.TABLE, target);
      return rows;
    }
  }

  /**
   * Loads the append rows of {@code segments}, as {@link #writeAppendRows} writes them, into a
   * new table {@code table} (a qualified DuckDB name, replaced if it exists) on {@code connection},
   * which stays the caller's: the frames are decoded, checked and conformed to {@code schema} by
   * the same staging, and DuckDB scans them through its Arrow scan, with no file written. The
   * table's first columns are {@code schema}'s, by name and in order; staging's own columns
   * follow. The Arrow memory used is released before it returns.
   *
   * @throws io.storageengine.common.SeException INVALID_ARGUMENT or INTERNAL for a segment that
   *     reconciliation refuses as well
   */
  public void loadAppendRows(DuckDBConnection connection, String scope, Schema schema, List<WalSegment> segments,
      String table) {
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-inline-" + scope, 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(connection, child, scope)) {
      String views = "__se_wal_frames_" + Integer.toHexString(table.hashCode()) + "_";
      WalStaging.load(duck, schema, segments, "TABLE " + table, table, views);
    }
  }

  /**
   * What one layer of an entity tail's fold made (see {@link #foldEntityLayer}): {@code rows}
   * rows written; per data file of the snapshot (by the local path the DuckDB runtime reads it
   * at, see {@link DuckRuntime#localCopy}) the sorted positions of the rows it replaces or deletes
   * that no earlier layer replaced; per earlier layer (by number) the sorted positions of the rows
   * of its rows file that this one replaces or deletes; {@code stateRows} rows (keys) in its state.
   */
  public record EntityLayer(long rows, Map<String, long[]> replacedPositions,
      Map<Integer, long[]> replacedLayerRows, long stateRows) {}

  /**
   * Folds {@code segments} (after {@code highWaterMark}, the snapshot's {@code se.wal.seq}, and
   * after the segments of the earlier layers) into {@code snapshot} (null: none) of entity table
   * {@code table} and the earlier layers whose states are {@code priorStates} (oldest first;
   * none: the segments are the whole tail), as a reconcile pass on that snapshot over all of them
   * would, with the table's current schema. Writes the keys' final rows to the Parquet file
   * {@code rowsTarget} (read as one more data file of the table) and keeps the fold's state (the
   * next layer's input) as {@code state}, a name from {@link #newEntityState}, until
   * {@link #dropEntityStates} drops it. Empty when an operation sorts between the earlier layers'
   * operations (an out-of-order version) or an earlier layer's state is gone (dropped, or the
   * DuckDB database it was in replaced): only a fold of the whole tail is exact then; with no
   * earlier layers it is never empty. Nothing is kept when it is empty or fails. {@code segments}
   * is iterated once, in order, and staged as it is read (at most {@link WalStaging#MAX_RUN_BYTES}
   * of frames held at once), so a lazy one bounds the memory of a long tail. On a sliced
   * table {@code highWaterMark} is the least progress of its slices, and each key's operations
   * count only above its own slice's progress ({@link SliceTail}).
   */
  public Optional<EntityLayer> foldEntityLayer(String scope, Table table, Snapshot snapshot, long highWaterMark,
      List<String> priorStates, int layer, Iterable<WalSegment> segments, Path rowsTarget, String state) {
    return foldEntityLayer(scope, table, snapshot, highWaterMark, priorStates, layer, segments, rowsTarget, state,
        Cancel.never());
  }

  /**
   * As {@link #foldEntityLayer(String, Table, Snapshot, long, List, int, Iterable, Path, String)},
   * stopped by {@code cancel}: once it is requested the DuckDB statement running is interrupted
   * and the fold fails with the request's reason, keeping nothing.
   */
  public Optional<EntityLayer> foldEntityLayer(String scope, Table table, Snapshot snapshot, long highWaterMark,
      List<String> priorStates, int layer, Iterable<WalSegment> segments, Path rowsTarget, String state, Cancel cancel) {
    return fold(scope, table, snapshot, highWaterMark, priorStates, layer, segments, rowsTarget, state, null, true,
        cancel, options.duckdbThreads());
  }

  /**
   * The whole fold of {@code segments} (the tail after {@code highWaterMark}) into
   * {@code snapshot}, as {@link #foldEntityLayer} with no earlier layers makes it, of the keys
   * {@code keyFilter} selects only: a DuckDB predicate over the key columns, named as in the
   * table's current schema, e.g. {@code "id" = 5}. Each key's rows depend only on its own
   * operations, snapshot row and tombstone, so these are exactly the whole fold's rows of those
   * keys; nothing is kept (no state is made). The rows go to
   * {@code rowsTarget}, which is not written when the layer has no rows and replaces nothing
   * (no operation on those keys). Runs on a shared DuckDB database of {@code threads} threads
   * (0: the reconcile options' count).
   */
  public EntityLayer foldEntityKeys(String scope, Table table, Snapshot snapshot, long highWaterMark,
      Iterable<WalSegment> segments, Path rowsTarget, String keyFilter, Cancel cancel, int threads) {
    return fold(scope, table, snapshot, highWaterMark, List.of(), 0, segments, rowsTarget, newEntityState(),
        keyFilter, false, cancel, threads > 0 ? threads : options.duckdbThreads()).orElseThrow(() -> new IllegalStateException("a fold with no earlier layers made nothing"));
  }

  /**
   * {@link EntityTailLayer#fold} in a DuckDB session of its own on the shared database of
   * {@code threads} threads, stopped by {@code cancel}; the state is dropped when the fold fails,
   * and in any case unless {@code keep} (a kept state is in the database of the options' count,
   * where the next layer reads it).
   */
  private Optional<EntityLayer> fold(String scope, Table table, Snapshot snapshot, long highWaterMark,
      List<String> priorStates, int layer, Iterable<WalSegment> segments, Path rowsTarget, String state,
      String keyFilter, boolean keep, Cancel cancel, int threads) {
    if (!foldsEntities()) {
      throw new IllegalStateException("entity tables need the cluster store and the tombstone cache");
    }
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-" + scope, 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, threads, scope)) {
      TableWal tableWal = new TableWal(scope, table.uuid());
      TombstoneStore store = new TombstoneStore(clusterStore, tableWal, tombstones);
      SliceTail sliceTail = SliceTail.of(clusterStore, tableWal, table, snapshot);
      Cancel.Registration stop = duck.stopOn(cancel);
      boolean made = false;
      try {
        Optional<EntityLayer> out = new EntityTailLayer(duck, table, sliceTail, candidates, keyIndexes)
            .fold(snapshot, highWaterMark, store, options, priorStates, layer, segments, rowsTarget, state, keyFilter)
            .map(r -> new EntityLayer(r.rows(), r.replacedPositions(), r.replacedLayerRows(), r.stateRows()));
        made = keep;
        return out;
      } finally {
        stop.close(); // the state's drop must run
        if (!made) {
          dropQuietly(duck, state);
        }
      }
    }
  }

  /**
   * A new name for a layer's state ({@link #foldEntityLayer}): a table of the DuckDB runtime's
   * shared database (see {@link DuckRuntime#connectShared}), in its schema
   * {@value #STATE_SCHEMA}, held in DuckDB's memory (spilled to its temporary directory beyond
   * the memory limit) until {@link #dropEntityStates} drops it.
   */
  public String newEntityState() {
    return STATE_SCHEMA + ".layer_" + UUID.randomUUID().toString().replace("-", "");
  }

  /** Drops the layer states {@code states} ({@link #newEntityState}); those gone already are skipped. */
  public void dropEntityStates(Collection<String> states) {
    if (states.isEmpty()) {
      return;
    }
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-drop", 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, options.duckdbThreads(), "wal-tail")) {
      for (String state : states) {
        dropQuietly(duck, state);
      }
    } catch (RuntimeException e) {
      // The states go with the shared database at the latest.
      LOG.debug("cannot drop WAL tail fold states: {}", e.toString());
    }
  }

  private static void dropQuietly(DuckSession duck, String state) {
    try {
      duck.execute("DROP TABLE IF EXISTS " + state);
    } catch (RuntimeException e) {
      LOG.debug("cannot drop WAL tail fold state {}: {}", state, e.toString());
    }
  }

  private static String columnList(Schema schema) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      names.add(SqlQuoting.identifier(c.name()));
    }
    return String.join(", ", names);
  }

  private static void copy(DuckSession duck, Schema schema, String query, Path target) {
    duck.execute("COPY (" + query + ") TO " + SqlQuoting.literal(target.toString()) + " (FORMAT parquet, FIELD_IDS "
        + DuckSql.fieldIds(schema.columns()) + ")");
  }
}

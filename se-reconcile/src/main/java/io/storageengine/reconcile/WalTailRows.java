package io.storageengine.reconcile;

import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

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
 *   <li>Entity tables ({@link #foldEntityRows}): the steps of {@link EntityMaterializer} up to
 *       the fold against a given snapshot ({@link CandidateFiles}, {@link BatchCurrentRows},
 *       {@link BatchTombstones#load}, {@link EntityFold}): the rows the keys end with, and the
 *       positions of the snapshot's rows they replace or delete.</li>
 * </ul>
 */
public final class WalTailRows {
  private final DuckRuntime duckdb;
  private final BufferAllocator allocator;
  private final ObjectStore clusterStore;
  private final TombstoneCache tombstones;
  private final ReconcileOptions options;

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

  /** Whether {@link #foldEntityRows} is available (tombstones can be read). */
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
   * The result of folding a WAL tail into an entity table's snapshot: {@code rows} rows written
   * (the keys' final rows), and per data file of the snapshot (by the local path the DuckDB
   * runtime reads it at, see {@link DuckRuntime#localCopy}) the sorted positions of the rows
   * they replace or delete.
   */
  public record EntityTail(long rows, Map<String, long[]> replacedPositions) {}

  /**
   * Folds {@code segments} (the segments after {@code highWaterMark}, the snapshot's
   * {@code se.wal.seq}) into {@code snapshot} (null: none) of entity table {@code table}, as a
   * reconcile pass on that snapshot would, with the table's current schema; writes the keys' final
   * rows to the Parquet file {@code target}. On a sliced table the segments start after the
   * least progress of its slices, and each key's rows count only after its own slice's progress
   * ({@link SliceTail}).
   */
  public EntityTail foldEntityRows(String scope, Table table, Snapshot snapshot, long highWaterMark,
      List<WalSegment> segments, Path target) {
    if (!foldsEntities()) {
      throw new IllegalStateException("entity tables need the cluster store and the tombstone cache");
    }
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-" + scope, 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, options.duckdbThreads(), scope)) {
      EntityColumns columns = new EntityColumns(table);
      TableWal tableWal = new TableWal(scope, table.uuid());
      WalStaging.load(duck, table.schema(), segments);
      SliceTail slices = SliceTail.of(clusterStore, tableWal, table, snapshot, duck, columns);
      String keys = "tail_keys";
      duck.execute("CREATE OR REPLACE TEMP TABLE " + keys + " AS SELECT DISTINCT " + columns.keyList("") + " FROM "
          + WalStaging.TABLE);
      CurrentRows candidates = new CurrentRows(duck, table,
          CandidateFiles.plan(table, snapshot, CandidateFiles.keyRangeFilter(duck, columns, keys)));
      BatchCurrentRows.load(duck, columns, keys, candidates);
      TombstoneStore store = new TombstoneStore(clusterStore, tableWal, tombstones);
      new BatchTombstones(duck, table, columns, store, options)
          .load(keys, slices == null ? highWaterMark : slices.mostProgress(), slices == null ? null : slices.markSql());
      EntityFold.fold(duck, columns);
      copy(duck, table.schema(), "SELECT " + columns.columnList("") + " FROM " + EntityFold.TABLE
          + " WHERE __max_ord > 0 AND __last_op = 1", target);
      long rows = duck.queryLong("SELECT count(*) FROM " + EntityFold.TABLE + " WHERE __max_ord > 0 AND __last_op = 1");
      Map<String, List<Long>> positions = new HashMap<>();
      duck.query("SELECT __file, __pos FROM " + EntityFold.TABLE + " WHERE __max_ord > 0 AND __file IS NOT NULL",
          rs -> positions.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2)));
      Map<String, long[]> replaced = new HashMap<>();
      positions.forEach((file, list) -> {
        long[] sorted = list.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        replaced.put(file, sorted);
      });
      return new EntityTail(rows, replaced);
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

package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * One step of an entity table's incremental WAL tail fold: new segments folded onto the result
 * of folding the segments before them (the earlier <em>layers</em>), so a new segment costs work
 * in proportion to its own keys, not to the whole tail.
 *
 * <p>A layer is two Parquet files: the <b>rows</b> (the final rows of the keys the step's
 * segments touched, with the table's field ids, what a query reads) and the <b>state</b> (every
 * touched key, deleted ones too, with the bookkeeping the next step needs: {@code __last_op},
 * {@code __last_ver}, {@code __init} (the greater of the snapshot row's and the snapshot
 * tombstone's version), the replaced snapshot row ({@code __ofile}, {@code __opos},
 * {@code __orid}), the layer's number {@code __layer} and the key's position in the rows file
 * {@code __row}, NULL when deleted). A key's state is the one of the highest layer holding it.
 *
 * <p>The step is exactly the whole fold ({@link EntityFold} over all segments) when, for every
 * key the earlier layers hold, the new operations that a whole fold would not drop have a
 * version no lower than the key's last applied version: the sorted order of the whole fold is
 * then the earlier operations followed by the new ones, and the earlier layers' state of the key
 * stands for its current row (a row of equal version is replaced, as the first arrival) and its
 * tombstone (at that version). Otherwise (an operation that sorts between earlier ones) the step
 * answers empty and the caller folds the whole tail again.
 */
final class EntityTailLayer {
  /** The {@code __file} of a current row that is an earlier layer's state, not a snapshot row. */
  private static final String PRIOR = "<wal-tail-layer>";

  /**
   * What a step made: {@code rows} rows written, the snapshot rows it replaces for the first time
   * (by local path, sorted positions), and the rows of earlier layers it replaces (by layer
   * number, sorted positions in that layer's rows file).
   */
  record Result(long rows, Map<String, long[]> replacedPositions, Map<Integer, long[]> replacedLayerRows) {}

  private final DuckSession duck;
  private final Table table;
  private final EntityColumns columns;

  /** The tail's slices on a sliced table (null: not sliced). */
  private final SliceTail slices;

  /** Plans the candidate files of the snapshot's rows. */
  private final CandidateFiles.Cache candidates;

  /**
   * @param slices a sliced table's slices as of the snapshot folded onto (null: not sliced)
   * @param candidates plans the snapshot's candidate files
   */
  EntityTailLayer(DuckSession duck, Table table, SliceTail slices, CandidateFiles.Cache candidates) {
    this.duck = duck;
    this.table = table;
    this.columns = new EntityColumns(table);
    this.slices = slices;
    this.candidates = candidates;
  }

  /**
   * Folds {@code segments} onto the layers whose state files are {@code priorStates} (none: onto
   * the snapshot alone, the whole fold) as layer number {@code layer}, writing its rows to
   * {@code rowsTarget} and its state to {@code stateTarget}; empty when the step would differ
   * from a whole fold (nothing is written then).
   */
  Optional<Result> fold(Snapshot snapshot, long highWaterMark, TombstoneStore tombstones, ReconcileOptions options,
      List<Path> priorStates, int layer, List<WalSegment> segments, Path rowsTarget, Path stateTarget) {
    boolean prior = !priorStates.isEmpty();
    String keys = columns.keyList("");
    WalStaging.load(duck, table.schema(), segments);
    if (slices != null) {
      slices.dropReconciled(duck);
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE tail_keys AS SELECT DISTINCT " + keys + " FROM " + WalStaging.TABLE);
    String freshKeys = "tail_keys";
    if (prior) {
      List<String> files = new ArrayList<>();
      priorStates.forEach(p -> files.add(SqlQuoting.literal(p.toString())));
      duck.execute("CREATE OR REPLACE TEMP TABLE prior AS SELECT s.* FROM read_parquet([" + String.join(", ", files)
          + "]) s JOIN tail_keys k ON " + columns.keyJoin("s", "k") + " QUALIFY row_number() OVER (PARTITION BY "
          + columns.keyList("s.") + " ORDER BY s.__layer DESC) = 1");
      if (reordersEarlierOperations()) {
        return Optional.empty();
      }
      duck.execute("CREATE OR REPLACE TEMP TABLE fresh_keys AS SELECT k.* FROM tail_keys k ANTI JOIN prior p ON "
          + columns.keyJoin("k", "p"));
      freshKeys = "fresh_keys";
    }
    // Keys all folded before need no snapshot rows (an empty key range would plan every file).
    boolean anyFresh = !prior || duck.queryLong("SELECT count(*) FROM " + freshKeys) > 0;
    CurrentRows current = new CurrentRows(duck, table, anyFresh
        ? candidates.plan(table, snapshot, CandidateFiles.keyRangeFilter(duck, columns, freshKeys)) : List.of());
    BatchCurrentRows.load(duck, columns, freshKeys, current);
    new BatchTombstones(duck, table, columns, tombstones, options).load(freshKeys,
        slices == null ? highWaterMark : slices.mostProgress(), slices == null ? null : slices.markSql());
    duck.execute("CREATE OR REPLACE TEMP TABLE fresh_init AS SELECT " + keys + ", max(__v) AS __init FROM (SELECT "
        + keys + ", " + columns.versionExpr("") + " AS __v FROM " + BatchCurrentRows.TABLE + " UNION ALL SELECT "
        + keys + ", __tv FROM " + BatchTombstones.TABLE + ") GROUP BY " + keys);
    if (prior) {
      // The earlier layers' state of a key is its current row (if it ends upserted) and its
      // tombstone at the last applied version: nothing older than that can apply any more.
      duck.execute("INSERT INTO " + BatchCurrentRows.TABLE + " SELECT " + columns.columnList("") + ", "
          + SqlQuoting.literal(PRIOR) + ", 0, __orid FROM prior WHERE __last_op = 1");
      if (columns.version() != null) {
        duck.execute("INSERT INTO " + BatchTombstones.TABLE + " SELECT " + keys + ", __last_ver FROM prior"
            + " WHERE __last_ver IS NOT NULL");
      }
    }
    EntityFold.fold(duck, columns);

    String fromPrior = prior ? "p.__layer IS NOT NULL" : "FALSE";
    duck.execute("CREATE OR REPLACE TEMP TABLE layer AS SELECT " + columns.columnList("f.")
        + ", f.__last_op, f.__last_ver, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__init" : "NULL") + " ELSE i.__init END AS __init, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__ofile" : "NULL") + " ELSE f.__file END AS __ofile, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__opos" : "NULL") + " ELSE f.__pos END AS __opos, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__orid" : "NULL") + " ELSE f.__rid END AS __orid, "
        + "CAST(" + layer + " AS INTEGER) AS __layer, "
        + "CASE WHEN f.__last_op = 1 THEN row_number() OVER (PARTITION BY f.__last_op = 1 ORDER BY "
        + columns.keyList("f.") + ") - 1 END AS __row"
        + " FROM " + EntityFold.TABLE + " f LEFT JOIN fresh_init i ON " + columns.keyJoin("f", "i")
        + (prior ? " LEFT JOIN prior p ON " + columns.keyJoin("f", "p") : "")
        + " WHERE f.__max_ord > 0");
    duck.execute("COPY (SELECT " + columns.columnList("") + " FROM layer WHERE __last_op = 1 ORDER BY __row) TO "
        + SqlQuoting.literal(rowsTarget.toString()) + " (FORMAT parquet, FIELD_IDS "
        + DuckSql.fieldIds(table.schema().columns()) + ")");
    duck.execute("COPY (SELECT * FROM layer) TO " + SqlQuoting.literal(stateTarget.toString()) + " (FORMAT parquet)");

    long rows = duck.queryLong("SELECT count(*) FROM layer WHERE __last_op = 1");
    Map<String, List<Long>> snapshotRows = new HashMap<>();
    duck.query("SELECT __file, __pos FROM " + EntityFold.TABLE + " WHERE __max_ord > 0 AND __file IS NOT NULL"
        + " AND __file <> " + SqlQuoting.literal(PRIOR),
        rs -> snapshotRows.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2)));
    Map<Integer, List<Long>> layerRows = new HashMap<>();
    if (prior) {
      duck.query("SELECT p.__layer, p.__row FROM prior p JOIN layer l ON " + columns.keyJoin("p", "l")
          + " WHERE p.__row IS NOT NULL",
          rs -> layerRows.computeIfAbsent(rs.getInt(1), l -> new ArrayList<>()).add(rs.getLong(2)));
    }
    return Optional.of(new Result(rows, sorted(snapshotRows), sorted(layerRows)));
  }

  /**
   * Whether a staged operation on a key of the earlier layers would sort before the key's last
   * applied operation in a whole fold (and is not dropped there by the snapshot's version of the
   * key): then only a whole fold gives the normative result.
   */
  private boolean reordersEarlierOperations() {
    if (columns.version() == null) {
      return false; // every operation has version 0: arrival order alone
    }
    String ver = columns.versionExpr("o.");
    String droppedAnyway = "(p.__init IS NOT NULL AND (" + ver + " IS NULL OR " + ver + " < p.__init))";
    String sortsEarlier = "(p.__last_ver IS NOT NULL AND (" + ver + " IS NULL OR " + ver + " < p.__last_ver))";
    return duck.queryLong("SELECT count(*) FROM " + WalStaging.TABLE + " o JOIN prior p ON " + columns.keyJoin("o", "p")
        + " WHERE " + sortsEarlier + " AND NOT " + droppedAnyway) > 0;
  }

  private static <K> Map<K, long[]> sorted(Map<K, List<Long>> positions) {
    Map<K, long[]> out = new HashMap<>();
    positions.forEach((key, list) -> {
      long[] sorted = list.stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(sorted);
      out.put(key, sorted);
    });
    return out;
  }
}

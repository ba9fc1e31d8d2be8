package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;

/**
 * One step of an entity table's incremental WAL tail fold: new segments folded onto the result
 * of folding the segments before them (the earlier <em>layers</em>), so a new segment costs work
 * in proportion to its own keys, not to the whole tail.
 *
 * <p>A layer is a Parquet file and a table: the <b>rows</b> file (the final rows of the keys the
 * step's segments touched, with the table's field ids, what a query reads) and the <b>state</b>, a
 * table of the shared DuckDB database (see {@link WalTailRows#newEntityState}) that the next
 * step reads with no file opened (every
 * touched key, deleted ones too, with the bookkeeping the next step needs: {@code __last_op},
 * {@code __last_ver}, {@code __init} (the greater of the snapshot row's and the snapshot
 * tombstone's version), the replaced snapshot row ({@code __ofile}, {@code __opos},
 * {@code __orid}), the layer's number {@code __layer} and the key's position in the rows file
 * {@code __row}, NULL when deleted; and the earlier layer and row it replaces,
 * {@code __replaced_layer} and {@code __replaced_row}). A key's state is the one of the highest
 * layer holding it.
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
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EntityTailLayer.class);
  /** Commits after a carried fold's snapshot through which its key index may still stand for it. */
  private static final int MAX_PASSES_SPANNED = 16;
  /** The {@code __file} of a current row that is an earlier layer's state, not a snapshot row. */
  private static final String PRIOR = "<wal-tail-layer>";
  /** Columns of a layer's state: the earlier layer and row a key's row replaces (NULL: none). */
  private static final String REPLACED_LAYER = "__replaced_layer";
  private static final String REPLACED_ROW = "__replaced_row";

  /**
   * What a step made: {@code rows} rows written, the snapshot rows it replaces for the first time
   * (by local path, sorted positions), the rows of earlier layers it replaces (by layer number,
   * sorted positions in that layer's rows file) and the rows of its state.
   */
  record Result(long rows, Map<String, long[]> replacedPositions, Map<Integer, long[]> replacedLayerRows,
      long stateRows) {}

  private final DuckSession duck;
  private final Table table;
  private final EntityColumns columns;

  /** The tail's slices on a sliced table (null: not sliced). */
  private final SliceTail slices;

  /** Plans the candidate files of the snapshot's rows. */
  private final CandidateFiles.Cache candidates;

  /** The reconciler's key indexes, looked the keys up in when one describes the snapshot (null: none). */
  private final KeyIndexes keyIndexes;

  /**
   * @param slices a sliced table's slices as of the snapshot folded onto (null: not sliced)
   * @param candidates plans the snapshot's candidate files
   */
  EntityTailLayer(DuckSession duck, Table table, SliceTail slices, CandidateFiles.Cache candidates) {
    this(duck, table, slices, candidates, null);
  }

  /** @param keyIndexes the reconciler's key indexes (null: the snapshot's files are read) */
  EntityTailLayer(DuckSession duck, Table table, SliceTail slices, CandidateFiles.Cache candidates,
      KeyIndexes keyIndexes) {
    this.keyIndexes = keyIndexes;
    this.duck = duck;
    this.table = table;
    this.columns = new EntityColumns(table);
    this.slices = slices;
    this.candidates = candidates;
  }

  /**
   * Folds {@code segments} onto the layers whose state tables are {@code priorStates} (none: onto
   * the snapshot alone, the whole fold) as layer number {@code layer}, writing its rows to
   * {@code rowsTarget} and its state to the new table {@code state}; empty when the step would
   * differ from a whole fold, or an earlier state is gone (nothing is made then).
   */
  Optional<Result> fold(Snapshot snapshot, long highWaterMark, TombstoneStore tombstones, ReconcileOptions options,
      List<String> priorStates, int layer, Iterable<WalSegment> segments, Path rowsTarget, String state) {
    return fold(snapshot, highWaterMark, tombstones, options, priorStates, layer, segments, rowsTarget, state, null);
  }

  /**
   * As above, folding only the operations on the keys {@code keyFilter} selects (a DuckDB
   * predicate over the key columns, named as in the table's schema; null: every key), with no
   * earlier layers: each key's rows depend only on its own operations, snapshot row and
   * tombstone, so the result is exactly the whole fold's rows of those keys. Such a fold is not
   * folded onto, so it makes no state ({@code state} is not created); when no operation is on
   * such a key the result is empty (no rows, nothing replaced) and no rows file is written either.
   */
  Optional<Result> fold(Snapshot snapshot, long highWaterMark, TombstoneStore tombstones, ReconcileOptions options,
      List<String> priorStates, int layer, Iterable<WalSegment> segments, Path rowsTarget, String state,
      String keyFilter) {
    boolean prior = !priorStates.isEmpty();
    if (prior && keyFilter != null) {
      throw new IllegalArgumentException("a fold of some keys has no earlier layers");
    }
    long started = System.nanoTime();
    String keys = columns.keyList("");
    UnaryOperator<String> keep = keyFilter == null ? UnaryOperator.identity()
        : run -> "SELECT * FROM (" + run + ") WHERE coalesce((" + keyFilter + "), FALSE)";
    long[] firstNewSeq = {-1};
    Iterable<WalSegment> seen = () -> {
      Iterator<WalSegment> it = segments.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public WalSegment next() {
          WalSegment segment = it.next();
          if (firstNewSeq[0] < 0) {
            firstNewSeq[0] = segment.seq();
          }
          return segment;
        }
      };
    };
    WalStaging.load(duck, table.schema(), seen, "TEMP TABLE " + WalStaging.TABLE, WalStaging.TABLE,
        "wal_frames_", keep, WalStaging.MAX_RUN_BYTES);
    long staged = System.nanoTime();
    long tombNanos = 0;
    if (slices != null) {
      slices.dropReconciled(duck);
    }
    BatchTombstones tombs = new BatchTombstones(duck, table, columns, tombstones, options);
    long tombstoneMark = slices == null ? highWaterMark : slices.mostProgress();
    String tombstoneMarkSql = slices == null ? null : slices.markSql();
    // The snapshot's version of each key new to the fold (the greater of its current row's and
    // its tombstone's), or none when nothing of the snapshot can apply to them.
    boolean freshInit;
    // The table of the fresh keys' snapshot version ("fresh_init"); with no earlier layers every
    // key is fresh, and the fold's own "init" (the same query, made when there is a version
    // column) is that table.
    String freshInitTable = "fresh_init";
    if (!prior) {
      duck.execute("CREATE OR REPLACE TEMP TABLE tail_keys AS SELECT DISTINCT " + keys + " FROM " + WalStaging.TABLE);
      // Whether any key is left (a fold of some keys may have none) with the keys' range.
      CandidateFiles.KeyRange range = CandidateFiles.keyRange(duck, columns, "tail_keys");
      if (keyFilter != null && range.keys() == 0) {
        return Optional.of(new Result(0, Map.of(), Map.of(), 0));
      }
      currentRows(snapshot, candidates.plan(duck.scope(), table, snapshot, range.filter()), "tail_keys", -1);
      long t = System.nanoTime();
      tombs.load("tail_keys", tombstoneMark, tombstoneMarkSql);
      tombNanos += System.nanoTime() - t;
      if (columns.version() == null) {
        duck.execute(freshInitSql(keys));
      } else {
        freshInitTable = EntityFold.INIT;
      }
      freshInit = true;
    } else {
      List<String> states = new ArrayList<>();
      priorStates.forEach(p -> states.add("SELECT * FROM " + p));
      try {
        duck.execute("CREATE OR REPLACE TEMP TABLE prior AS SELECT s.* FROM (" + String.join(" UNION ALL ", states)
            + ") s SEMI JOIN " + WalStaging.TABLE + " k ON " + columns.keyJoin("s", "k")
            + " QUALIFY row_number() OVER (PARTITION BY " + columns.keyList("s.") + " ORDER BY s.__layer DESC) = 1");
      } catch (SeException e) {
        if (String.valueOf(e.getMessage()).contains("Catalog Error")) {
          return Optional.empty(); // an earlier layer's state is gone
        }
        throw e;
      }
      // One query: whether the new operations reorder earlier ones, whether they touch keys new
      // to the fold, and those keys' range (the candidate files' filter).
      List<String> bounds = CandidateFiles.boundsSql(columns, "k.");
      long[] check = new long[2];
      List<String> values = new ArrayList<>();
      duck.query("SELECT (" + reorderCount() + "), count(*)" + (bounds.isEmpty() ? "" : ", " + String.join(", ", bounds))
          + " FROM " + WalStaging.TABLE + " k ANTI JOIN prior p ON " + columns.keyJoin("k", "p"), rs -> {
            check[0] = rs.getLong(1);
            check[1] = rs.getLong(2);
            for (int i = 0; i < bounds.size(); i++) {
              values.add(rs.getString(i + 3));
            }
          });
      if (check[0] > 0) {
        return Optional.empty();
      }
      boolean anyFresh = check[1] > 0;
      // Keys all folded before need no snapshot rows (an empty key range would plan every file).
      List<FileScanTask> planned = anyFresh
          ? candidates.plan(duck.scope(), table, snapshot, CandidateFiles.keyRangeFilter(columns, values)) : List.of();
      boolean stored = anyFresh && tombs.anyStored();
      if (!planned.isEmpty() || stored) {
        duck.execute("CREATE OR REPLACE TEMP TABLE fresh_keys AS SELECT DISTINCT " + columns.keyList("k.") + " FROM "
            + WalStaging.TABLE + " k ANTI JOIN prior p ON " + columns.keyJoin("k", "p"));
      }
      // The earlier layers' state of a key is its current row (if it ends upserted) and its
      // tombstone at the last applied version: nothing older than that can apply any more.
      String priorRows = " SELECT " + columns.columnList("") + ", " + SqlQuoting.literal(PRIOR) + ", 0, __orid FROM prior"
          + " WHERE __last_op = 1";
      String priorTombs = columns.version() == null ? null
          : " SELECT " + keys + ", __last_ver FROM prior WHERE __last_ver IS NOT NULL";
      if (planned.isEmpty()) {
        // No snapshot row of a fresh key: the current rows are the earlier layers' alone.
        duck.execute("CREATE OR REPLACE TEMP TABLE " + BatchCurrentRows.TABLE + " AS" + typed(
            currentRowColumns(), priorRows));
      } else {
        currentRows(snapshot, planned, "fresh_keys", firstNewSeq[0]);
      }
      if (!stored) {
        // No tombstone stored (or no version column): only the earlier layers' apply.
        duck.execute("CREATE OR REPLACE TEMP TABLE " + BatchTombstones.TABLE + " AS" + (priorTombs == null
            ? " SELECT " + keys + ", CAST(NULL AS " + columns.versionType() + ") AS __tv FROM prior WHERE FALSE"
            : " SELECT " + keys + ", CAST(__last_ver AS " + columns.versionType() + ") AS __tv FROM ("
                + priorTombs + ")"));
      } else {
        long t = System.nanoTime();
        tombs.load("fresh_keys", tombstoneMark, tombstoneMarkSql, true);
        tombNanos += System.nanoTime() - t;
      }
      freshInit = !planned.isEmpty() || stored;
      if (freshInit) {
        duck.execute(freshInitSql(keys));
      }
      if (!planned.isEmpty()) {
        duck.execute("INSERT INTO " + BatchCurrentRows.TABLE + priorRows);
      }
      if (stored) {
        duck.execute("INSERT INTO " + BatchTombstones.TABLE + priorTombs);
      }
    }
    long looked = System.nanoTime();
    EntityFold.fold(duck, columns);
    long folded = System.nanoTime();

    if (keyFilter != null) {
      // A fold of some keys is not kept: its rows and what they replace come from the fold itself.
      Result rows = written("(SELECT * FROM " + EntityFold.TABLE + " WHERE __max_ord > 0)", columns.keyList(""),
          false, rowsTarget);
      return Optional.of(logged(started, staged, tombNanos, looked, folded, layer, rows));
    }
    String fromPrior = prior ? "p.__layer IS NOT NULL" : "FALSE";
    String init = freshInit ? "i.__init" : "CAST(NULL AS " + columns.versionType() + ")";
    if (!prior) {
      duck.execute("CREATE SCHEMA IF NOT EXISTS " + state.substring(0, state.indexOf('.')));
    }
    duck.execute("CREATE TABLE " + state + " AS SELECT " + columns.columnList("f.")
        + ", f.__last_op, f.__last_ver, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__init" : "NULL") + " ELSE " + init + " END AS __init, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__ofile" : "NULL") + " ELSE f.__file END AS __ofile, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__opos" : "NULL") + " ELSE f.__pos END AS __opos, "
        + "CASE WHEN " + fromPrior + " THEN " + (prior ? "p.__orid" : "NULL") + " ELSE f.__rid END AS __orid, "
        + "CAST(" + layer + " AS INTEGER) AS __layer, "
        + "CASE WHEN f.__last_op = 1 THEN row_number() OVER (PARTITION BY f.__last_op = 1 ORDER BY "
        + columns.keyList("f.") + ") - 1 END AS __row"
        + (prior ? ", p.__layer" : ", CAST(NULL AS INTEGER)") + " AS " + REPLACED_LAYER
        + (prior ? ", p.__row" : ", CAST(NULL AS BIGINT)") + " AS " + REPLACED_ROW
        + " FROM " + EntityFold.TABLE + " f"
        + (freshInit ? " LEFT JOIN " + freshInitTable + " i ON " + columns.keyJoin("f", "i") : "")
        + (prior ? " LEFT JOIN prior p ON " + columns.keyJoin("f", "p") : "")
        + " WHERE f.__max_ord > 0");
    return Optional.of(logged(started, staged, tombNanos, looked, folded, layer,
        written(state, "__row", prior, rowsTarget)));
  }

  /** Logs where a step's time went (DEBUG) and returns {@code result}. */
  private Result logged(long started, long staged, long tombNanos, long looked, long folded, int layer,
      Result result) {
    if (LOG.isDebugEnabled()) {
      long now = System.nanoTime();
      LOG.debug("{}: WAL tail layer {} of {} rows: staged in {} ms, current rows in {} ms, tombstones in {} ms,"
          + " fold in {} ms, written in {} ms", table.name(), layer, result.stateRows(),
          (staged - started) / 1_000_000, (looked - staged - tombNanos) / 1_000_000, tombNanos / 1_000_000,
          (folded - looked) / 1_000_000, (now - folded) / 1_000_000);
    }
    return result;
  }

  /**
   * Writes the rows of {@code source} (the keys a layer ends with: a layer's state, or the fold's
   * rows of the keys folded) that end upserted to {@code rowsTarget} in the order of
   * {@code order}, and reads back what they replace: the snapshot rows (from the fold), and with
   * {@code prior} the earlier layers' rows ({@code source} is a state then).
   */
  private Result written(String source, String order, boolean prior, Path rowsTarget) {
    duck.execute("COPY (SELECT " + columns.columnList("") + " FROM " + source + " WHERE __last_op = 1 ORDER BY " + order
        + ")"
        + " TO " + SqlQuoting.literal(rowsTarget.toString()) + " (FORMAT parquet, FIELD_IDS "
        + DuckSql.fieldIds(table.schema().columns()) + ")");

    // One statement, read as one Arrow list per group: the rows written (group "w"), the state's
    // rows ("s"), the snapshot rows replaced ("f:" and the file, positions) and the earlier
    // layers' rows replaced ("l:" and the layer, rows).
    Map<String, long[]> lists = duck.positionsByFile("SELECT 'w' AS __g, count(*) FILTER (WHERE __last_op = 1) AS __p"
        + " FROM " + source + " UNION ALL SELECT 's', count(*) FROM " + source
        + " UNION ALL SELECT 'f:' || __file, __pos FROM " + EntityFold.TABLE + " WHERE __max_ord > 0"
        + " AND __file IS NOT NULL AND __file <> " + SqlQuoting.literal(PRIOR)
        + (prior ? " UNION ALL SELECT 'l:' || CAST(" + REPLACED_LAYER + " AS VARCHAR), " + REPLACED_ROW + " FROM "
            + source + " WHERE " + REPLACED_ROW + " IS NOT NULL" : ""), "__g", "__p");
    long[] rows = {lists.get("w")[0], lists.get("s")[0]};
    Map<String, long[]> snapshotRows = new HashMap<>();
    Map<Integer, long[]> layerRows = new HashMap<>();
    lists.forEach((group, positions) -> {
      if (group.startsWith("f:")) {
        snapshotRows.put(group.substring(2), positions);
      } else if (group.startsWith("l:")) {
        layerRows.put(Integer.parseInt(group.substring(2)), positions);
      }
    });
    return new Result(rows[0], snapshotRows, layerRows, rows[1]);
  }

  /** The fresh keys' snapshot version: of their current rows and tombstones, before the earlier layers' are added. */
  private String freshInitSql(String keys) {
    return "CREATE OR REPLACE TEMP TABLE fresh_init AS SELECT " + keys + ", max(__v) AS __init FROM (SELECT "
        + keys + ", " + columns.versionExpr("") + " AS __v FROM " + BatchCurrentRows.TABLE + " UNION ALL SELECT "
        + keys + ", __tv FROM " + BatchTombstones.TABLE + ") GROUP BY " + keys;
  }

  /**
   * The snapshot's current rows of the keys in {@code keysTable} into {@link BatchCurrentRows#TABLE}:
   * from the reconciler's key index when one describes the snapshot's files (a sliced table's:
   * one a slice, each describing the slice's files), else read from the {@code planned}
   * candidate files.
   */
  private void currentRows(Snapshot snapshot, List<FileScanTask> planned, String keysTable, long firstNewSeq) {
    if (keyIndexes != null) {
      Supplier<List<FileScanTask>> files = () -> candidates.plan(duck.scope(), table, snapshot, Expressions.alwaysTrue());
      Snapshot newer = firstNewSeq < 0 ? null : newerWithSameRows(snapshot, firstNewSeq);
      Supplier<List<FileScanTask>> newerFiles = newer == null ? null
          : () -> candidates.plan(duck.scope(), table, newer, Expressions.alwaysTrue());
      if (KeyIndexReads.shared(duck, table, columns, keyIndexes, slices == null ? null : slices.ids(), files,
          newerFiles, !planned.isEmpty(), keysTable) != null) {
        return;
      }
    }
    BatchCurrentRows.load(duck, columns, keysTable, new CurrentRows(duck, table, planned));
  }

  /**
   * For a layer onto earlier ones whose first new segment is {@code firstNewSeq}: the table's
   * current snapshot when it is newer than {@code snapshot} (a fold carried past reconcile
   * passes) and its rows of every key the earlier layers do not hold are {@code snapshot}'s, in
   * the same files at the same positions, so a key index describing it may stand for
   * {@code snapshot}'s. That holds when every commit after {@code snapshot} up to it is a
   * reconcile pass (it carries {@code se.wal.seq} and rewrote no file: passes only add files and
   * deletion vectors) and it reconciled only WAL before {@code firstNewSeq}: the earlier layers
   * hold every segment after {@code snapshot}'s, so a key those passes touched is in them. On a
   * sliced table every slice's progress must be before {@code firstNewSeq} (and the slices the
   * same: a split or merge is a rewrite). Null otherwise.
   */
  private Snapshot newerWithSameRows(Snapshot snapshot, long firstNewSeq) {
    Snapshot current = table.currentSnapshot();
    if (current == null || current.snapshotId() == snapshot.snapshotId()) {
      return null;
    }
    Long currentSeq = WalHighWaterMark.seqOf(current);
    if (currentSeq == null || currentSeq >= firstNewSeq) {
      return null;
    }
    if (slices != null && io.storageengine.catalog.TableSlices.marks(table, current).values().stream()
        .anyMatch(mark -> mark >= firstNewSeq)) {
      return null;
    }
    return WalHighWaterMark.descendsThrough(table, current, snapshot.snapshotId(), MAX_PASSES_SPANNED,
        s -> WalHighWaterMark.seqOf(s) != null && !DataOperations.REPLACE.equals(s.operation())) ? current : null;
  }

  /** The columns of {@link BatchCurrentRows#TABLE} with their DuckDB types. */
  private List<String[]> currentRowColumns() {
    List<String[]> out = new ArrayList<>();
    for (Types.NestedField c : table.schema().columns()) {
      out.add(new String[] {SqlQuoting.identifier(c.name()), DuckSql.type(c.type())});
    }
    out.add(new String[] {"__file", "VARCHAR"});
    out.add(new String[] {"__pos", "BIGINT"});
    out.add(new String[] {"__rid", "BIGINT"});
    return out;
  }

  /** {@code select} with its columns cast to {@code columns} (name, type), in order. */
  private static String typed(List<String[]> columns, String select) {
    List<String> casts = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (String[] c : columns) {
      names.add("__c" + names.size());
      casts.add("CAST(" + names.get(names.size() - 1) + " AS " + c[1] + ") AS " + c[0]);
    }
    return " SELECT " + String.join(", ", casts) + " FROM (" + select + ") t(" + String.join(", ", names) + ")";
  }

  /**
   * A count of the staged operations on keys of the earlier layers that would sort before the
   * key's last applied operation in a whole fold (and are not dropped there by the snapshot's
   * version of the key): when any, only a whole fold gives the normative result.
   */
  private String reorderCount() {
    if (columns.version() == null) {
      return "SELECT 0"; // every operation has version 0: arrival order alone
    }
    String ver = columns.versionExpr("o.");
    String droppedAnyway = "(p.__init IS NOT NULL AND (" + ver + " IS NULL OR " + ver + " < p.__init))";
    String sortsEarlier = "(p.__last_ver IS NOT NULL AND (" + ver + " IS NULL OR " + ver + " < p.__last_ver))";
    return "SELECT count(*) FROM " + WalStaging.TABLE + " o JOIN prior p ON " + columns.keyJoin("o", "p")
        + " WHERE " + sortsEarlier + " AND NOT " + droppedAnyway;
  }
}

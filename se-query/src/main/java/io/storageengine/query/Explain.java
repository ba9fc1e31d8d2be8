package io.storageengine.query;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.expressions.Projections;
import org.apache.iceberg.io.CloseableIterable;

/**
 * {@code EXPLAIN <query>} and {@code EXPLAIN ANALYZE <query>}: the query is planned as it would
 * run (same checks, pins, pruning and WAL tail), and its result is two VARCHAR columns, {@code
 * explain_key} and {@code explain_value}, as DuckDB's own EXPLAIN answers. One row per table
 * reference (key {@code table <namespace>.<table>}, with its time travel clause if any) tells, one
 * {@code name: value} line each, the snapshot read, the pushed filter, the snapshot's data files
 * and how many were pruned by partition, pruned by column stats, skipped (every row deleted) and
 * read, the deletion vectors and position delete files applied to the files read (and those
 * pruned with their files), the rows they delete, and the WAL tail read on top. A metadata table
 * reference gets a row saying it is materialized from metadata. The last row is DuckDB's plan of
 * the rewritten statement: {@code physical_plan} for EXPLAIN, {@code analyzed_plan} for EXPLAIN
 * ANALYZE, which runs the query (under the query's limits) and shows its timings. The server's
 * local directories of data file copies are replaced by {@value #HIDDEN} in DuckDB's text.
 *
 * <p>Counting pruned files plans the snapshot once more without filter (manifests only, no data
 * or delete file is read): EXPLAIN costs that much more than the query's own planning.
 */
final class Explain {
  /** What replaces a server-local directory in DuckDB's plan text. */
  static final String HIDDEN = "<local>/";

  /** The result's columns. */
  static final Schema SCHEMA = new Schema(List.of(
      new Field("explain_key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
      new Field("explain_value", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));

  /** Whether and how a statement is explained. */
  enum Mode { NONE, PLAIN, ANALYZE }

  private final Mode mode;
  private final List<String[]> rows = new ArrayList<>();
  private final Set<String> hidden = new HashSet<>();
  /** The rows (by index) whose WAL tail rows are still to count, with the tail's files. */
  private final Map<Integer, List<String>> pendingTails = new LinkedHashMap<>();
  /** The rows of those tails' files that later fold layers replace (not read). */
  private final Map<Integer, Long> pendingTailsReplaced = new HashMap<>();
  private static final String ROWS = "\u0000rows";

  Explain(Mode mode) {
    this.mode = mode;
  }

  /** How {@code statement} (one statement, rewritten by {@link SqlText#rewrite}) is explained. */
  static Mode mode(String statement) {
    List<SqlText.Token> tokens = SqlText.tokens(statement);
    if (tokens.isEmpty() || !tokens.get(0).isWord("EXPLAIN")) {
      return Mode.NONE;
    }
    return tokens.size() > 1 && tokens.get(1).isWord("ANALYZE") ? Mode.ANALYZE : Mode.PLAIN;
  }

  /** {@code statement} without its {@code EXPLAIN [ANALYZE]} prefix (see {@link #mode}). */
  static String inner(String statement, Mode mode) {
    List<SqlText.Token> tokens = SqlText.tokens(statement);
    int skip = mode == Mode.ANALYZE ? 2 : 1;
    if (tokens.size() <= skip) {
      throw SeException.invalid("EXPLAIN needs a query: write EXPLAIN [ANALYZE] SELECT ...");
    }
    return statement.substring(tokens.get(skip).start());
  }

  Mode mode() {
    return mode;
  }

  /**
   * Adds the row of one table reference read from {@code planned} (the snapshot's files, before
   * its WAL tail is added), pinned at {@code pin}, pruned with {@code filter}.
   *
   * @param clause the time travel clause as written, null for none
   * @param pinned whether the pin came from the session rather than from the statement or the table
   * @param tail what the WAL tail added (null: not read), {@code afterSeq} the snapshot's seq
   * @param current the table's current snapshot when the one read is older and carries the WAL
   *     tail's fold kept on it ({@link EntityTailFolds#carriedBase}), else null
   */
  void table(PlannedTable planned, String clause, boolean pinned, Expression filter,
      WalTail.Read tail, long afterSeq, Long current) {
    String key = "table " + planned.displayName() + (clause == null ? "" : " FOR " + clause);
    StringBuilder value = new StringBuilder();
    if (planned.snapshotId() == null) {
      line(value, "snapshot", "none (the table has no data yet)");
    } else {
      line(value, "snapshot", planned.snapshotId() + (clause != null ? " (" + clause + ")"
          : pinned ? " (pinned by the session)" : current != null ? " (older than the current " + current
              + ": the wal tail's fold kept on it holds what the newer snapshots reconciled)" : " (current)"));
      line(value, "pushed filter", filter.toString());
      FileCounts counts = count(planned.table(), planned.snapshotId(), planned.schema(), filter);
      long read = planned.plan() == null ? 0 : planned.plan().files.size();
      long deletedRows = 0;
      if (planned.plan() != null) {
        for (SnapshotPlanCache.ScanFile file : planned.plan().files) {
          deletedRows += file.deletedPositions().length;
        }
      }
      line(value, "data files in snapshot", String.valueOf(counts.total));
      line(value, "data files pruned by partition", String.valueOf(counts.byPartition));
      line(value, "data files pruned by column stats", String.valueOf(counts.byStats));
      line(value, "data files skipped (every row deleted)", String.valueOf(Math.max(0, counts.kept - read)));
      line(value, "data files read", String.valueOf(read));
      line(value, "deletion vectors applied", String.valueOf(counts.vectorsKept.size()));
      line(value, "deletion vectors pruned", String.valueOf(counts.vectorsPruned.size()));
      line(value, "position delete files applied", String.valueOf(counts.positionKept.size()));
      line(value, "position delete files pruned", String.valueOf(counts.positionPruned.size()));
      line(value, "rows deleted in files read", String.valueOf(deletedRows));
    }
    if (tail == null) {
      line(value, "wal tail", clause != null ? "not read (time travel reads the snapshot only)"
          : "not read (snapshot-only read)");
    } else {
      long replaced = 0;
      for (long[] positions : tail.replacedPositions().values()) {
        replaced += positions.length;
      }
      line(value, "wal tail segments", (tail.throughSeq() - afterSeq) + " (seq " + (afterSeq + 1) + ".."
          + tail.throughSeq() + ")");
      line(value, "wal tail files", tail.files().size() + " (entity tables: fold layers)");
      if (tail.foldedKeys() != null) {
        line(value, "wal tail folded for", "the keys where " + tail.foldedKeys() + " only (not kept)");
      }
      // Counted later from the files' footers (countTailRows); an empty tail has none.
      line(value, "wal tail rows", tail.files().isEmpty() ? "0" : ROWS);
      if (!tail.files().isEmpty()) {
        pendingTails.put(rows.size(), tail.files().stream().map(TableSnapshotPlanner.PlannedFile::localPath).toList());
        // A later fold layer replaces rows of earlier ones, which the view does not read.
        pendingTailsReplaced.put(rows.size(),
            tail.files().stream().mapToLong(f -> f.deletedPositions().length).sum());
      }
      line(value, "snapshot rows replaced by the wal tail", String.valueOf(replaced));
    }
    rows.add(new String[] {key, value.toString()});
  }

  /**
   * Counts the rows of the WAL tails added (the files a tail adds, an entity tail's folded to the
   * latest version per key) on {@code connection}, whose database may read them: from the Parquet
   * footers, no data is read.
   */
  void countTailRows(Connection connection) throws SQLException {
    for (Map.Entry<Integer, List<String>> pending : pendingTails.entrySet()) {
      StringBuilder files = new StringBuilder();
      for (String path : pending.getValue()) {
        files.append(files.length() == 0 ? "" : ", ").append(SqlQuoting.literal(path));
      }
      long count;
      try (Statement statement = connection.createStatement();
          ResultSet result = statement.executeQuery("SELECT count(*) FROM read_parquet([" + files + "])")) {
        result.next();
        count = result.getLong(1) - pendingTailsReplaced.getOrDefault(pending.getKey(), 0L);
      }
      String[] row = rows.get(pending.getKey());
      row[1] = row[1].replace(ROWS, String.valueOf(count));
    }
    pendingTails.clear();
    pendingTailsReplaced.clear();
  }

  /** Adds the row of a metadata table reference. */
  void metadataTable(String displayName) {
    rows.add(new String[] {"metadata table " + displayName, "materialized from the table's metadata: no data file is read"});
  }

  /** Hides {@code directories} (server-local) wherever DuckDB's plan text shows them. */
  void hide(Set<String> directories) {
    hidden.addAll(directories);
  }

  /** The DuckDB statement that explains {@code sql}. */
  String duckdbStatement(String sql) {
    return (mode == Mode.ANALYZE ? "EXPLAIN ANALYZE " : "EXPLAIN ") + sql;
  }

  /**
   * The statement answering the result: the engine's rows, then DuckDB's ({@code duckdb}, key and
   * value each) with local directories hidden.
   */
  String resultStatement(List<String[]> duckdb) {
    StringBuilder sql = new StringBuilder("SELECT explain_key, explain_value FROM (VALUES ");
    List<String[]> all = new ArrayList<>(rows);
    for (String[] row : duckdb) {
      all.add(new String[] {row[0], scrub(row[1])});
    }
    for (int i = 0; i < all.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append('(').append(SqlQuoting.literal(all.get(i)[0])).append(", ")
          .append(SqlQuoting.literal(all.get(i)[1])).append(')');
    }
    if (all.isEmpty()) {
      sql.append("('', '')");
    }
    sql.append(") AS __se_explain(explain_key, explain_value)");
    if (all.isEmpty()) {
      sql.append(" WHERE false");
    }
    return sql.toString();
  }

  private String scrub(String text) {
    String out = text == null ? "" : text;
    for (String directory : hidden) {
      out = out.replace(directory, HIDDEN);
    }
    return out;
  }

  private static void line(StringBuilder out, String name, String value) {
    out.append(name).append(": ").append(value).append('\n');
  }

  /** The data and delete files of a snapshot, by what pruning with a filter does to them. */
  private static final class FileCounts {
    long total;
    long byPartition;
    long byStats;
    long kept;
    final Set<String> vectorsKept = new HashSet<>();
    final Set<String> vectorsPruned = new HashSet<>();
    final Set<String> positionKept = new HashSet<>();
    final Set<String> positionPruned = new HashSet<>();
  }

  /**
   * Counts the files of {@code snapshotId} as Iceberg's scan prunes them with {@code filter}: by
   * the partition values first, then by the column stats. Delete files are counted once each, as
   * kept when they apply to a kept data file.
   */
  private static FileCounts count(Table table, long snapshotId, org.apache.iceberg.Schema schema, Expression filter) {
    FileCounts counts = new FileCounts();
    Map<Integer, Evaluator> partitions = new HashMap<>();
    InclusiveMetricsEvaluator stats = new InclusiveMetricsEvaluator(schema, filter, false);
    List<DeleteFile> prunedDeletes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = ManifestThreads.scan(table.newScan(), table, table.snapshot(snapshotId))
        .useSnapshot(snapshotId).caseSensitive(false).includeColumnStats().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        counts.total++;
        PartitionSpec spec = table.specs().get(file.specId());
        Evaluator partition = partitions.computeIfAbsent(file.specId(),
            id -> new Evaluator(spec.partitionType(), Projections.inclusive(spec, false).project(filter), false));
        boolean kept = false;
        if (!partition.eval(file.partition())) {
          counts.byPartition++;
        } else if (!stats.eval(file)) {
          counts.byStats++;
        } else {
          counts.kept++;
          kept = true;
        }
        for (DeleteFile delete : task.deletes()) {
          if (kept) {
            (delete.format() == FileFormat.PUFFIN ? counts.vectorsKept : counts.positionKept).add(delete.location());
          } else {
            prunedDeletes.add(delete);
          }
        }
      }
    } catch (IOException e) {
      throw SeException.unavailable("cannot plan the scan to explain it", e);
    }
    for (DeleteFile delete : prunedDeletes) {
      boolean vector = delete.format() == FileFormat.PUFFIN;
      if (!(vector ? counts.vectorsKept : counts.positionKept).contains(delete.location())) {
        (vector ? counts.vectorsPruned : counts.positionPruned).add(delete.location());
      }
    }
    return counts;
  }
}

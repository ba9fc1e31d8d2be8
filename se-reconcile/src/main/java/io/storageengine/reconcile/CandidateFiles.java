package io.storageengine.reconcile;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.common.LruMap;
import io.storageengine.duckdb.SqlQuoting;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.expressions.Projections;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Candidate-file pruning for an entity batch: the data files that may hold a current row of one
 * of the batch's keys. The filter is, per key column of an orderable type (integer, long, date,
 * timestamp, string, uuid, decimal), the range between the batch's least and greatest value of
 * that column; Iceberg scan planning keeps the files whose column bounds overlap every range.
 * Other key types do not prune. The filter is also the commit's conflict filter: a concurrent
 * commit can only conflict with the batch through rows inside it.
 */
final class CandidateFiles {
  private CandidateFiles() {}

  /** The key-range filter of the keys in temp table {@code keysTable} (one row per key). */
  static Expression keyRangeFilter(DuckSession duck, EntityColumns columns, String keysTable) {
    return boundsSql(columns, "").isEmpty() ? Expressions.alwaysTrue() : keyRange(duck, columns, keysTable).filter();
  }

  /** How many keys a keys table holds, and their key-range filter. */
  record KeyRange(long keys, Expression filter) {}

  /** The keys in temp table {@code keysTable} (one row per key): their count and range, one query. */
  static KeyRange keyRange(DuckSession duck, EntityColumns columns, String keysTable) {
    List<String> bounds = boundsSql(columns, "");
    long[] keys = new long[1];
    List<String> values = new ArrayList<>();
    duck.query("SELECT count(*)" + (bounds.isEmpty() ? "" : ", " + String.join(", ", bounds)) + " FROM " + keysTable,
        rs -> {
          keys[0] = rs.getLong(1);
          for (int i = 0; i < bounds.size(); i++) {
            values.add(rs.getString(i + 2));
          }
        });
    return new KeyRange(keys[0], keyRangeFilter(columns, values));
  }

  /**
   * The aggregates (over key columns of alias {@code alias}) whose values, as text, make the
   * key-range filter ({@link #keyRangeFilter(EntityColumns, List)}): the least and greatest
   * value of each key column of an orderable type, in key order; empty when no key prunes.
   */
  static List<String> boundsSql(EntityColumns columns, String alias) {
    List<String> out = new ArrayList<>();
    for (Types.NestedField k : columns.keys()) {
      String col = alias + SqlQuoting.identifier(k.name());
      switch (k.type().typeId()) {
        case INTEGER, LONG, STRING, UUID, DECIMAL -> {
          out.add("CAST(min(" + col + ") AS VARCHAR)");
          out.add("CAST(max(" + col + ") AS VARCHAR)");
        }
        case DATE -> {
          out.add("CAST(min(" + col + ") - DATE '1970-01-01' AS VARCHAR)");
          out.add("CAST(max(" + col + ") - DATE '1970-01-01' AS VARCHAR)");
        }
        case TIMESTAMP -> {
          out.add("CAST(epoch_us(min(" + col + ")) AS VARCHAR)");
          out.add("CAST(epoch_us(max(" + col + ")) AS VARCHAR)");
        }
        default -> {
          // not orderable here: does not prune
        }
      }
    }
    return out;
  }

  /** The key-range filter of the values of {@link #boundsSql} (NULL ones: no keys, no range). */
  static Expression keyRangeFilter(EntityColumns columns, List<String> values) {
    Expression filter = Expressions.alwaysTrue();
    int i = 0;
    for (Types.NestedField k : columns.keys()) {
      if (!prunes(k.type())) {
        continue;
      }
      String lo = values.get(i++);
      String hi = values.get(i++);
      if (lo == null) {
        continue;
      }
      filter = Expressions.and(filter, Expressions.and(
          Expressions.greaterThanOrEqual(k.name(), boundValue(k.type(), lo)),
          Expressions.lessThanOrEqual(k.name(), boundValue(k.type(), hi))));
    }
    return filter;
  }

  private static boolean prunes(Type type) {
    return switch (type.typeId()) {
      case INTEGER, LONG, DATE, TIMESTAMP, STRING, UUID, DECIMAL -> true;
      default -> false;
    };
  }

  private static Object boundValue(Type type, String text) {
    return switch (type.typeId()) {
      case INTEGER, DATE -> Integer.parseInt(text);
      case LONG, TIMESTAMP -> Long.parseLong(text);
      case UUID -> UUID.fromString(text);
      case DECIMAL -> new BigDecimal(text);
      default -> text;
    };
  }

  /**
   * The scan tasks (with their delete files) of {@code base}'s data files that {@code filter}
   * does not rule out; none when there is no base snapshot.
   */
  static List<FileScanTask> plan(Table table, Snapshot base, Expression filter) {
    return ManifestThreads.tasks(table, base, scan -> scan.filter(filter).ignoreResiduals());
  }

  /**
   * Every data file of {@code base} as a scan task with its delete files and column statistics,
   * to prune in memory ({@link #prune}); none when there is no base snapshot.
   */
  static List<FileScanTask> planAll(Table table, Snapshot base) {
    return List.copyOf(ManifestThreads.tasks(table, base, scan -> scan.includeColumnStats().ignoreResiduals()));
  }

  /**
   * The tasks of {@code all} (planned with column statistics) that {@code filter} does not rule
   * out, as {@link #plan} finds them in the manifests: partition values by the filter's inclusive
   * projection, then column bounds and counts (case-sensitive, bound to the schema of the file's
   * partition spec); null if the evaluators cannot bind the filter.
   */
  static List<FileScanTask> prune(Table table, List<FileScanTask> all, Expression filter) {
    if (filter.op() == Expression.Operation.TRUE) {
      return new ArrayList<>(all);
    }
    List<FileScanTask> kept = new ArrayList<>();
    try {
      Map<Integer, Evaluator> partitions = new HashMap<>();
      Map<Integer, InclusiveMetricsEvaluator> metrics = new HashMap<>();
      for (FileScanTask task : all) {
        int specId = task.file().specId();
        PartitionSpec spec = table.specs().get(specId);
        Evaluator partition = partitions.computeIfAbsent(specId, id -> new Evaluator(spec.partitionType(),
            Projections.inclusive(spec, true).project(filter), true));
        InclusiveMetricsEvaluator bounds = metrics.computeIfAbsent(specId,
            id -> new InclusiveMetricsEvaluator(spec.schema(), filter, true));
        if (partition.eval(task.file().partition()) && bounds.eval(task.file())) {
          kept.add(task);
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
    return kept;
  }

  /**
   * The data files of small snapshots, kept in memory to plan candidate files from: a snapshot of
   * at most {@value #MAX_FILES} data files (by its summary) is scanned once without a filter,
   * with the files' column statistics, and each key-range filter's candidates are pruned from
   * that list with Iceberg's own evaluators, as {@link #plan} prunes the files of the manifests
   * it reads (partition values by the filter's inclusive projection, then column bounds and
   * counts; case-sensitive, bound to the schema of the file's partition spec): the same files, with no manifest
   * read. Larger snapshots, and filters the evaluators cannot bind, are planned by {@link #plan}.
   * At most {@value #MAX_SNAPSHOTS} snapshots are kept, least recently used dropped. Thread-safe.
   */
  static final class Cache {
    static final long MAX_FILES = 1_000;
    static final int MAX_SNAPSHOTS = 32;

    /**
     * A snapshot of one tenant's table: the tenant is part of the key, so no tenant is ever given
     * another's file list (a table's UUID and snapshot id are not secrets), and so is the
     * snapshot's manifest list, which is what the file list was read from.
     */
    private record Key(String scope, UUID table, long snapshotId, String manifestList) {}

    private final Map<Key, List<FileScanTask>> tasks = new LruMap<>(MAX_SNAPSHOTS);

    /**
     * The candidate files of {@code base} of tenant {@code scope}'s {@code table} for
     * {@code filter}, as {@link #plan} finds them.
     */
    List<FileScanTask> plan(String scope, Table table, Snapshot base, Expression filter) {
      if (base == null) {
        return new ArrayList<>();
      }
      if (!small(base)) {
        return CandidateFiles.plan(table, base, filter);
      }
      Key key = new Key(scope, table.uuid(), base.snapshotId(), base.manifestListLocation());
      List<FileScanTask> all = cached(key);
      if (all == null) {
        all = planAll(table, base);
        remember(key, all);
      }
      List<FileScanTask> kept = prune(table, all, filter);
      return kept != null ? kept : CandidateFiles.plan(table, base, filter);
    }

    private static boolean small(Snapshot snapshot) {
      String files = snapshot.summary() == null ? null : snapshot.summary().get(SnapshotSummary.TOTAL_DATA_FILES_PROP);
      try {
        return files != null && Long.parseLong(files) <= MAX_FILES;
      } catch (NumberFormatException e) {
        return false;
      }
    }

    private synchronized List<FileScanTask> cached(Key key) {
      return tasks.get(key);
    }

    private synchronized void remember(Key key, List<FileScanTask> files) {
      tasks.put(key, files);
    }
  }
}

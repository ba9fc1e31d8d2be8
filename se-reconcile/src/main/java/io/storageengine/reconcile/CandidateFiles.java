package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
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
    Expression filter = Expressions.alwaysTrue();
    for (Types.NestedField k : columns.keys()) {
      String col = SqlQuoting.identifier(k.name());
      String sql = switch (k.type().typeId()) {
        case INTEGER, LONG -> "SELECT CAST(min(" + col + ") AS VARCHAR), CAST(max(" + col + ") AS VARCHAR) FROM "
            + keysTable;
        case DATE -> "SELECT CAST(min(" + col + ") - DATE '1970-01-01' AS VARCHAR), CAST(max(" + col
            + ") - DATE '1970-01-01' AS VARCHAR) FROM " + keysTable;
        case TIMESTAMP -> "SELECT CAST(epoch_us(min(" + col + ")) AS VARCHAR), CAST(epoch_us(max(" + col
            + ")) AS VARCHAR) FROM " + keysTable;
        case STRING, UUID, DECIMAL -> "SELECT CAST(min(" + col + ") AS VARCHAR), CAST(max(" + col
            + ") AS VARCHAR) FROM " + keysTable;
        default -> null;
      };
      if (sql == null) {
        continue;
      }
      String[] bounds = new String[2];
      duck.query(sql, rs -> {
        bounds[0] = rs.getString(1);
        bounds[1] = rs.getString(2);
      });
      if (bounds[0] == null) {
        continue;
      }
      Object lo = boundValue(k.type(), bounds[0]);
      Object hi = boundValue(k.type(), bounds[1]);
      filter = Expressions.and(filter, Expressions.and(
          Expressions.greaterThanOrEqual(k.name(), lo), Expressions.lessThanOrEqual(k.name(), hi)));
    }
    return filter;
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
    List<FileScanTask> candidates = new ArrayList<>();
    if (base == null) {
      return candidates;
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(base.snapshotId())
        .filter(filter).ignoreResiduals().planFiles()) {
      for (FileScanTask task : tasks) {
        candidates.add(task);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return candidates;
  }
}

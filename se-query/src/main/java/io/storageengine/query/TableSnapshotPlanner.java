package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Plans the data files of one pinned table snapshot with Iceberg: pruning by the pushed filter,
 * deletion vectors and position deletes resolved to row positions per data file, remote files
 * made local through the cache.
 */
final class TableSnapshotPlanner {
  private final DataFileCache cache;

  TableSnapshotPlanner(DataFileCache cache) {
    this.cache = cache;
  }

  /** One data file as DuckDB reads it. {@code deletedPositions} is sorted, possibly empty. */
  record PlannedFile(String localPath, long[] deletedPositions) {}

  /** The files and schema of a pinned table. */
  record PlannedTable(String displayName, Schema schema, List<PlannedFile> files) {}

  /**
   * Plans {@code table} at {@code pin}. Leases on cached copies are added to {@code leases} and
   * must be held until the query finished reading.
   */
  PlannedTable plan(String displayName, Table table, SnapshotPin pin, Expression filter,
      List<DataFileCache.Lease> leases) {
    Schema schema = table.schemas().get(pin.schemaId());
    if (schema == null) {
      throw SeException.notFound("table %s: schema %d no longer exists", displayName, pin.schemaId());
    }
    List<PlannedFile> files = new ArrayList<>();
    if (pin.snapshotId() == null) {
      return new PlannedTable(displayName, schema, files);
    }
    if (table.snapshot(pin.snapshotId()) == null) {
      throw SeException.notFound("table %s: snapshot %d no longer exists", displayName, pin.snapshotId());
    }
    TableScan scan = table.newScan().useSnapshot(pin.snapshotId()).caseSensitive(false)
        .filter(filter == null ? Expressions.alwaysTrue() : filter);
    BaseDeleteLoader deletes = new BaseDeleteLoader(deleteFile -> table.io().newInputFile(deleteFile.location()));
    try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        if (file.format() != FileFormat.PARQUET) {
          throw new SeException(ErrorCode.UNSUPPORTED,
              String.format("table %s: data file format %s cannot be queried (Parquet only)", displayName, file.format()));
        }
        List<DeleteFile> positionDeletes = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          if (delete.content() == FileContent.EQUALITY_DELETES) {
            throw new SeException(ErrorCode.UNSUPPORTED,
                String.format("table %s has equality deletes, which the query engine does not read", displayName));
          }
          positionDeletes.add(delete);
        }
        long[] deleted = new long[0];
        if (!positionDeletes.isEmpty()) {
          PositionDeleteIndex index = deletes.loadPositionDeletes(positionDeletes, file.location());
          deleted = positions(index);
        }
        if (deleted.length == file.recordCount()) {
          continue; // every row of the file is deleted
        }
        files.add(new PlannedFile(localPath(table, file.location(), leases), deleted));
      }
    } catch (IOException e) {
      throw SeException.unavailable("table " + displayName + ": cannot plan the scan", e);
    }
    return new PlannedTable(displayName, schema, files);
  }

  private static long[] positions(PositionDeleteIndex index) {
    long cardinality = index.cardinality();
    if (cardinality > Integer.MAX_VALUE) {
      throw new SeException(ErrorCode.UNSUPPORTED, "a data file has too many deleted rows to query");
    }
    long[] out = new long[(int) cardinality];
    int[] next = {0};
    index.forEach(pos -> out[next[0]++] = pos);
    return next[0] == out.length ? out : java.util.Arrays.copyOf(out, next[0]);
  }

  private String localPath(Table table, String location, List<DataFileCache.Lease> leases) {
    URI uri;
    try {
      uri = URI.create(location);
    } catch (IllegalArgumentException e) {
      uri = null;
    }
    if (uri == null || uri.getScheme() == null) {
      return location;
    }
    if (uri.getScheme().equals("file")) {
      return uri.getPath();
    }
    DataFileCache.Lease lease = cache.acquire(table.io(), location);
    leases.add(lease);
    return lease.path().toString();
  }
}

package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
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
 * made local through the DuckDB runtime's cache. Plans are kept in a {@link SnapshotPlanCache}: a query on a
 * snapshot that was planned before with the same filter reads no manifest or delete file.
 */
final class TableSnapshotPlanner {
  private final DuckRuntime duckdb;
  private final SnapshotPlanCache plans;

  /** @param duckdb makes data files local (see {@link DuckRuntime#localCopy}) */
  TableSnapshotPlanner(DuckRuntime duckdb, SnapshotPlanCache plans) {
    this.duckdb = duckdb;
    this.plans = plans;
  }

  /**
   * One data file as DuckDB reads it: its table location, the local path DuckDB opens, the
   * deleted positions (sorted, possibly empty), and its row lineage (see
   * {@link SnapshotPlanCache.ScanFile}).
   */
  record PlannedFile(String location, String localPath, long[] deletedPositions, Long firstRowId,
      Long dataSequenceNumber) {
    PlannedFile(String location, String localPath, long[] deletedPositions) {
      this(location, localPath, deletedPositions, null, null);
    }
  }

  /**
   * The files and schema of {@code table} pinned at {@code snapshotId} (null: no snapshot yet).
   * {@code evolved}: the table has had more than one schema, so files may carry other column
   * names than {@code schema}. {@code plan} is the shared (cached) plan the files come from, null
   * for a table without snapshot.
   */
  record PlannedTable(String displayName, Table table, Long snapshotId, Schema schema, List<PlannedFile> files,
      boolean evolved, SnapshotPlanCache.Plan plan, List<String> tailTables) {
    PlannedTable(String displayName, Table table, Long snapshotId, Schema schema, List<PlannedFile> files,
        boolean evolved, SnapshotPlanCache.Plan plan) {
      this(displayName, table, snapshotId, schema, files, evolved, plan, List.of());
    }

    /** This table read from {@code files} instead (the snapshot's files plus its WAL tail's). */
    PlannedTable withFiles(List<PlannedFile> files) {
      return new PlannedTable(displayName, table, snapshotId, schema, List.copyOf(files), evolved, plan, tailTables);
    }

    /**
     * This table with the rows of the DuckDB tables {@code tailTables} (qualified names on the
     * query's connection; their first columns are {@code schema}'s, by name) read next to its
     * files: WAL tail segments read inline (see {@link WalTail#load}).
     */
    PlannedTable withTailTables(List<String> tailTables) {
      return new PlannedTable(displayName, table, snapshotId, schema, files, evolved, plan, List.copyOf(tailTables));
    }
  }

  /**
   * Plans {@code table} of tenant {@code catalogId} at {@code pin}. Leases on cached copies are
   * added to {@code leases} and must be held until the query finished reading.
   */
  PlannedTable plan(String catalogId, String displayName, Table table, SnapshotPin pin, Expression filter,
      List<DataFileCache.Lease> leases) {
    Schema schema = table.schemas().get(pin.schemaId());
    if (schema == null) {
      throw SeException.notFound("table %s: schema %d no longer exists", displayName, pin.schemaId());
    }
    boolean evolved = table.schemas().size() > 1;
    if (pin.snapshotId() == null) {
      return new PlannedTable(displayName, table, null, schema, List.of(), evolved, null);
    }
    if (table.snapshot(pin.snapshotId()) == null) {
      throw new SnapshotExpiredException(displayName, pin.snapshotId());
    }
    Expression pruning = filter == null ? Expressions.alwaysTrue() : filter;
    SnapshotPlanCache.Key key = new SnapshotPlanCache.Key(catalogId, String.valueOf(table.uuid()), table.location(),
        pin.snapshotId(), pin.schemaId(), pruning.toString());
    SnapshotPlanCache.Plan plan = plans.get(key);
    if (plan == null) {
      plan = plans.put(key, new SnapshotPlanCache.Plan(scan(displayName, table, pin.snapshotId(), pruning)));
    }
    List<PlannedFile> files = new ArrayList<>(plan.files.size());
    try {
      for (SnapshotPlanCache.ScanFile file : plan.files) {
        files.add(new PlannedFile(file.location(), localPath(catalogId, table, file.location(), leases),
            file.deletedPositions(), file.firstRowId(), file.dataSequenceNumber()));
      }
    } catch (RuntimeException e) {
      // A remote data file deleted by expiry before its copy was made (the error names it).
      if (SnapshotExpiredException.isMissingFile(e)) {
        throw SnapshotExpiredException.missingFiles(displayName, table, pin.snapshotId(), e);
      }
      throw e;
    }
    return new PlannedTable(displayName, table, pin.snapshotId(), schema, files, evolved, plan);
  }

  private static List<SnapshotPlanCache.ScanFile> scan(String displayName, Table table, long snapshotId, Expression filter) {
    List<SnapshotPlanCache.ScanFile> files = new ArrayList<>();
    TableScan scan = table.newScan().useSnapshot(snapshotId).caseSensitive(false).filter(filter);
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
        files.add(new SnapshotPlanCache.ScanFile(file.location(), deleted, file.firstRowId(), file.dataSequenceNumber()));
      }
    } catch (IOException | RuntimeException e) {
      // Expiry may delete the snapshot's manifests or deletion vectors while they are read here
      // (the snapshot was in the metadata this plan loaded).
      if (SnapshotExpiredException.isMissingFile(e)) {
        throw SnapshotExpiredException.missingFiles(displayName, table, snapshotId, e);
      }
      throw e instanceof RuntimeException runtime ? runtime
          : SeException.unavailable("table " + displayName + ": cannot plan the scan", e);
    }
    return files;
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

  private String localPath(String catalogId, Table table, String location, List<DataFileCache.Lease> leases) {
    DataFileCache.Lease lease = duckdb.localCopy(catalogId, table, location);
    leases.add(lease);
    return lease.path().toString();
  }
}

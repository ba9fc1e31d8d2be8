package io.storageengine.query;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.expressions.Projections;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Plans the data files of one pinned table snapshot with Iceberg: pruning by the pushed filter,
 * deletion vectors and position deletes resolved to row positions per data file, remote files
 * made local through the DuckDB runtime's cache. Plans are kept in a {@link SnapshotPlanCache}: a query on a
 * snapshot that was planned before with the same filter reads no manifest or delete file.
 */
final class TableSnapshotPlanner {
  /** Snapshots with at most this many data files have each filter's plan pruned in memory. */
  static final long PRUNE_IN_MEMORY_MAX_FILES = 1_000;
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
      plan = plans.put(key, newPlan(key, displayName, table, schema, pruning));
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

  /**
   * The plan of {@code key}, not cached yet. A snapshot of at most {@value #PRUNE_IN_MEMORY_MAX_FILES}
   * data files is scanned once without a filter (that plan is cached with the files' statistics)
   * and each filter's plan is pruned from it in memory, with Iceberg's own inclusive evaluators
   * (partition values by the filter's inclusive projection, then column bounds and counts), as the
   * scan prunes the files of matching manifests: so a query whose literals change each time
   * (a point lookup) reads no manifest. Larger snapshots are scanned with the filter.
   */
  private SnapshotPlanCache.Plan newPlan(SnapshotPlanCache.Key key, String displayName, Table table, Schema schema,
      Expression pruning) {
    long snapshotId = key.snapshotId();
    boolean unfiltered = pruning.op() == Expression.Operation.TRUE;
    if (!smallSnapshot(table.snapshot(snapshotId))) {
      return new SnapshotPlanCache.Plan(scan(displayName, table, snapshotId, pruning, null));
    }
    SnapshotPlanCache.Key allKey = new SnapshotPlanCache.Key(key.catalogId(), key.tableUuid(), key.tableLocation(),
        snapshotId, key.schemaId(), Expressions.alwaysTrue().toString());
    SnapshotPlanCache.Plan all = unfiltered ? null : plans.peek(allKey);
    if (all == null || all.dataFiles == null) {
      List<DataFile> dataFiles = new ArrayList<>();
      all = new SnapshotPlanCache.Plan(scan(displayName, table, snapshotId, Expressions.alwaysTrue(), dataFiles),
          dataFiles);
      if (unfiltered) {
        return all;
      }
      all = plans.put(allKey, all);
      if (all.dataFiles == null) {
        return new SnapshotPlanCache.Plan(scan(displayName, table, snapshotId, pruning, null));
      }
    }
    List<SnapshotPlanCache.ScanFile> kept = new ArrayList<>();
    try {
      InclusiveMetricsEvaluator metrics = new InclusiveMetricsEvaluator(schema, pruning, false);
      Map<Integer, Evaluator> partitions = new HashMap<>();
      for (int i = 0; i < all.files.size(); i++) {
        DataFile file = all.dataFiles.get(i);
        PartitionSpec spec = table.specs().get(file.specId());
        Evaluator partition = partitions.computeIfAbsent(file.specId(), id -> new Evaluator(spec.partitionType(),
            Projections.inclusive(spec, false).project(pruning), false));
        if (partition.eval(file.partition()) && metrics.eval(file)) {
          kept.add(all.files.get(i));
        }
      }
    } catch (RuntimeException e) {
      // A filter the evaluators cannot bind (a partition source renamed since): let the scan prune.
      return new SnapshotPlanCache.Plan(scan(displayName, table, snapshotId, pruning, null));
    }
    return new SnapshotPlanCache.Plan(kept);
  }

  /** Whether {@code snapshot}'s summary says it has at most {@value #PRUNE_IN_MEMORY_MAX_FILES} data files. */
  private static boolean smallSnapshot(org.apache.iceberg.Snapshot snapshot) {
    String files = snapshot == null || snapshot.summary() == null ? null
        : snapshot.summary().get(org.apache.iceberg.SnapshotSummary.TOTAL_DATA_FILES_PROP);
    try {
      return files != null && Long.parseLong(files) <= PRUNE_IN_MEMORY_MAX_FILES;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** The planned files; with {@code dataFiles}, each one's Iceberg data file is added there too. */
  private static List<SnapshotPlanCache.ScanFile> scan(String displayName, Table table, long snapshotId, Expression filter,
      List<DataFile> dataFiles) {
    List<SnapshotPlanCache.ScanFile> files = new ArrayList<>();
    TableScan scan = ManifestThreads.scan(table.newScan(), table, table.snapshot(snapshotId))
        .useSnapshot(snapshotId).caseSensitive(false).filter(filter);
    if (dataFiles != null) {
      scan = scan.includeColumnStats(); // kept to prune other filters' plans from
    }
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
        if (dataFiles != null) {
          dataFiles.add(file.copy());
        }
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

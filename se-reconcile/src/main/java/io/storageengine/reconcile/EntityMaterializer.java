package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.DeleteWriteResult;

/**
 * Entity tables: folds the staged WAL operations per primary key with the current rows of those
 * keys ({@link EntityFold} has the semantics) and turns the result into one commit's changes.
 * A pass, in order:
 *
 * <ol>
 *   <li>{@link CandidateFiles}: the base snapshot's data files whose key bounds overlap the
 *       batch's keys;</li>
 *   <li>{@link BatchCurrentRows}: the live current rows of the batch's keys in those files;</li>
 *   <li>{@link BatchTombstones#load}: the keys' committed tombstones;</li>
 *   <li>{@link EntityFold}: each key's final state;</li>
 *   <li>winning rows become new data files; a row that replaces an existing one keeps its v3
 *       {@code _row_id}, written explicitly;</li>
 *   <li>{@link DeletionVectors}: replaced and deleted rows become positions in new deletion
 *       vectors;</li>
 *   <li>{@link BatchTombstones#write}: keys that end deleted get a tombstone.</li>
 * </ol>
 *
 * <p>A pass of one slice of a sliced table (a {@code slice} given) sees only the slice's keys
 * (the staged batch holds no others), reads current rows only in the slice's data files and
 * names the files it writes as the slice's.
 *
 * <p>If a step fails, the files written so far are deleted (nothing references them yet).
 */
final class EntityMaterializer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EntityMaterializer.class);
  private static final String BATCH_KEYS = "batch_keys";

  private final DuckSession duck;
  private final Table table;
  private final Snapshot base;
  private final long highWaterMark;
  private final ReconcileOptions options;
  private final EntityColumns columns;
  private final BatchTombstones tombstones;
  private final io.storageengine.catalog.TableSlices.Slice slice;
  /** The pass's use of the table's key index (null: the table has none). */
  private final KeyIndexReads index;

  /** @throws io.storageengine.common.SeException (invalid) if the table is not an entity table */
  EntityMaterializer(DuckSession duck, Table table, Snapshot base, long highWaterMark,
      ReconcileOptions options, TombstoneStore tombstones) {
    this(duck, table, base, highWaterMark, options, tombstones, null, KeyIndexes.none());
  }

  /**
   * @param slice the slice whose pass this is (null: the whole table)
   * @param indexes where the table's key index is kept between passes
   */
  EntityMaterializer(DuckSession duck, Table table, Snapshot base, long highWaterMark,
      ReconcileOptions options, TombstoneStore tombstones, io.storageengine.catalog.TableSlices.Slice slice,
      KeyIndexes indexes) {
    this.slice = slice;
    this.duck = duck;
    this.table = table;
    this.base = base;
    this.highWaterMark = highWaterMark;
    this.options = options;
    this.columns = new EntityColumns(table);
    this.tombstones = new BatchTombstones(duck, table, columns, tombstones, options);
    this.index = KeyIndexReads.of(duck, table, columns, indexes, slice == null ? -1 : slice.id());
  }

  TableChanges materialize(long fromSeq, long toSeq) {
    DataFileWriter writer = new DataFileWriter(duck, table, options);
    if (slice != null) {
      writer.forSlice(slice.id());
    }
    List<String> written = new ArrayList<>();
    try {
      return run(writer, written, fromSeq, toSeq);
    } catch (RuntimeException e) {
      written.addAll(writer.writtenLocations());
      Cleanup.deleteQuietly(table.io(), written);
      throw e;
    } finally {
      if (index != null) {
        index.release();
      }
    }
  }

  private TableChanges run(DataFileWriter writer, List<String> written, long fromSeq, long toSeq) {
    String keyList = columns.keyList("");
    duck.execute("CREATE OR REPLACE TEMP TABLE " + BATCH_KEYS + " AS SELECT DISTINCT " + keyList + " FROM "
        + WalStaging.TABLE);
    long t0 = System.nanoTime();
    Expression keyFilter = CandidateFiles.keyRangeFilter(duck, columns, BATCH_KEYS);
    CurrentRows candidates = null;
    List<org.apache.iceberg.FileScanTask> planned;
    if (index != null) {
      List<org.apache.iceberg.FileScanTask> all = CandidateFiles.planAll(table, base);
      if (slice != null) {
        all = SliceFiles.of(all, slice.id());
      }
      planned = CandidateFiles.prune(table, all, keyFilter);
      if (planned == null) {
        planned = all;
      }
      candidates = index.load(all, planned, BATCH_KEYS);
    } else {
      planned = CandidateFiles.plan(table, base, keyFilter);
      if (slice != null) {
        planned = SliceFiles.of(planned, slice.id());
      }
    }
    if (candidates == null) {
      candidates = new CurrentRows(duck, table, planned);
      BatchCurrentRows.load(duck, columns, BATCH_KEYS, candidates);
    } else {
      writer.beforePublish(index::written);
    }
    long t1 = System.nanoTime();
    tombstones.load(BATCH_KEYS, highWaterMark);
    long tTombs = System.nanoTime();
    EntityFold.fold(duck, columns);
    long t2 = System.nanoTime();

    duck.execute("CREATE OR REPLACE TEMP TABLE new_rows AS SELECT " + columns.columnList("")
        + ", CASE WHEN __ld IS NULL THEN __rid END AS " + SqlQuoting.identifier(MetadataColumns.ROW_ID.name())
        + " FROM " + EntityFold.TABLE + " WHERE __max_ord > 0 AND __last_op = 1");
    List<DataFile> dataFiles = writer.write("new_rows", true, keyList);
    long rowsWritten = dataFiles.stream().mapToLong(DataFile::recordCount).sum();
    long tFiles = System.nanoTime();

    DeleteWriteResult dvs = DeletionVectors.write(duck, table, candidates);
    if (index != null) {
      index.pend(dataFiles, dvs);
    }
    long tVectors = System.nanoTime();
    for (DeleteFile dv : dvs.deleteFiles()) {
      written.add(dv.location());
    }
    long removed = dvs.deleteFiles().isEmpty() ? 0
        : duck.queryLong("SELECT count(*) FROM " + EntityFold.TABLE + " WHERE __max_ord > 0 AND __file IS NOT NULL");
    tombstones.write(fromSeq, toSeq);
    long t3 = System.nanoTime();
    LOG.debug("{}: current rows of {} candidate files in {} ms, tombstones read in {} ms, fold in {} ms, "
        + "data files in {} ms, deletion vectors in {} ms, tombstones written in {} ms", table.name(),
        candidates.byLocalPath().size(), ms(t1 - t0), ms(tTombs - t1), ms(t2 - tTombs), ms(tFiles - t2),
        ms(tVectors - tFiles), ms(t3 - tVectors));

    Set<String> referenced = new HashSet<>();
    dvs.referencedDataFiles().forEach(cs -> referenced.add(cs.toString()));
    List<String> all = new ArrayList<>(writer.writtenLocations());
    all.addAll(written);
    return new TableChanges(dataFiles, dvs.deleteFiles(), dvs.rewrittenDeleteFiles(), referenced,
        keyFilter, rowsWritten, removed, all);
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }
}

package io.storageengine.reconcile.maintenance;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.Cleanup;
import io.storageengine.reconcile.CommitOutcome;
import io.storageengine.reconcile.DataFileWriter;
import io.storageengine.reconcile.DuckSession;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.SliceMeta;
import io.storageengine.reconcile.SliceSql;
import io.storageengine.reconcile.WalMarks;
import io.storageengine.wal.TableWal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Splits and merges the slices of a sliced entity table online, by the protocol of
 * {@link SliceMeta}: propose in the slices-meta, rewrite, one Iceberg commit, settle.
 *
 * <ul>
 *   <li><b>When</b>: a slice with more than twice {@code se.slice.target-rows} live rows is
 *       split at the midpoint of its hash range; otherwise two neighbours together below half of
 *       it are merged, but never below the table's {@code se.slice.count} slices (the
 *       parallelism it was created with). One change per pass.</li>
 *   <li><b>Level</b> (merges): the merged slice inherits one progress, so the slice behind is
 *       first reconciled up to the other's progress (while the merge is pending, the one ahead
 *       holds back and the one behind goes no further).</li>
 *   <li><b>Rewrite</b>: the live rows of the replaced slices' data files (deletion vectors
 *       applied, v3 row lineage written explicitly, as compaction does) are written as files of
 *       the new slices, each row to the slice that owns its key.</li>
 *   <li><b>Commit</b>: one {@code RewriteFiles} (an empty append when the slices have no files)
 *       planned on a snapshot, removing the old files and their vectors and adding the new ones;
 *       it sets the new slices' {@code se.wal.seq.<id>} to the replaced slices' progress and
 *       drops theirs ({@link WalMarks#replacingSlices}). It fails, and the rewrite is planned
 *       again, when a replaced slice's pass committed meanwhile, a file of theirs got a vector
 *       or was rewritten; passes of other slices landing meanwhile only cost an Iceberg
 *       retry.</li>
 * </ul>
 *
 * The table's maintenance runs one pass at a time, so a change still pending when a pass starts
 * has crashed (or lost its worker): the pass settles it if the snapshot applied it and rolls it
 * back otherwise.
 */
final class SliceResizer {
  private static final Logger LOG = LoggerFactory.getLogger(SliceResizer.class);
  /** Rewrites of one change before it is rolled back. */
  static final int MAX_ATTEMPTS = 3;
  /** Rounds of passes that bring a merge's slices to the same progress. */
  static final int MAX_LEVELING_ROUNDS = 50;
  private static final String SLICE_ROWS = "slice_rows";

  private final ObjectStore clusterStore;
  private final BufferAllocator allocator;
  private final DuckRuntime duckdb;
  private final ReconcileOptions options;
  private final MaintenanceHooks hooks;
  /** Runs the passes that bring a merge's slices to the same progress. */
  private final Reconciler reconciler;

  SliceResizer(ObjectStore clusterStore, BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options,
      MaintenanceHooks hooks, Reconciler reconciler) {
    this.reconciler = reconciler;
    this.clusterStore = clusterStore;
    this.allocator = allocator;
    this.duckdb = duckdb;
    this.options = options;
    this.hooks = hooks;
  }

  /** The change one pass made ({@code "split [0] -> [2, 3]"}); empty when none was due. */
  Optional<String> resize(String catalogId, TableWal tableWal, Table table) {
    Optional<SliceMeta.Layout> layout = prepare(tableWal, table);
    if (layout.isEmpty()) {
      return Optional.empty();
    }
    Snapshot current = table.currentSnapshot();
    List<TableSlices.Slice> slices = layout.get().asOf(TableSlices.marks(table, current));
    List<TableSlices.SliceStats> stats = TableSlices.stats(table, current, slices);
    long target = TableSettings.sliceTargetRows(table);
    TableSlices.SliceStats biggest = null;
    for (TableSlices.SliceStats s : stats) {
      if (s.rows() > 2 * target && s.slice().hi() - s.slice().lo() >= 2
          && (biggest == null || s.rows() > biggest.rows())) {
        biggest = s;
      }
    }
    if (biggest != null) {
      return apply(catalogId, tableWal, table, layout.get(), SliceMeta.Change.SPLIT, List.of(biggest.slice()));
    }
    if (slices.size() > TableSettings.of(table).sliceCount()) {
      for (int i = 0; i + 1 < stats.size(); i++) {
        TableSlices.SliceStats a = stats.get(i);
        TableSlices.SliceStats b = stats.get(i + 1);
        if (a.rows() + b.rows() < target / 2) {
          return apply(catalogId, tableWal, table, layout.get(), SliceMeta.Change.MERGE,
              List.of(a.slice(), b.slice()));
        }
      }
    }
    return Optional.empty();
  }

  /** Splits slice {@code sliceId} at the midpoint of its range now, whatever its rows. */
  Optional<String> split(String catalogId, TableWal tableWal, Table table, int sliceId) {
    SliceMeta.Layout layout = prepare(tableWal, table).orElseThrow(() ->
        SeException.invalid("table %s is not sliced", table.name()));
    TableSlices.Slice slice = layout.asOf(TableSlices.marks(table, table.currentSnapshot())).stream()
        .filter(s -> s.id() == sliceId).findFirst()
        .orElseThrow(() -> SeException.notFound("table %s has no slice %d", table.name(), sliceId));
    if (slice.hi() - slice.lo() < 2) {
      throw SeException.invalid("slice %d of table %s owns one hash and cannot be split", sliceId, table.name());
    }
    return apply(catalogId, tableWal, table, layout, SliceMeta.Change.SPLIT, List.of(slice));
  }

  /**
   * The slices-meta settled onto the table's current snapshot (read again after it) with any
   * pending change finished or rolled back; empty for a table that is not sliced or a
   * slices-meta changed meanwhile.
   */
  private Optional<SliceMeta.Layout> prepare(TableWal tableWal, Table table) {
    Optional<SliceMeta.Layout> loaded = SliceMeta.load(clusterStore, tableWal, table);
    if (loaded.isEmpty()) {
      return loaded;
    }
    table.refresh();
    SliceMeta.Layout layout = SliceMeta.settle(clusterStore, tableWal, loaded.get(),
        TableSlices.marks(table, table.currentSnapshot()));
    if (layout.pending().isPresent()) {
      LOG.warn("table {}: slice change {} was left pending (a crash or a lost worker); rolled back",
          table.name(), layout.pending().get());
      return SliceMeta.rollBack(clusterStore, tableWal, layout);
    }
    return Optional.of(layout);
  }

  private Optional<String> apply(String catalogId, TableWal tableWal, Table table, SliceMeta.Layout layout,
      String op, List<TableSlices.Slice> from) {
    List<long[]> ranges = new ArrayList<>();
    TableSlices.Slice first = from.get(0);
    TableSlices.Slice last = from.get(from.size() - 1);
    if (op.equals(SliceMeta.Change.SPLIT)) {
      long mid = first.lo() + (first.hi() - first.lo()) / 2;
      ranges.add(new long[] {first.lo(), mid});
      ranges.add(new long[] {mid, first.hi()});
    } else {
      ranges.add(new long[] {first.lo(), last.hi()});
    }
    List<Integer> fromIds = from.stream().map(TableSlices.Slice::id).toList();
    Optional<SliceMeta.Layout> proposed = SliceMeta.propose(clusterStore, tableWal, layout, op, fromIds, ranges,
        options.clock().millis());
    if (proposed.isEmpty()) {
      LOG.info("table {}: slices-meta changed while a {} of {} was proposed; left for the next pass",
          table.name(), op, fromIds);
      return Optional.empty();
    }
    SliceMeta.Change change = proposed.get().pending().orElseThrow();
    hooks.afterSliceProposal(table, change);
    try {
      for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        if (op.equals(SliceMeta.Change.MERGE)) {
          level(tableWal, table, change);
        }
        table.refresh();
        if (rewrite(catalogId, table, proposed.get(), change)) {
          hooks.afterSliceCommit(table, change);
          table.refresh();
          SliceMeta.settle(clusterStore, tableWal, proposed.get(),
              TableSlices.marks(table, table.currentSnapshot()));
          LOG.info("table {}: {} committed", table.name(), change);
          return Optional.of(change.toString());
        }
      }
      throw new SeException(ErrorCode.CONFLICT, "table " + table.name() + ": " + change
          + " still conflicting after " + MAX_ATTEMPTS + " attempts; rolled back");
    } catch (SeException e) {
      if (e.code() != ErrorCode.UNAVAILABLE) {
        // Known not committed (an unknown outcome stays pending for the next pass to decide).
        SliceMeta.rollBack(clusterStore, tableWal, proposed.get());
      }
      throw e;
    }
  }

  /**
   * Brings the slices of a pending merge to the same progress: passes of those behind, which the
   * pending merge bounds to the furthest one's progress ({@link SliceMeta.Layout#passLimit}),
   * until they meet or a round commits nothing.
   */
  private void level(TableWal tableWal, Table table, SliceMeta.Change change) {
    for (int round = 0; round < MAX_LEVELING_ROUNDS; round++) {
      table.refresh();
      Map<Integer, Long> marks = TableSlices.marks(table, table.currentSnapshot());
      long furthest = 0;
      for (int id : change.from()) {
        furthest = Math.max(furthest, marks.getOrDefault(id, 0L));
      }
      boolean moved = false;
      boolean behind = false;
      for (int id : change.from()) {
        if (marks.getOrDefault(id, 0L) < furthest) {
          behind = true;
          moved |= reconciler.reconcileSlice(tableWal, id).outcome() == ReconcileResult.Outcome.COMMITTED;
        }
      }
      if (!behind || !moved) {
        return;
      }
    }
  }

  /** One attempt: true when committed, false when a concurrent commit made it conflict. */
  private boolean rewrite(String catalogId, Table table, SliceMeta.Layout layout, SliceMeta.Change change) {
    Snapshot base = table.currentSnapshot();
    Long baseId = base == null ? null : base.snapshotId();
    Map<Integer, Long> marks = TableSlices.marks(table, base);
    List<TableSlices.Slice> before = layout.asOf(marks);
    long expected = marks.getOrDefault(change.from().get(0), 0L);
    for (int id : change.from()) {
      if (!marks.isEmpty() && !marks.containsKey(id)) {
        throw SeException.internal("table " + table.name() + ": slice " + id + " of " + change
            + " is not in the current snapshot", null);
      }
      if (marks.getOrDefault(id, 0L) != expected) {
        throw new SeException(ErrorCode.CONFLICT, "table " + table.name() + ": " + change
            + " needs the slices at the same WAL progress, they are at " + marks);
      }
    }
    List<FileScanTask> tasks = new ArrayList<>();
    List<DataFile> inputs = new ArrayList<>();
    Map<String, DeleteFile> vectors = new LinkedHashMap<>();
    long inputRows = 0;
    for (FileScanTask task : ManifestThreads.tasks(table, base, scan -> scan)) {
      OptionalInt slice = TableSlices.sliceOfFile(task.file().location());
      if (slice.isEmpty() || !change.from().contains(slice.getAsInt())) {
        continue;
      }
      if (task.file().format() != FileFormat.PARQUET
          || task.deletes().stream().anyMatch(d -> d.content() == FileContent.EQUALITY_DELETES)) {
        throw SeException.invalid("table %s: %s cannot rewrite %s (not Parquet, or with equality deletes)",
            table.name(), change, task.file().location());
      }
      tasks.add(task);
      inputs.add(task.file());
      inputRows += task.file().recordCount();
      for (DeleteFile d : task.deletes()) {
        if (d.format() == FileFormat.PUFFIN) {
          vectors.put(d.location() + "#" + d.contentOffset(), d);
        }
      }
    }
    boolean lineage = TableUtil.formatVersion(table) >= 3;
    List<DataFile> added = new ArrayList<>();
    List<String> written = new ArrayList<>();
    if (!tasks.isEmpty()) {
      try (BufferAllocator child = allocator.newChildAllocator("slice-" + table.uuid(), 0, Long.MAX_VALUE);
          DuckSession duck = new DuckSession(duckdb, child, options.duckdbThreads(), catalogId)) {
        long staged = Compactor.stage(duck, table, tasks, lineage).rows();
        if (staged != inputRows) {
          throw SeException.internal("table " + table.name() + ": " + change + " read " + staged + " rows from "
              + inputs.size() + " data files whose metadata counts " + inputRows, null);
        }
        long live = duck.queryLong("SELECT count(*) FROM " + Compactor.STAGED);
        long placed = 0;
        try {
          for (TableSlices.Slice s : change.to()) {
            duck.execute("CREATE OR REPLACE TEMP TABLE " + SLICE_ROWS + " AS SELECT * FROM " + Compactor.STAGED
                + " WHERE " + SliceSql.owns(table, "", s));
            placed += duck.queryLong("SELECT count(*) FROM " + SLICE_ROWS);
            DataFileWriter writer = new DataFileWriter(duck, table, options).forSlice(s.id());
            try {
              added.addAll(writer.write(SLICE_ROWS, lineage
                  ? List.of(MetadataColumns.ROW_ID, MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER) : List.of(),
                  Compactor.defaultOrder(table, lineage)));
            } finally {
              written.addAll(writer.writtenLocations());
            }
          }
          if (placed != live) {
            throw SeException.internal("table " + table.name() + ": " + change + " placed " + placed + " of "
                + live + " rows in the new slices", null);
          }
        } catch (RuntimeException e) {
          Cleanup.deleteQuietly(table.io(), written);
          throw e;
        }
      }
    }
    hooks.beforeSliceCommit(table, change);
    SnapshotUpdate<?> update;
    if (inputs.isEmpty()) {
      AppendFiles append = ManifestThreads.commit(CommitOutcome.checkingLanded(table).newAppend(), table, base);
      update = append;
    } else {
      RewriteFiles rewrite = ManifestThreads.commit(CommitOutcome.checkingLanded(table).newRewrite(), table, base)
          .validateFromSnapshot(baseId);
      inputs.forEach(rewrite::deleteFile);
      vectors.values().forEach(rewrite::deleteFile);
      added.forEach(rewrite::addFile);
      update = rewrite;
    }
    update.validateWith(WalMarks.replacingSlices(table, update, baseId, before, change.from(), change.to(),
        expected));
    try {
      update.commit();
      return true;
    } catch (RuntimeException e) {
      boolean landed;
      try {
        table.refresh();
        landed = written.isEmpty()
            ? TableSlices.marks(table, table.currentSnapshot()).containsKey(change.to().get(0).id())
            : CommitOutcome.added(table, baseId, written);
      } catch (RuntimeException reload) {
        e.addSuppressed(reload);
        throw SeException.unavailable("table " + table.name() + ": commit of " + change + " failed ("
            + e.getClass().getSimpleName() + ") and the table could not be read to tell whether it landed; "
            + "its files are kept", e);
      }
      if (landed) {
        LOG.warn("commit of {} {} reported {} but landed; counted as done", table.name(), change,
            e.getClass().getSimpleName());
        return true;
      }
      if (e instanceof ValidationException || e instanceof CommitFailedException) {
        Cleanup.deleteQuietly(table.io(), written);
        LOG.info("{} of {} conflicted with a concurrent commit, planned again: {}", change, table.name(),
            e.getMessage());
        return false;
      }
      if (CommitOutcome.cleanable(e)) {
        Cleanup.deleteQuietly(table.io(), written);
      }
      throw SeException.unavailable("table " + table.name() + ": commit of " + change + " failed: "
          + e.getClass().getSimpleName() + " (the next maintenance pass settles or rolls it back)", e);
    }
  }
}

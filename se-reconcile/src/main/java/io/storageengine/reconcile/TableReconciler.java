package io.storageengine.reconcile;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.ReconcileTrace;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reconcile pass over one table (steps 1-5 of ARCHITECTURE.md 7). A commit conflict never
 * retries the same files: the pass restarts from step 1 on a reloaded table, whose new
 * high-water mark may already include the range. A failed commit's files are deleted only once
 * the reloaded table shows the commit cannot have landed (see {@link CommitOutcome}).
 *
 * <p>On a sliced table ({@link SliceMeta}) a pass is one slice's ({@link #forSlice}): its progress
 * is the slice's own, it keeps only the slice's keys of the WAL range, and it commits through
 * {@link SliceCommit}; a pass given no slice runs one per slice ({@link SlicedPasses}).
 */
final class TableReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(TableReconciler.class);

  private final TenantCatalogs catalogs;
  private final WalLog wal;
  private final ObjectStore clusterStore;
  private final TombstoneCache tombstones;
  private final BufferAllocator allocator;
  private final DuckRuntime duckdb;
  private final ReconcileOptions options;
  private final ReconcileHooks hooks;
  private final TableLocator locator;
  private final Telemetry telemetry;
  private final KeyIndexes keyIndexes;
  /** The slice this pass is for (-1: the whole table). */
  private final int sliceId;
  /** Where a pass over a whole sliced table sends its slices (null: runs them itself). */
  private final SliceDispatch dispatch;

  TableReconciler(TenantCatalogs catalogs, WalLog wal, ObjectStore clusterStore, TombstoneCache tombstones,
      BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, ReconcileHooks hooks,
      TableLocator locator, Telemetry telemetry, KeyIndexes keyIndexes) {
    this.catalogs = catalogs;
    this.wal = wal;
    this.clusterStore = clusterStore;
    this.tombstones = tombstones;
    this.allocator = allocator;
    this.duckdb = duckdb;
    this.options = options;
    this.hooks = hooks;
    this.locator = locator;
    this.telemetry = telemetry;
    this.keyIndexes = keyIndexes;
    this.sliceId = -1;
    this.dispatch = null;
  }

  private TableReconciler(TableReconciler whole, int sliceId, SliceDispatch dispatch) {
    this.catalogs = whole.catalogs;
    this.wal = whole.wal;
    this.clusterStore = whole.clusterStore;
    this.tombstones = whole.tombstones;
    this.allocator = whole.allocator;
    this.duckdb = whole.duckdb;
    this.options = whole.options;
    this.hooks = whole.hooks;
    this.locator = whole.locator;
    this.telemetry = whole.telemetry;
    this.keyIndexes = whole.keyIndexes;
    this.sliceId = sliceId;
    this.dispatch = dispatch;
  }

  /** The pass of slice {@code sliceId} of a sliced table. */
  TableReconciler forSlice(int sliceId) {
    return new TableReconciler(this, sliceId, null);
  }

  /** A pass that, on a sliced table, hands the slices to {@code dispatch} instead of running them. */
  TableReconciler dispatchingSlices(SliceDispatch dispatch) {
    return new TableReconciler(this, sliceId, dispatch);
  }

  /**
   * The slice of a slice pass over {@code table}, the slices of the snapshot it starts from, and
   * the last WAL seq it may reconcile ({@link SliceMeta.Layout#passLimit}).
   */
  private record SliceState(List<TableSlices.Slice> slices, TableSlices.Slice slice, long limit) {}

  private enum CommitState { COMMITTED, RESTART }

  private record Attempt(CommitState state, TableChanges changes, long walRows) {}

  /** Where one attempt of a pass spent its time, logged at DEBUG to profile freshness. */
  private static final class PhaseTimes {
    private final StringBuilder text = new StringBuilder();
    private long mark = System.nanoTime();

    /** Ends the phase that started at the previous mark. */
    void lap(String phase) {
      long now = System.nanoTime();
      text.append(text.length() == 0 ? "" : ", ").append(phase).append(' ')
          .append((now - mark) / 1_000_000).append(" ms");
      mark = now;
    }

    @Override
    public String toString() {
      return text.toString();
    }
  }

  ReconcileResult run(TableWal tableWal) {
    try (ReconcileTrace trace = ReconcileTrace.start(telemetry, tableWal.catalogId(),
        tableWal.tableUuid().toString())) {
      if (sliceId >= 0) {
        trace.slice(sliceId);
      }
      try {
        ReconcileResult r = run(tableWal, trace);
        trace.result(r.outcome().name().toLowerCase(Locale.ROOT), r.walRows(), r.dataFiles(), r.deleteVectors());
        if (sliceId >= 0 && r.outcome() == ReconcileResult.Outcome.COMMITTED) {
          trace.slicePosition(r.toSeq());
        }
        return r;
      } catch (RuntimeException | Error e) {
        trace.failed(e);
        throw e;
      }
    }
  }

  private ReconcileResult run(TableWal tableWal, ReconcileTrace trace) {
    for (int attempt = 1; ; attempt++) {
      PhaseTimes times = new PhaseTimes();
      Catalog catalog = catalogs.catalog(tableWal.catalogId());
      Optional<Table> found = catalogCall(tableWal, () -> locator.locate(catalog, tableWal));
      times.lap("load table");
      if (found.isEmpty()) {
        // DEBUG: a continuous loop reports the drop once, and deletes the WAL after a while.
        LOG.debug("table {} of catalog {} no longer exists; its WAL is skipped", tableWal.tableUuid(),
            tableWal.catalogId());
        return new ReconcileResult(tableWal, null, ReconcileResult.Outcome.TABLE_DROPPED, 0, 0, 0, 0, 0, 0, 0,
            attempt, "table " + tableWal.tableUuid() + " was dropped from catalog " + tableWal.catalogId());
      }
      Table table = found.get();
      trace.table(table.name().substring(table.name().indexOf('.') + 1));
      SliceState slice = null;
      if (TableSettings.of(table).sliced()) {
        SliceMeta.Layout layout = SliceMeta.load(clusterStore, tableWal, table).orElseThrow();
        List<TableSlices.Slice> slices = layout.asOf(TableSlices.marks(table, table.currentSnapshot()));
        if (layout.pending().isPresent() || !slices.equals(layout.slices())) {
          layout = settle(tableWal, table, layout);
          slices = layout.asOf(TableSlices.marks(table, table.currentSnapshot()));
        }
        if (sliceId < 0 && dispatch != null) {
          List<Integer> ids = slices.stream().map(TableSlices.Slice::id).toList();
          dispatch.dispatch(tableWal, ids);
          return new ReconcileResult(tableWal, table.name(), ReconcileResult.Outcome.UP_TO_DATE, 0,
              WalHighWaterMark.of(table), 0, 0, 0, 0, 0, attempt, "dispatched " + ids.size() + " slice passes");
        }
        if (sliceId < 0) {
          return new SlicedPasses(this, slices).run(tableWal, table.name());
        }
        Optional<TableSlices.Slice> own = slices.stream().filter(s -> s.id() == sliceId).findFirst();
        if (own.isEmpty()) {
          if (layout.known(sliceId).isEmpty()) {
            throw SeException.notFound("table %s has no slice %d", table.name(), sliceId);
          }
          return new ReconcileResult(tableWal, table.name(), ReconcileResult.Outcome.UP_TO_DATE, 0,
              WalHighWaterMark.of(table), 0, 0, 0, 0, 0, attempt, "slice " + sliceId
                  + " no longer exists: a split or merge replaced it");
        }
        long limit = layout.passLimit(sliceId, TableSlices.marks(table, table.currentSnapshot()),
            options.clock().millis());
        slice = new SliceState(slices, own.get(), limit);
        if (markOf(table, slice) >= limit) {
          return new ReconcileResult(tableWal, table.name(), ReconcileResult.Outcome.UP_TO_DATE, 0,
              markOf(table, slice), 0, 0, 0, 0, 0, attempt, "slice " + sliceId
                  + " waits for its pending " + layout.pending().get().op());
        }
      }
      long highWaterMark = markOf(table, slice);
      List<WalSegment> segments = readContiguous(tableWal, highWaterMark,
          slice == null ? Long.MAX_VALUE : slice.limit());
      times.lap("read WAL");
      if (segments.isEmpty()) {
        publish(tableWal, WalHighWaterMark.of(table));
        return new ReconcileResult(tableWal, table.name(), ReconcileResult.Outcome.UP_TO_DATE, 0,
            highWaterMark, 0, 0, 0, 0, 0, attempt, "nothing after seq " + highWaterMark);
      }
      long fromSeq = segments.get(0).seq();
      long toSeq = segments.get(segments.size() - 1).seq();
      trace.walRange(fromSeq, toSeq);
      // Idempotent writes: a frame whose (producer, sequence) the table or an earlier frame holds
      // is skipped, so a batch made durable twice (a resend racing its first attempt) lands once.
      Duration producerRetention = TableSettings.producerRetention(table);
      List<WalSegment> unique = ProducerDedup.withoutDuplicates(wal, tableWal, segments, producerRetention);
      Attempt result = materializeAndCommit(tableWal, table, slice, highWaterMark, unique, fromSeq, toSeq,
          trace, times);
      if (result.state() == CommitState.COMMITTED) {
        hooks.afterCommit(tableWal, fromSeq, toSeq);
        publish(tableWal, slice == null ? toSeq : publishableAfterCommit(tableWal, table));
        advanceProducers(tableWal, toSeq, producerRetention, segments);
        times.lap("publish");
        TableChanges c = result.changes();
        LOG.info("reconciled {} WAL {}..{}: {} rows, {} data files, {} deletion vectors", table.name(),
            fromSeq, toSeq, result.walRows(), c.dataFiles().size(), c.deleteVectors().size());
        LOG.debug("pass over {} WAL {}..{} ({} segments): {}", table.name(), fromSeq, toSeq, segments.size(),
            times);
        return new ReconcileResult(tableWal, table.name(), ReconcileResult.Outcome.COMMITTED, fromSeq, toSeq,
            result.walRows(), c.rowsWritten(), c.rowsRemoved(), c.dataFiles().size(), c.deleteVectors().size(),
            attempt, "committed");
      }
      if (attempt >= options.maxCommitAttempts()) {
        throw new SeException(ErrorCode.CONFLICT, "table " + table.name() + ": commit of WAL " + fromSeq + ".."
            + toSeq + " still conflicting after " + attempt + " attempts");
      }
      LOG.info("commit of {} WAL {}..{} conflicted; restarting the pass", table.name(), fromSeq, toSeq);
    }
  }

  /**
   * Moves {@code producers.json} (of a table that has one: one read otherwise) over the
   * published segments, also over a pass without producer frames, so the next pass and the WAL
   * tail read no segment before their own; a failure costs only that (they read them).
   */
  private void advanceProducers(TableWal tableWal, long toSeq, Duration retention,
      List<WalSegment> segments) {
    try {
      wal.advanceProducerWindows(tableWal, toSeq, retention, options.clock().millis(), segments);
    } catch (RuntimeException e) {
      LOG.warn("could not advance the producer windows of {} to WAL {}: {}", tableWal, toSeq,
          e.getMessage());
    }
  }

  /**
   * Brings the slices-meta read as {@code layout} to the slices of {@code table}'s current
   * snapshot, refreshed after the read ({@link SliceMeta#settle}), and rolls back a pending
   * change older than {@link SliceMeta#LEASE_MILLIS} that the snapshot has not applied. Best
   * effort: the pass works from the snapshot's slices either way.
   */
  private SliceMeta.Layout settle(TableWal tableWal, Table table, SliceMeta.Layout layout) {
    try {
      table.refresh();
      SliceMeta.Layout settled = SliceMeta.settle(clusterStore, tableWal, layout,
          TableSlices.marks(table, table.currentSnapshot()));
      if (settled.pending().isPresent()
          && options.clock().millis() - settled.pending().get().startedAtMillis() >= SliceMeta.LEASE_MILLIS) {
        LOG.warn("table {}: pending slice change {} is older than its lease; rolled back", table.name(),
            settled.pending().get());
        settled = SliceMeta.rollBack(clusterStore, tableWal, settled).orElse(settled);
      }
      return settled;
    } catch (RuntimeException e) {
      // E.g. a change proposed and committed since the read: read again, it knows every id.
      LOG.debug("slices-meta of {} not settled: {}", table.name(), e.getMessage());
      return SliceMeta.load(clusterStore, tableWal, table).orElse(layout);
    }
  }

  /** The progress of {@code slice} (null: the table's high-water mark) as of {@code table}. */
  private static long markOf(Table table, SliceState slice) {
    return slice == null ? WalHighWaterMark.of(table)
        : TableSlices.marks(table, table.currentSnapshot()).getOrDefault(slice.slice().id(), 0L);
  }

  /**
   * What a slice pass may publish once its commit landed: the table's mark (the least progress
   * of its slices) as the reloaded table shows it; 0 (nothing) when it cannot be reloaded, since
   * the next pass publishes it anyway.
   */
  private long publishableAfterCommit(TableWal tableWal, Table table) {
    try {
      return locator.locate(catalogs.catalog(tableWal.catalogId()), tableWal).map(WalHighWaterMark::of).orElse(0L);
    } catch (RuntimeException e) {
      LOG.debug("table {} not reloaded after a slice commit: {}", table.name(), e.getMessage());
      return 0;
    }
  }

  private void publish(TableWal tableWal, long seq) {
    if (seq > 0 && wal.state(tableWal).publishedSeq() < seq) {
      wal.advancePublished(tableWal, seq);
    }
  }

  /**
   * The segments after {@code afterSeq} up to {@code lastSeq} without a gap, bounded by bytes
   * per commit. Segments are read by seq until the first missing one instead of listing the WAL
   * first: a listing grows with every segment not yet garbage-collected and would be paid by
   * every pass, while the one read that misses is a cheap not-found.
   */
  private List<WalSegment> readContiguous(TableWal tableWal, long afterSeq, long lastSeq) {
    List<WalSegment> segments = new ArrayList<>();
    long bytes = 0;
    for (long seq = afterSeq + 1; bytes < options.maxBytesPerCommit() && seq <= lastSeq; seq++) {
      Optional<WalSegment> segment = wal.read(tableWal, seq);
      if (segment.isEmpty()) {
        break;
      }
      if (!tableWal.tableUuid().equals(segment.get().tableUuid())) {
        throw SeException.internal("WAL segment " + seq + " of table " + tableWal.tableUuid()
            + " belongs to table " + segment.get().tableUuid(), null);
      }
      long segmentBytes = segment.get().frameBytes();
      if (!segments.isEmpty() && bytes + segmentBytes > options.maxBytesPerCommit()) {
        break;
      }
      segments.add(segment.get());
      bytes += segmentBytes;
    }
    return segments;
  }

  private Attempt materializeAndCommit(TableWal tableWal, Table table, SliceState slice, long highWaterMark,
      List<WalSegment> segments, long fromSeq, long toSeq, ReconcileTrace trace, PhaseTimes times) {
    boolean entity = TableSettings.of(table).entity();
    if (entity && TableUtil.formatVersion(table) < 3) {
      throw SeException.invalid("entity table %s must be format v3 (deletion vectors), is v%d",
          table.name(), TableUtil.formatVersion(table));
    }
    Snapshot base = table.currentSnapshot();
    TableChanges changes;
    long walRows;
    try (ReconcileTrace.Step step = trace.materializing();
        BufferAllocator passAllocator = allocator.newChildAllocator(
            "reconcile-" + tableWal.tableUuid(), 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, passAllocator, options.duckdbThreads(), tableWal.catalogId())) {
      times.lap("open DuckDB");
      try {
        // A slice's pass stages the rows of its own keys only.
        walRows = WalStaging.load(duck, table.schema(), segments, slice == null ? UnaryOperator.identity()
            : SliceSql.keepOnly(new EntityColumns(table), slice.slice()));
      } catch (WalFrameRunReader.CorruptFrameException e) {
        quarantine(tableWal, table, e);
        throw e;
      }
      times.lap("stage " + walRows + " rows");
      changes = entity
          ? new EntityMaterializer(duck, table, base, highWaterMark, options,
              new TombstoneStore(clusterStore, tableWal, tombstones, slice == null ? -1 : slice.slice().id()),
              slice == null ? null : slice.slice(), keyIndexes).materialize(fromSeq, toSeq)
          : AppendMaterializer.materialize(duck, table, options);
      times.lap("materialize");
    }
    times.lap("close DuckDB");

    hooks.beforeCommit(tableWal, fromSeq, toSeq);
    RuntimeException failure;
    String commitId = java.util.UUID.randomUUID().toString();
    try (ReconcileTrace.Step step = trace.committing()) {
      if (slice != null) {
        SliceCommit.commit(table, base, slice.slices(), slice.slice().id(), highWaterMark, toSeq, changes, commitId);
      } else if (entity) {
        commitRowDelta(table, base, highWaterMark, toSeq, changes, commitId);
      } else {
        commitAppend(table, highWaterMark, toSeq, changes, commitId);
      }
      times.lap("commit");
      return new Attempt(CommitState.COMMITTED, changes, walRows);
    } catch (RuntimeException e) {
      failure = e;
    }
    return afterFailedCommit(tableWal, table, slice, base, fromSeq, toSeq, changes, walRows, commitId, failure);
  }

  /**
   * Decides a failed commit from the reloaded table, never from the exception alone: a commit
   * can land before its client sees an error (a lost response, a connection dropped after the
   * update). Landed (a snapshot after {@code base} added our files) counts as committed; the
   * mark then includes the range, so it is never applied again. Otherwise the files are deleted
   * only when the commit can no longer land: Iceberg calls the failure cleanable, or another
   * commit already applied the range (ours asserted an older table state). Files of an unknown
   * outcome are left for orphan cleanup.
   */
  private Attempt afterFailedCommit(TableWal tableWal, Table table, SliceState slice, Snapshot base, long fromSeq,
      long toSeq, TableChanges changes, long walRows, String commitId, RuntimeException failure) {
    String what = "commit of table " + table.name() + " WAL " + fromSeq + ".." + toSeq;
    Optional<Table> reloaded;
    try {
      reloaded = locator.locate(catalogs.catalog(tableWal.catalogId()), tableWal);
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
      throw SeException.unavailable("catalog '" + tableWal.catalogId() + "' failed the " + what + " ("
          + failure.getClass().getSimpleName() + ") and the table could not be reloaded to tell whether it "
          + "landed; its files are kept", failure);
    }
    if (reloaded.isPresent()) {
      Table now = reloaded.get();
      List<String> written = changes.writtenLocations();
      boolean landed;
      try {
        // With no file of its own, a commit is known by its id: the mark alone cannot tell it
        // from another pass's commit of the same range.
        Long since = base == null ? null : base.snapshotId();
        landed = written.isEmpty()
            ? CommitOutcome.summarized(now, since, TableProperties.SUMMARY_COMMIT_ID, commitId)
            : CommitOutcome.added(now, since, written);
      } catch (RuntimeException e) {
        failure.addSuppressed(e);
        throw SeException.unavailable("catalog '" + tableWal.catalogId() + "' failed the " + what + " ("
            + failure.getClass().getSimpleName() + ") and the reloaded table could not be read to tell whether "
            + "it landed (" + e.getMessage() + "); its files are kept", failure);
      }
      if (landed) {
        LOG.warn("{} reported {} but landed; counted as committed", what, failure.getClass().getSimpleName());
        return new Attempt(CommitState.COMMITTED, changes, walRows);
      }
      boolean superseded = markOf(now, slice) >= toSeq;
      if (CommitOutcome.cleanable(failure) || superseded) {
        Cleanup.deleteQuietly(table.io(), written);
      } else {
        LOG.warn("{} failed with unknown outcome ({}) and is not in the table; {} files left for orphan cleanup",
            what, failure.getClass().getSimpleName(), written.size());
      }
      if (superseded) {
        return new Attempt(CommitState.RESTART, changes, walRows);
      }
    } else if (CommitOutcome.cleanable(failure)) {
      Cleanup.deleteQuietly(table.io(), changes.writtenLocations());
    }
    if (reloaded.isEmpty() || failure instanceof ValidationException || failure instanceof CommitFailedException
        || failure instanceof CommitStateUnknownException) {
      LOG.debug("{} not committed, restarting: {}", what, failure.getMessage());
      return new Attempt(CommitState.RESTART, changes, walRows);
    }
    if (failure instanceof SeException e) {
      throw e;
    }
    throw SeException.unavailable("catalog '" + tableWal.catalogId() + "' failed to commit table "
        + table.name() + ": " + failure.getClass().getSimpleName(), failure);
  }

  /**
   * Records a segment that cannot be staged next to the table's WAL ({@link
   * TableWal#quarantineKey}), so that operators see which segment and why without reading logs;
   * the table's passes keep failing on it (nothing acknowledged is skipped silently) while every
   * other table goes on. Best effort: the pass fails either way.
   */
  private void quarantine(TableWal tableWal, Table table, WalFrameRunReader.CorruptFrameException e) {
    LOG.error("table {} ({} of catalog {}): WAL segment {} quarantined, its passes fail until it is "
        + "repaired or removed: {}", table.name(), tableWal.tableUuid(), tableWal.catalogId(), e.seq(),
        e.problem());
    String key = tableWal.quarantineKey(e.seq());
    try {
      if (clusterStore.head(key).isEmpty()) {
        com.fasterxml.jackson.databind.node.ObjectNode record = io.storageengine.common.Json.object();
        record.put("seq", e.seq());
        record.put("segment", tableWal.segmentKey(e.seq()));
        record.put("table", table.name());
        record.put("problem", e.problem());
        record.put("quarantined_at", java.time.Instant.now().toString());
        clusterStore.putIfAbsent(key, io.storageengine.common.Json.toBytes(record));
      }
    } catch (RuntimeException failure) {
      LOG.warn("could not record the quarantine of WAL segment {} at {}: {}", e.seq(), key,
          failure.getMessage());
    }
  }

  private static void commitAppend(Table table, long highWaterMark, long toSeq, TableChanges changes,
      String commitId) {
    AppendFiles append = ManifestThreads.commit(CommitOutcome.checkingLanded(table).newAppend(), table,
        table.currentSnapshot());
    for (DataFile f : changes.dataFiles()) {
      append.appendFile(f);
    }
    append.set(TableProperties.SUMMARY_WAL_SEQ, Long.toString(toSeq));
    append.set(TableProperties.SUMMARY_COMMIT_ID, commitId);
    append.validateWith(WalHighWaterMark.expecting(highWaterMark));
    append.commit();
  }

  private static void commitRowDelta(Table table, Snapshot base, long highWaterMark, long toSeq,
      TableChanges changes, String commitId) {
    RowDelta delta = ManifestThreads.commit(changes.rowDelta(table, base), table, base);
    delta.conflictDetectionFilter(changes.conflictFilter())
        .validateNoConflictingDataFiles()
        .validateNoConflictingDeleteFiles()
        .validateDeletedFiles();
    if (!changes.referencedDataFiles().isEmpty()) {
      delta.validateDataFilesExist(changes.referencedDataFiles());
    }
    delta.set(TableProperties.SUMMARY_WAL_SEQ, Long.toString(toSeq));
    delta.set(TableProperties.SUMMARY_COMMIT_ID, commitId);
    delta.validateWith(WalHighWaterMark.expecting(highWaterMark));
    delta.commit();
  }

  /** Runs a catalog call; anything but a missing table means the catalog is unavailable. */
  private static <T> T catalogCall(TableWal tableWal, java.util.function.Supplier<T> call) {
    try {
      return call.get();
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw SeException.unavailable("catalog '" + tableWal.catalogId() + "' is unavailable: "
          + e.getClass().getSimpleName(), e);
    }
  }
}

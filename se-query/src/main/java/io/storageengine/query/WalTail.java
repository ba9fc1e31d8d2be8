package io.storageengine.query;

import io.storageengine.catalog.TableSettings;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acknowledged WAL segments of a table that its snapshot does not include yet, as what a
 * query's view reads next to the snapshot's data files ("read your own writes").
 *
 * <p>The tail of a snapshot whose {@code se.wal.seq} is {@code H} is what reconciliation will
 * commit next: the segments {@code H+1, H+2, ...} up to the first one missing (a writer creates a
 * segment atomically and acknowledges it only afterwards, so a present segment is complete; a
 * slot a writer has not created yet ends the tail, exactly where a reconcile pass stops).
 * Segments seen once are remembered, so a query pays one store read per table for the tail's end
 * (a not-found when nothing new arrived), plus one read per new segment; when a frame carries a
 * producer, one de-duplication pass over the new segments ({@link ProducerDedup.Pass}) adds one
 * read of {@code producers.json} (an entity table's next layer resumes the pass of the layer
 * before, reading none).
 *
 * <p>What the tail adds is computed by reconciliation's own code ({@link WalTailRows}) and kept
 * as Parquet files in the DuckDB runtime's file cache under the tenant:
 * <ul>
 *   <li>append tables: one file per segment and read schema (a segment never changes, so it is
 *       staged once);</li>
 *   <li>entity tables: the fold of the tail with the snapshot's current rows and tombstones (the
 *       keys' final rows), kept in layers by {@link EntityTailFolds}: a new segment is folded
 *       onto the layers before it; plus the positions of the snapshot's rows (and earlier
 *       layers' rows) they replace or delete, which the view removes as it removes deletion
 *       vectors. A new snapshot folds again.</li>
 * </ul>
 *
 * <p>A remembered segment that has meanwhile been collected (it was reconciled, so the query's
 * snapshot is stale) fails the plan with {@link SnapshotExpiredException}, which re-plans a query
 * without pins on the new snapshot. A segment that cannot be read or, on an append table, staged
 * (corrupt, or frames without field ids: reconciliation quarantines it and stops there as well)
 * ends the tail before it, with one warning, so the table stays queryable; an entity table's
 * fold that fails on a segment's frames fails the query with reconciliation's message.
 */
final class WalTail {
  static final int MAX_REMEMBERED_SEGMENTS = 100_000;
  private static final Logger LOG = LoggerFactory.getLogger(WalTail.class);

  private record SegmentKey(TableWal table, long seq) {}

  /**
   * What a tail adds to a snapshot: {@code files} to read next to its data files, {@code
   * replacedPositions} (by local path) to remove from them, and the last seq read.
   */
  record Read(long throughSeq, List<PlannedFile> files, Map<String, long[]> replacedPositions) {}

  private final WalLog wal;
  private final DuckRuntime duckdb;
  private final WalTailRows rows;
  /**
   * Segments known to exist and read once (TRUE), or refused by staging (FALSE, warned once); a
   * segment never changes once created.
   */
  private final Map<SegmentKey, Boolean> seen = new LruMap<>(MAX_REMEMBERED_SEGMENTS);
  private final EntityTailFolds entityFolds;

  /** @param rows computes what segments add, with reconciliation's code */
  WalTail(WalLog wal, DuckRuntime duckdb, WalTailRows rows) {
    this.wal = wal;
    this.duckdb = duckdb;
    this.rows = rows;
    this.entityFolds = new EntityTailFolds(duckdb.files(), rows);
  }

  /** Whether the tail of entity tables is read (else they are read at their snapshot only). */
  boolean readsEntities() {
    return rows.foldsEntities();
  }

  /**
   * What the segments of {@code table} after {@code afterSeq} (the se.wal.seq of {@code snapshot},
   * null: none) add, read with {@code schema}: through {@code throughSeq} when given (a pinned
   * read; a segment gone is {@link SnapshotExpiredException}), else up to the first missing one.
   * Leases on the files are added to {@code leases}.
   */
  Read read(String catalogId, String displayName, Table table, Snapshot snapshot, Schema schema, boolean entity,
      long afterSeq, Long throughSeq, List<DataFileCache.Lease> leases) {
    TableWal tableWal = new TableWal(catalogId, table.uuid());
    Map<Long, WalSegment> fresh = new HashMap<>();
    long last = segmentsThrough(displayName, tableWal, afterSeq, throughSeq, fresh);
    if (last == afterSeq) {
      return new Read(afterSeq, List.of(), Map.of());
    }
    // Frames of idempotent writes that an earlier frame already carries are skipped, as
    // reconciliation skips them; a segment's rows depend only on the segments before it. One
    // pass over the tail's new segments (ProducerDedup.Pass): producers.json is read once.
    Duration producerRetention = TableSettings.producerRetention(table);
    LongFunction<WalSegment> segments = seq -> segment(displayName, tableWal, seq, fresh);
    if (!entity) {
      ProducerDedup.Pass dedup = new ProducerDedup.Pass(wal, tableWal, producerRetention, ProducerDedup.State.START,
          segments);
      List<PlannedFile> files = new ArrayList<>();
      long staged = afterSeq;
      for (long seq = afterSeq + 1; seq <= last; seq++) {
        String name = "wal-segment:" + table.uuid() + ":" + seq + ":schema-" + schema.schemaId();
        long segmentSeq = seq;
        DataFileCache.Lease lease;
        try {
          lease = duckdb.files().acquire(catalogId, name, target -> rows.writeAppendRows(catalogId,
              schema, List.of(dedup.withoutDuplicates(segments.apply(segmentSeq))), target));
        } catch (SeException e) {
          if (throughSeq != null || !refusedByReconcile(e)) {
            throw e;
          }
          broken(displayName, new SegmentKey(tableWal, seq), e);
          break;
        }
        leases.add(lease);
        files.add(new PlannedFile(name, lease.path().toString(), new long[0]));
        staged = seq;
      }
      return new Read(staged, files, Map.of());
    }
    if (schema.schemaId() != table.schema().schemaId()) {
      // The fold works on the table's current schema, as reconciliation does.
      throw SnapshotExpiredException.schemaChanged(displayName);
    }
    EntityTailFolds.Read fold = entityFolds.read(catalogId, table, snapshot, afterSeq, last,
        new EntityTailFolds.Segments() {
          @Override
          public WalSegment segment(long seq) {
            return segments.apply(seq);
          }

          @Override
          public ProducerDedup.Pass dedup(ProducerDedup.State from) {
            return new ProducerDedup.Pass(wal, tableWal, producerRetention, from, segments);
          }
        }, leases);
    return new Read(last, fold.files(), fold.replacedPositions());
  }

  /**
   * The last seq of the tail after {@code afterSeq}; segments read for the first time are put in
   * {@code fresh}.
   */
  private long segmentsThrough(String displayName, TableWal tableWal, long afterSeq, Long throughSeq,
      Map<Long, WalSegment> fresh) {
    long last = afterSeq;
    for (long seq = afterSeq + 1; throughSeq == null || seq <= throughSeq; seq++) {
      SegmentKey key = new SegmentKey(tableWal, seq);
      Boolean state = state(key);
      if (Boolean.TRUE.equals(state)) {
        last = seq;
        continue;
      }
      if (Boolean.FALSE.equals(state)) {
        if (throughSeq != null) {
          throw SeException.internal("table " + displayName + ": WAL segment " + seq + " cannot be read", null);
        }
        break;
      }
      Optional<WalSegment> segment;
      try {
        segment = wal.read(tableWal, seq).map(s -> check(tableWal, s));
      } catch (SeException e) {
        if (throughSeq != null || !refusedByReconcile(e)) {
          throw e;
        }
        broken(displayName, key, e);
        break;
      }
      if (segment.isEmpty()) {
        if (throughSeq != null) {
          throw SnapshotExpiredException.walSegmentGone(displayName, seq);
        }
        break;
      }
      fresh.put(seq, segment.get());
      remember(key);
      last = seq;
    }
    return last;
  }

  /** Segment {@code seq}: read by this query already, or read again (its staged form was evicted). */
  private WalSegment segment(String displayName, TableWal tableWal, long seq, Map<Long, WalSegment> fresh) {
    WalSegment segment = fresh.get(seq);
    if (segment != null) {
      return segment;
    }
    return wal.read(tableWal, seq).map(s -> check(tableWal, s))
        .orElseThrow(() -> SnapshotExpiredException.walSegmentGone(displayName, seq));
  }

  private void broken(String displayName, SegmentKey key, SeException e) {
    if (markBroken(key)) {
      LOG.warn("table {}: queries read the WAL tail only up to segment {}, which cannot be read: {}",
          displayName, key.seq() - 1, e.getMessage());
    }
  }

  /** A segment reconciliation refuses as well (corrupt, or frames it cannot map): INTERNAL or INVALID_ARGUMENT. */
  private static boolean refusedByReconcile(SeException e) {
    return !(e instanceof SnapshotExpiredException)
        && (e.code() == ErrorCode.INTERNAL || e.code() == ErrorCode.INVALID_ARGUMENT);
  }

  /** TRUE: read before; FALSE: cannot be read; null: not seen. */
  private synchronized Boolean state(SegmentKey key) {
    return seen.get(key);
  }

  private synchronized void remember(SegmentKey key) {
    seen.put(key, Boolean.TRUE);
  }

  /** Marks {@code key} as a segment that cannot be read; true the first time. */
  private synchronized boolean markBroken(SegmentKey key) {
    return !Boolean.FALSE.equals(seen.put(key, Boolean.FALSE));
  }

  private static WalSegment check(TableWal tableWal, WalSegment segment) {
    if (!tableWal.tableUuid().equals(segment.tableUuid())) {
      throw SeException.internal("WAL segment " + segment.seq() + " of table " + tableWal.tableUuid()
          + " belongs to table " + segment.tableUuid(), null);
    }
    return segment;
  }
}

package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acknowledged WAL segments of an append table that its snapshot does not include yet, as
 * files a query's view reads next to the snapshot's data files ("read your own writes").
 *
 * <p>The tail of a snapshot whose {@code se.wal.seq} is {@code H} is what reconciliation will
 * commit next: the segments {@code H+1, H+2, ...} up to the first one missing (a writer creates a
 * segment atomically and acknowledges it only afterwards, so a present segment is complete; a
 * slot a writer has not created yet ends the tail, exactly where a reconcile pass stops).
 *
 * <p>A segment is immutable, so its rows are staged once ({@link WalTailRows}, reconciliation's
 * own staging) into a Parquet file kept in the DuckDB runtime's file cache under the tenant, per
 * segment and read schema. Segments seen once are remembered, so a query pays one store read per
 * table for the tail's end (a not-found when nothing new arrived), plus one read and one staging
 * per new segment. A remembered segment whose staged file was evicted and which has meanwhile
 * been collected (it was reconciled, so the query's snapshot is stale) fails the plan with
 * {@link SnapshotExpiredException}, which re-plans a query without pins on the new snapshot.
 *
 * <p>A segment that cannot be staged (corrupt, or frames without field ids: reconciliation
 * quarantines it and stops there as well) ends the tail before it, with one warning, so the
 * table stays queryable.
 */
final class WalTail {
  static final int MAX_REMEMBERED_SEGMENTS = 100_000;
  private static final Logger LOG = LoggerFactory.getLogger(WalTail.class);

  private record SegmentKey(TableWal table, long seq) {}

  private final WalLog wal;
  private final DuckRuntime duckdb;
  private final BufferAllocator allocator;
  private final int threads;
  /**
   * Segments known to exist and staged once (TRUE), or refused by staging (FALSE, warned once); a
   * segment never changes once created.
   */
  private final Map<SegmentKey, Boolean> seen = new LruMap<>(MAX_REMEMBERED_SEGMENTS);

  /**
   * @param threads DuckDB worker threads that stage a segment
   */
  WalTail(WalLog wal, DuckRuntime duckdb, BufferAllocator allocator, int threads) {
    this.wal = wal;
    this.duckdb = duckdb;
    this.allocator = allocator;
    this.threads = threads;
  }

  /**
   * Adds to {@code out} the staged files of the segments of {@code table} after
   * {@code afterSeq}, read with {@code schema}: through {@code throughSeq} when given (a pinned
   * read; a segment gone is {@link SnapshotExpiredException}), else up to the first missing one.
   * Leases on the files are added to {@code leases}. Returns the last seq included
   * ({@code afterSeq} when none).
   */
  long files(String catalogId, String displayName, Table table, Schema schema, long afterSeq, Long throughSeq,
      List<PlannedFile> out, List<DataFileCache.Lease> leases) {
    TableWal tableWal = new TableWal(catalogId, table.uuid());
    long last = afterSeq;
    for (long seq = afterSeq + 1; throughSeq == null || seq <= throughSeq; seq++) {
      SegmentKey key = new SegmentKey(tableWal, seq);
      try {
        PlannedFile file = file(catalogId, displayName, table, schema, tableWal, key, throughSeq != null, leases);
        if (file == null) {
          break;
        }
        out.add(file);
      } catch (SeException e) {
        if (throughSeq != null || !refusedByReconcile(e)) {
          throw e;
        }
        // Reconciliation stops at this segment too (it quarantines it): the tail ends before it.
        if (markBroken(key)) {
          LOG.warn("table {}: queries read the WAL tail only up to segment {}, which cannot be staged: {}",
              displayName, seq - 1, e.getMessage());
        }
        break;
      }
      last = seq;
    }
    return last;
  }

  /** The staged file of one segment, or null when it does not exist (the end of the tail). */
  private PlannedFile file(String catalogId, String displayName, Table table, Schema schema, TableWal tableWal,
      SegmentKey key, boolean pinned, List<DataFileCache.Lease> leases) {
    long seq = key.seq();
    Boolean state = state(key);
    if (Boolean.FALSE.equals(state) && !pinned) {
      throw SeException.internal("WAL segment " + seq + " cannot be staged (see the earlier warning)", null);
    }
    WalSegment read = null;
    if (state == null) {
      Optional<WalSegment> segment = wal.read(tableWal, seq);
      if (segment.isEmpty()) {
        if (pinned) {
          throw gone(displayName, seq);
        }
        return null;
      }
      read = check(tableWal, segment.get());
    }
    String name = "wal-segment:" + table.uuid() + ":" + seq + ":schema-" + schema.schemaId();
    WalSegment known = read;
    DataFileCache.Lease lease = duckdb.files().acquire(catalogId, name, target -> {
      WalSegment segment = known != null ? known
          : wal.read(tableWal, seq).map(s -> check(tableWal, s)).orElseThrow(() -> gone(displayName, seq));
      WalTailRows.writeAppendRows(duckdb, allocator, threads, catalogId, schema, List.of(segment), target);
    });
    remember(key);
    leases.add(lease);
    return new PlannedFile(name, lease.path().toString(), new long[0]);
  }

  /** A segment reconciliation refuses as well (corrupt, or frames it cannot map): INTERNAL or INVALID_ARGUMENT. */
  private static boolean refusedByReconcile(SeException e) {
    return !(e instanceof SnapshotExpiredException)
        && (e.code() == ErrorCode.INTERNAL || e.code() == ErrorCode.INVALID_ARGUMENT);
  }

  /** TRUE: staged before; FALSE: cannot be staged; null: not seen. */
  private synchronized Boolean state(SegmentKey key) {
    return seen.get(key);
  }

  private synchronized void remember(SegmentKey key) {
    seen.put(key, Boolean.TRUE);
  }

  /** Marks {@code key} as a segment that cannot be staged; true the first time. */
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

  private static SnapshotExpiredException gone(String displayName, long seq) {
    return SnapshotExpiredException.walSegmentGone(displayName, seq);
  }
}

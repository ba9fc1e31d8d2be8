package io.storageengine.query;

import io.storageengine.catalog.TableSettings;
import io.storageengine.common.Cancel;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.reconcile.WalHighWaterMark;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBConnection;
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
 *       staged once). A segment not staged yet is read straight from its Arrow frames by the
 *       query that first needs it ({@link #read} with {@code inline}, then {@link #load}): the
 *       same staging decodes, checks and conforms them, but into a table of the query's own
 *       catalog, through DuckDB's Arrow scan, with no DuckDB session of its own and no file
 *       written; the Parquet file is then written in the background, a second later (not while
 *       the queries right after compete for the cores), for the queries after that, unless a query
 *       has meanwhile planned on a snapshot that includes the segment (then nothing reads the
 *       file any more, and it is not written). At
 *       most {@value #INLINE_MAX_BYTES} bytes of frames per table and query are read that way;
 *       the new segments beyond them (a long tail after a restart) are staged by the query as
 *       before, since their files are what every later query reads;</li>
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
final class WalTail implements AutoCloseable {
  static final int MAX_REMEMBERED_SEGMENTS = 100_000;
  static final int MAX_REMEMBERED_TABLES = 10_000;
  /** Bytes of Arrow frames of new append segments a query reads inline per table (see the class comment). */
  static final long INLINE_MAX_BYTES = 16L << 20;
  /**
   * Bytes of frames of append segments waiting to be staged in the background (held in memory
   * until then); beyond it a segment is not queued, and a later query reads it inline again.
   */
  static final long MAX_QUEUED_STAGING_BYTES = 64L << 20;
  /**
   * Bytes of frames of the segments a query keeps from finding the tail's end for the rest of its
   * read; the segments after them are read again when they are staged or folded, one at a time,
   * so a long tail (gigabytes after a stalled reconciliation) is never held in memory whole.
   */
  static final long MAX_KEPT_BYTES = 64L << 20;
  /**
   * Bytes of frames of the segments folds for some keys ({@link EntityTailFolds#readKeys}) read
   * last (of all tables; at most {@value #MAX_RECENT_SEGMENTS} of them) kept for the next such
   * folds: each reads its whole tail again, segments a query read before included. Other reads
   * neither use nor fill them. Segments never change once written; a table's are dropped once a
   * query finds them reconciled.
   */
  static final long MAX_RECENT_BYTES = 128L << 20;
  /**
   * Bytes of frames a tail may have and still be folded for some keys alone
   * ({@link EntityTailFolds#readKeys}), which stages all of them on every query; a longer tail
   * grows the kept fold instead, whose steps the queries after reuse.
   */
  static final long MAX_KEY_FOLD_BYTES = MAX_RECENT_BYTES;
  /** Segments kept among those read last, at most. */
  static final int MAX_RECENT_SEGMENTS = 4_096;
  /** How long after its first inline read a segment is staged in the background. */
  static final long STAGING_DELAY_MILLIS = 1_000;
  private static final Logger LOG = LoggerFactory.getLogger(WalTail.class);

  private record SegmentKey(TableWal table, long seq) {}

  /** What {@link #seen} holds for a segment that cannot be read. */
  private static final long BROKEN = -1;

  /**
   * What a tail adds to a snapshot: {@code files} to read next to its data files, {@code
   * replacedPositions} (by local path) to remove from them, and the last seq read.
   */
  record Read(long throughSeq, List<PlannedFile> files, Map<String, long[]> replacedPositions, List<Part> parts,
      List<String> tables, String foldedKeys) {
    Read(long throughSeq, List<PlannedFile> files, Map<String, long[]> replacedPositions) {
      this(throughSeq, files, replacedPositions, List.of(), List.of(), null);
    }

    Read(long throughSeq, List<PlannedFile> files, Map<String, long[]> replacedPositions, List<Part> parts,
        List<String> tables) {
      this(throughSeq, files, replacedPositions, parts, tables, null);
    }

    /** Whether segments remain to be loaded on the query's connection ({@link #load}). */
    boolean loadsInline() {
      return parts.stream().anyMatch(part -> part.file() == null);
    }
  }

  /**
   * One segment of an append tail still to be loaded ({@link #load}), in seq order: its staged
   * {@code file} or, when null, its frames ({@code segment}, producer duplicates removed) and the
   * name its staged form is cached under.
   */
  record Part(long seq, PlannedFile file, WalSegment segment, String name) {}

  private final WalLog wal;
  private final DuckRuntime duckdb;
  private final WalTailRows rows;
  /**
   * Segments known to exist and read once, with their bytes of frames, or refused by staging
   * ({@link #BROKEN}, warned once); a segment never changes once created.
   */
  private final Map<SegmentKey, Long> seen = new LruMap<>(MAX_REMEMBERED_SEGMENTS);
  /**
   * Per table, the highest {@code se.wal.seq} of a snapshot a query planned on: segments at or
   * below it are in a snapshot, and their background staging is skipped (no query reads their
   * staged file any more, unless pinned to an older snapshot, which then stages it itself).
   */
  private final Map<TableWal, Long> reconciledThrough = new LruMap<>(MAX_REMEMBERED_TABLES);
  /** Segments read last, least recently used first ({@link #MAX_RECENT_BYTES}); guarded by this. */
  private final LinkedHashMap<SegmentKey, WalSegment> recent = new LinkedHashMap<>(16, 0.75f, true);
  private long recentBytes;
  /** {@link #MAX_KEY_FOLD_BYTES}, or less in tests. */
  private volatile long maxKeyFoldBytes = MAX_KEY_FOLD_BYTES;
  private final EntityTailFolds entityFolds;
  /**
   * Stages inline-read segments to the file cache, one at a time, in the background, each
   * {@link #STAGING_DELAY_MILLIS} after the query that first read it inline: not while that
   * query and the ones right after it run (on a busy machine staging competes with them for the
   * same cores), but soon enough that the queries after read the file.
   */
  private final ScheduledThreadPoolExecutor stagings = Threads.scheduledPool(1, Threads.daemon("se-wal-tail-staging"));
  /** Cache names of segments queued or being staged in the background. */
  private final Set<String> staging = ConcurrentHashMap.newKeySet();
  /** Frame bytes of the segments in {@link #staging}. */
  private final AtomicLong queuedBytes = new AtomicLong();
  private volatile long stagingDelayMillis = STAGING_DELAY_MILLIS;
  private volatile long maxKeptBytes = MAX_KEPT_BYTES;
  /** Segments loaded inline so far (for tests). */
  private final AtomicLong inlineLoads = new AtomicLong();
  /** Background stagings skipped because their segment was reconciled meanwhile (for tests). */
  private final AtomicLong skippedStagings = new AtomicLong();
  /** DuckDB tables made from inline segments so far (for tests). */
  private final AtomicLong inlineTables = new AtomicLong();

  /** @param rows computes what segments add, with reconciliation's code */
  WalTail(WalLog wal, DuckRuntime duckdb, WalTailRows rows) {
    this.wal = wal;
    this.duckdb = duckdb;
    this.rows = rows;
    this.entityFolds = new EntityTailFolds(duckdb.files(), rows);
    this.stagings.setRemoveOnCancelPolicy(true);
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
    return read(catalogId, displayName, table, snapshot, schema, entity, afterSeq, throughSeq, leases, false,
        Cancel.never());
  }

  /**
   * As above; with {@code inline}, append segments not staged yet are left to {@link #load} on
   * the query's connection ({@link Read#loadsInline}), up to {@value #INLINE_MAX_BYTES} bytes of
   * frames, instead of being staged here. {@code cancel} stops the read between segments and an
   * entity tail's fold in flight (failing with its reason).
   */
  Read read(String catalogId, String displayName, Table table, Snapshot snapshot, Schema schema, boolean entity,
      long afterSeq, Long throughSeq, List<DataFileCache.Lease> leases, boolean inline, Cancel cancel) {
    return read(catalogId, displayName, table, snapshot, schema, entity, afterSeq, throughSeq, leases, inline, cancel,
        false);
  }

  /**
   * The snapshot an entity table's query of its {@code current} snapshot reads instead, with the
   * tail's fold kept on it ({@link EntityTailFolds#carriedBase}; read it with {@code carried}),
   * or null.
   */
  Snapshot carriedBase(String catalogId, Table table, Snapshot current) {
    return current == null ? null
        : entityFolds.carriedBase(catalogId, table, current, WalHighWaterMark.of(table, current),
            System.currentTimeMillis());
  }

  /**
   * As above; with {@code carried} ({@code snapshot} from {@link #carriedBase}), null when the
   * fold kept on it cannot be extended without folding the whole tail (see
   * {@link EntityTailFolds#read}): the query reads the current snapshot then.
   */
  Read read(String catalogId, String displayName, Table table, Snapshot snapshot, Schema schema, boolean entity,
      long afterSeq, Long throughSeq, List<DataFileCache.Lease> leases, boolean inline, Cancel cancel,
      boolean carried) {
    return read(catalogId, displayName, table, snapshot, schema, entity, afterSeq, throughSeq, leases, inline, cancel,
        carried, null);
  }

  /**
   * As above; for an entity table read by a query that reads no key but those {@code keyFilter}
   * selects (its DuckDB predicate over the key columns, see {@link FilterPushdown#keyFilter}; null:
   * any key), the tail is folded for those keys alone unless the kept fold already ends at the
   * tail's end ({@link EntityTailFolds#readKeys}) or the tail holds more than
   * {@value #MAX_KEY_FOLD_BYTES} bytes of frames (then as without {@code keyFilter}); with
   * {@code carried}, null unless the kept fold ends there (the query then reads the current
   * snapshot, its tail folded for those keys).
   */
  Read read(String catalogId, String displayName, Table table, Snapshot snapshot, Schema schema, boolean entity,
      long afterSeq, Long throughSeq, List<DataFileCache.Lease> leases, boolean inline, Cancel cancel,
      boolean carried, FilterPushdown.KeyFilter keyFilter) {
    TableWal tableWal = new TableWal(catalogId, table.uuid());
    reconciled(tableWal, afterSeq);
    Map<Long, WalSegment> fresh = new HashMap<>();
    long last = segmentsThrough(displayName, tableWal, afterSeq, throughSeq, fresh, cancel);
    if (carried && last == afterSeq) {
      return null; // the kept fold's segments were collected
    }
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
      List<Part> parts = new ArrayList<>();
      long inlineBytes = 0;
      long staged = afterSeq;
      for (long seq = afterSeq + 1; seq <= last; seq++) {
        cancel.check();
        String name = "wal-segment:" + table.uuid() + ":" + seq + ":schema-" + schema.schemaId();
        long segmentSeq = seq;
        DataFileCache.Lease lease = inline ? duckdb.files().leaseIfPresent(catalogId, name).orElse(null) : null;
        if (lease == null && inline) {
          WalSegment segment = segments.apply(seq);
          long bytes = segment.frameBytes();
          if (inlineBytes + bytes <= INLINE_MAX_BYTES) {
            inlineBytes += bytes;
            parts.add(new Part(seq, null, dedup.withoutDuplicates(segment), name));
            staged = seq;
            continue;
          }
        }
        if (lease == null) {
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
        }
        leases.add(lease);
        PlannedFile file = new PlannedFile(name, lease.path().toString(), new long[0]);
        files.add(file);
        parts.add(new Part(seq, file, null, name));
        staged = seq;
      }
      boolean anyInline = parts.stream().anyMatch(part -> part.file() == null);
      return new Read(staged, files, Map.of(), anyInline ? List.copyOf(parts) : List.of(), List.of());
    }
    if (schema.schemaId() != table.schema().schemaId()) {
      // The fold works on the table's current schema, as reconciliation does.
      throw SnapshotExpiredException.schemaChanged(displayName);
    }
    // A tail of some keys is folded for them alone while it fits in the segments kept in memory;
    // only such folds, which read the whole tail on every query, keep what they read there.
    long tailBytes = keyFilter == null ? -1 : bytes(tableWal, afterSeq + 1, last);
    boolean byKeys = keyFilter != null && tailBytes >= 0 && tailBytes <= maxKeyFoldBytes;
    LongFunction<WalSegment> reads = byKeys ? seq -> recentSegment(displayName, tableWal, seq, fresh) : segments;
    EntityTailFolds.Segments tail = new EntityTailFolds.Segments() {
      @Override
      public WalSegment segment(long seq) {
        return reads.apply(seq);
      }

      @Override
      public ProducerDedup.Pass dedup(ProducerDedup.State from) {
        return new ProducerDedup.Pass(wal, tableWal, producerRetention, from, reads);
      }
    };
    EntityTailFolds.Read fold = byKeys
        ? entityFolds.readKeys(catalogId, table, snapshot, afterSeq, last, tail, tailBytes, keyFilter, leases, cancel,
            carried)
        : entityFolds.read(catalogId, table, snapshot, afterSeq, last, tail, leases, cancel, carried);
    return fold == null ? null
        : new Read(last, fold.files(), fold.replacedPositions(), List.of(), List.of(), fold.foldedKeys());
  }

  /**
   * Whether the entity table {@code tableUuid} of {@code catalogId} has a fold kept and the WAL
   * segment after its end exists: the next read of the whole table would fold it. One existence
   * check on the store (a HEAD, not a read) when that segment is not known yet. Never throws: a segment that cannot be read counts as
   * there (the fold reports it).
   */
  boolean foldBehind(String catalogId, UUID tableUuid) {
    TableWal tableWal = new TableWal(catalogId, tableUuid);
    long through = entityFolds.keptThrough(tableWal);
    if (through < 0) {
      return false;
    }
    SegmentKey next = new SegmentKey(tableWal, through + 1);
    Long state = state(next);
    if (state != null) {
      return state != BROKEN;
    }
    try {
      return wal.exists(tableWal, through + 1);
    } catch (RuntimeException e) {
      return true;
    }
  }

  /**
   * Loads the segments {@code read} left inline ({@link Read#loadsInline}) on {@code connection}
   * (the query's, its catalog in use) into tables named {@code tablePrefix} and a number, with
   * {@code schema} (the read schema {@code read} was made with); returns what the query reads:
   * the staged files and those tables, through the last seq loaded. All the inline segments go
   * into one table by one staging (one table and one insert per run of frames with one Arrow
   * schema, whatever the number of segments: a query pays DuckDB's statement costs once, not per
   * segment). When staging refuses them, they are loaded one by one instead, and the segment it
   * refuses ends the tail before it with one warning, as {@link #read} does, unless the read is
   * {@code pinned} (then it fails). Each loaded segment is then staged to the file cache in the
   * background.
   */
  Read load(DuckDBConnection connection, String catalogId, String displayName, UUID tableUuid, Schema schema,
      Read read, String tablePrefix, boolean pinned) {
    if (!read.loadsInline()) {
      return read;
    }
    List<Part> inlineParts = read.parts().stream().filter(part -> part.file() == null).toList();
    String together = tablePrefix + 0;
    try {
      rows.loadAppendRows(connection, catalogId, schema, inlineParts.stream().map(Part::segment).toList(), together);
      inlineTables.incrementAndGet();
    } catch (SeException e) {
      if (pinned || !refusedByReconcile(e)) {
        throw e;
      }
      dropQuietly(connection, together);
      return loadEach(connection, catalogId, displayName, tableUuid, schema, read, tablePrefix);
    }
    List<PlannedFile> files = new ArrayList<>();
    for (Part part : read.parts()) {
      if (part.file() != null) {
        files.add(part.file());
      } else {
        inlineLoads.incrementAndGet();
        stageLater(catalogId, tableUuid, schema, part);
      }
    }
    return new Read(read.parts().get(read.parts().size() - 1).seq(), files, Map.of(), List.of(), List.of(together));
  }

  /** {@link #load} one segment per table: finds the segment staging refuses, which ends the tail. */
  private Read loadEach(DuckDBConnection connection, String catalogId, String displayName, UUID tableUuid,
      Schema schema, Read read, String tablePrefix) {
    List<PlannedFile> files = new ArrayList<>();
    List<String> tables = new ArrayList<>();
    long through = read.parts().get(0).seq() - 1;
    for (Part part : read.parts()) {
      if (part.file() != null) {
        files.add(part.file());
        through = part.seq();
        continue;
      }
      String table = tablePrefix + tables.size();
      try {
        rows.loadAppendRows(connection, catalogId, schema, List.of(part.segment()), table);
      } catch (SeException e) {
        if (!refusedByReconcile(e)) {
          throw e;
        }
        dropQuietly(connection, table);
        broken(displayName, new SegmentKey(new TableWal(catalogId, tableUuid), part.seq()), e);
        break;
      }
      tables.add(table);
      inlineTables.incrementAndGet();
      inlineLoads.incrementAndGet();
      through = part.seq();
      stageLater(catalogId, tableUuid, schema, part);
    }
    return new Read(through, files, Map.of(), List.of(), tables);
  }

  /** Drops {@code table} (a qualified name) a failed load may have left with some of its rows. */
  private static void dropQuietly(DuckDBConnection connection, String table) {
    try (java.sql.Statement statement = connection.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS " + table);
    } catch (java.sql.SQLException e) {
      // The query catalog is detached with the query; an unread table in it does no harm.
      LOG.debug("cannot drop {}: {}", table, e.toString());
    }
  }

  /**
   * Stages {@code part}'s segment to the file cache in the background, unless queued already or,
   * when its time comes, in a snapshot a query has planned on since ({@link #reconciledThrough}).
   */
  private void stageLater(String catalogId, UUID tableUuid, Schema schema, Part part) {
    TableWal tableWal = new TableWal(catalogId, tableUuid);
    if (!staging.add(part.name())) {
      return;
    }
    long bytes = part.segment().frameBytes();
    if (queuedBytes.addAndGet(bytes) > MAX_QUEUED_STAGING_BYTES) {
      queuedBytes.addAndGet(-bytes);
      staging.remove(part.name());
      return;
    }
    try {
      stagings.schedule(() -> {
        if (reconciledThrough(tableWal) >= part.seq()) {
          skippedStagings.incrementAndGet();
          queuedBytes.addAndGet(-bytes);
          staging.remove(part.name());
          return;
        }
        try (DataFileCache.Lease ignored = duckdb.files().acquire(catalogId, part.name(),
            target -> rows.writeAppendRows(catalogId, schema, List.of(part.segment()), target))) {
          // Kept by the cache for the next query; nothing to hold here.
        } catch (RuntimeException e) {
          // The next query that needs it reads it inline again (or stages it, and reports).
          LOG.debug("background staging of {} failed: {}", part.name(), e.toString());
        } finally {
          queuedBytes.addAndGet(-bytes);
          staging.remove(part.name());
        }
      }, stagingDelayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // A closed engine: nothing is staged any more.
      queuedBytes.addAndGet(-bytes);
      staging.remove(part.name());
    }
  }

  /** How many segments queries loaded inline so far (for tests). */
  long inlineLoads() {
    return inlineLoads.get();
  }

  /** How many background stagings were skipped as reconciled (for tests). */
  long skippedStagings() {
    return skippedStagings.get();
  }

  /** Runs the background stagings queued so far now, on the calling thread (for tests). */
  void runStagingsNow() {
    for (Runnable task : stagings.getQueue().toArray(new Runnable[0])) {
      if (stagings.remove(task)) {
        task.run();
      }
    }
  }

  /** How many DuckDB tables queries loaded inline segments into so far (for tests). */
  long inlineTables() {
    return inlineTables.get();
  }

  /** Stages inline-read segments {@code millis} after their first read instead (for tests). */
  void stagingDelay(long millis) {
    stagingDelayMillis = millis;
  }

  /** Keeps at most {@code bytes} of a query's segments from finding the tail's end instead (for tests). */
  void keptBytes(long bytes) {
    maxKeptBytes = bytes;
  }

  /** The entity tails' folds (for tests). */
  EntityTailFolds entityFolds() {
    return entityFolds;
  }

  /** Waits until the segments queued for background staging are staged (for tests). */
  void awaitStagings() throws InterruptedException {
    while (!staging.isEmpty()) {
      Thread.sleep(5);
    }
  }

  /**
   * Stops background staging (a segment being staged is left to the cache's own cleanup) and
   * drops the entity folds' states.
   */
  @Override
  public void close() {
    stagings.shutdownNow();
    entityFolds.close();
  }

  /**
   * The last seq of the tail after {@code afterSeq}; segments read for the first time are put in
   * {@code fresh}, up to {@value #MAX_KEPT_BYTES} bytes of frames.
   */
  private long segmentsThrough(String displayName, TableWal tableWal, long afterSeq, Long throughSeq,
      Map<Long, WalSegment> fresh, Cancel cancel) {
    long last = afterSeq;
    long kept = 0;
    for (long seq = afterSeq + 1; throughSeq == null || seq <= throughSeq; seq++) {
      cancel.check();
      SegmentKey key = new SegmentKey(tableWal, seq);
      Long state = state(key);
      if (state != null && state != BROKEN) {
        last = seq;
        continue;
      }
      if (state != null) {
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
      long bytes = segment.get().frameBytes();
      if (kept + bytes <= maxKeptBytes) {
        kept += bytes;
        fresh.put(seq, segment.get());
      }
      remember(key, bytes);
      last = seq;
    }
    return last;
  }

  /**
   * Segment {@code seq}: kept from this query's first read of it (handed out once, then no longer
   * kept), or read again (not kept, handed out before, or read by an earlier query).
   */
  private WalSegment segment(String displayName, TableWal tableWal, long seq, Map<Long, WalSegment> fresh) {
    WalSegment segment = fresh.remove(seq);
    if (segment != null) {
      return segment;
    }
    return wal.read(tableWal, seq).map(s -> check(tableWal, s))
        .orElseThrow(() -> SnapshotExpiredException.walSegmentGone(displayName, seq));
  }

  /** As {@link #segment}, from the segments read last when there, and kept there. */
  private WalSegment recentSegment(String displayName, TableWal tableWal, long seq, Map<Long, WalSegment> fresh) {
    SegmentKey key = new SegmentKey(tableWal, seq);
    WalSegment segment = recent(key);
    if (segment == null) {
      segment = segment(displayName, tableWal, seq, fresh);
    }
    keepRecent(key, segment);
    return segment;
  }

  private synchronized WalSegment recent(SegmentKey key) {
    return recent.get(key);
  }

  /** Keeps {@code segment} among the segments read last, within {@link #MAX_RECENT_BYTES}. */
  private synchronized void keepRecent(SegmentKey key, WalSegment segment) {
    long bytes = segment.frameBytes();
    if (bytes > MAX_RECENT_BYTES / 4 || recent.containsKey(key)) {
      return;
    }
    recent.put(key, segment);
    recentBytes += bytes;
    Iterator<WalSegment> eldest = recent.values().iterator();
    while ((recentBytes > MAX_RECENT_BYTES || recent.size() > MAX_RECENT_SEGMENTS) && eldest.hasNext()) {
      recentBytes -= eldest.next().frameBytes();
      eldest.remove();
    }
  }

  /** Folds a tail for some keys alone up to {@code bytes} of frames (tests). */
  void keyFoldBytes(long bytes) {
    maxKeyFoldBytes = bytes;
  }

  /** Segments kept among those read last, and their bytes of frames (tests). */
  synchronized long[] recentSegments() {
    return new long[] {recent.size(), recentBytes};
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

  private synchronized void reconciled(TableWal table, long seq) {
    reconciledThrough.merge(table, seq, Math::max);
    Iterator<Map.Entry<SegmentKey, WalSegment>> kept = recent.entrySet().iterator();
    while (kept.hasNext()) {
      Map.Entry<SegmentKey, WalSegment> entry = kept.next();
      if (entry.getKey().table().equals(table) && entry.getKey().seq() <= seq) {
        recentBytes -= entry.getValue().frameBytes();
        kept.remove();
      }
    }
  }

  private synchronized long reconciledThrough(TableWal table) {
    return reconciledThrough.getOrDefault(table, -1L);
  }

  /** The segment's bytes of frames when read before, {@link #BROKEN} when it cannot be read, null: not seen. */
  private synchronized Long state(SegmentKey key) {
    return seen.get(key);
  }

  private synchronized void remember(SegmentKey key, long bytes) {
    seen.put(key, bytes);
  }

  /** The bytes of frames of segments {@code first .. last} of {@code table}, or -1 when one was not seen. */
  private synchronized long bytes(TableWal table, long first, long last) {
    long bytes = 0;
    for (long seq = first; seq <= last; seq++) {
      Long known = seen.get(new SegmentKey(table, seq));
      if (known == null || known == BROKEN) {
        return -1;
      }
      bytes += known;
    }
    return bytes;
  }

  /** Marks {@code key} as a segment that cannot be read; true the first time. */
  private synchronized boolean markBroken(SegmentKey key) {
    Long before = seen.put(key, BROKEN);
    return before == null || before != BROKEN;
  }

  private static WalSegment check(TableWal tableWal, WalSegment segment) {
    if (!tableWal.tableUuid().equals(segment.tableUuid())) {
      throw SeException.internal("WAL segment " + segment.seq() + " of table " + tableWal.tableUuid()
          + " belongs to table " + segment.tableUuid(), null);
    }
    return segment;
  }
}

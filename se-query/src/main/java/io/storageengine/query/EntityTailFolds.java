package io.storageengine.query;

import io.storageengine.catalog.TableSlices;
import io.storageengine.common.Cancel;
import io.storageengine.common.Threads;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.reconcile.WalHighWaterMark;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The incremental folds of entity tables' WAL tails, one per table: the tail after a snapshot
 * kept as a list of <em>layers</em>, each the fold of the segments after the layer before onto
 * it ({@link WalTailRows#foldEntityLayer}), so a query that finds one new segment folds that
 * segment only. A query reads every layer's rows file, less the rows a later layer replaces, and
 * the snapshot's files less the rows some layer replaces.
 *
 * <p>A table keeps the fold of one base (snapshot, schema and its {@code se.wal.seq}): a fold on
 * another base (a new snapshot, a schema change) replaces it, and at most
 * {@value #MAX_TABLES} tables are kept (least recently used dropped). What it keeps in memory is
 * the names of the layers' rows files and the positions they replace; the files are in the
 * DuckDB runtime's file cache, which may evict them between queries. Each layer's state (what the
 * next layer folds onto) is a table of the runtime's shared DuckDB database
 * ({@link WalTailRows#newEntityState}), dropped with its layer (in the background): when the
 * fold is replaced or dropped, and, least recently used tables first, while the states of all tables hold more than
 * {@value #MAX_STATE_ROWS} rows. The whole tail is folded again when a layer's file or state is
 * gone, when a new segment has an operation that sorts between earlier ones (an out-of-order
 * version), and after {@value #MAX_LAYERS} layers, which bounds the files a query reads.
 *
 * <p>A fold grows in steps of at most {@link #MAX_LAYER_BYTES} of segment frames, a layer each
 * (the last layer a fold may have takes the rest, and so does the next layer of a fold whose states
 * would hold more than {@value #MAX_STATE_ROWS} rows at the rate of its layers so far: those are
 * not kept), and each layer is kept as soon as it is made:
 * a query stopped by its timeout or its client while it folds a long tail leaves the layers it
 * finished, and the next query goes on from them instead of starting over (before, under a
 * backlog, every query folded the same tail until its timeout and kept nothing). Where an
 * operation sorts between two steps, the whole tail is folded again in steps, and if that fails
 * too, as one layer. One fold per table grows at a time; a query that needs it to grow waits for
 * the one growing it (or its own cancellation) and then extends its layers.
 */
final class EntityTailFolds {
  private static final Logger LOG = LoggerFactory.getLogger(EntityTailFolds.class);
  static final int MAX_LAYERS = 16;
  /**
   * Segment frame bytes a layer folds at most (but the last a fold may have): a long tail is
   * folded in steps, each kept once made.
   */
  static final long MAX_LAYER_BYTES = 64L << 20;
  static final int MAX_TABLES = 32;
  /**
   * Frame bytes of a tail up to which a fold for some keys runs on one DuckDB thread: its twenty
   * statements are short, and a second thread costs more than it brings (a handoff per statement,
   * and each Arrow batch of the staged frames read on a DuckDB thread the JVM must attach):
   * measured on 2 cores, the fold p50 26-33 ms on one thread against 34-36 ms on two.
   */
  static final long ONE_THREAD_KEY_FOLD_BYTES = 1L << 20;
  /**
   * Keys a fold for some keys may select and still run on one thread: the lookup of many keys'
   * snapshot rows reads most files of a large table, where two threads pay (500 keys of a 2 M-key
   * table: query p50 103-108 ms on two, 132-153 ms on one; one key: 47-51 ms on either).
   */
  static final long ONE_THREAD_KEY_FOLD_KEYS = 16;
  /** Rows (keys) of the layer states kept, over all tables. */
  static final long MAX_STATE_ROWS = 4_000_000;
  /** Commits a carried fold's snapshot may be behind the table's current one ({@link #carriedBase}). */
  static final int MAX_CARRIED_COMMITS = 8;
  /** How old a carried fold's snapshot may be ({@link #carriedBase}). */
  static final long MAX_CARRIED_MILLIS = 60_000;
  /**
   * Rows (keys) a carried fold's states may hold ({@link #carriedBase}): a fold carried past
   * commits grows with the whole tail since its snapshot, where a fold on the newest snapshot
   * holds one pass's worth.
   */
  static final long MAX_CARRIED_STATE_ROWS = MAX_STATE_ROWS / 4;

  /** What a fold is of: the tail of {@code afterSeq} on a snapshot (null: none) and schema. */
  private record Base(Long snapshotId, int schemaId, long afterSeq) {}

  /**
   * One layer: the segments through {@code throughSeq}, its rows file's cache name, its state's
   * table, what it replaces, and where the tail's producer dedup stands after it (the next
   * layer's pass resumes there).
   */
  private record Layer(long throughSeq, String rowsName, String state, WalTailRows.EntityLayer made,
      ProducerDedup.State dedup) {}

  private record Fold(Base base, List<Layer> layers) {}

  /** A fold with the leased paths of its layers' rows files, in order. */
  private record Leased(Fold fold, List<Path> rowsPaths) {}

  /**
   * What a read adds: the layers' rows files (less replaced rows) and the snapshot rows replaced;
   * {@code foldedKeys} is the key filter the tail was folded for alone ({@link #readKeys}), null
   * when these are a kept fold's layers.
   */
  record Read(List<PlannedFile> files, Map<String, long[]> replacedPositions, String foldedKeys) {}

  /** The segments of the tail being read. */
  interface Segments {
    /** Segment {@code seq}, as stored. */
    WalSegment segment(long seq);

    /**
     * A producer dedup pass over the tail's segments, resuming from {@code from} (where a layer
     * left it, or {@link ProducerDedup.State#START}); the layers fold what it keeps.
     */
    ProducerDedup.Pass dedup(ProducerDedup.State from);
  }

  /** A layer's file was evicted from the cache; the tail is folded again. */
  private static final class LayerGone extends RuntimeException {
    LayerGone() {
      super(null, null, false, false);
    }
  }

  private final DataFileCache files;
  private final WalTailRows rows;
  /** The folds, least recently used first. */
  private final LinkedHashMap<TableWal, Fold> folds = new LinkedHashMap<>(16, 0.75f, true);
  /**
   * Per table, the turn to grow its fold (one at a time), while a query holds or waits for it:
   * the last to leave removes it.
   */
  private final Map<TableWal, Turn> growing = new ConcurrentHashMap<>();
  /** {@link #MAX_LAYER_BYTES}, or less in tests. */
  private volatile long layerBytes = MAX_LAYER_BYTES;
  /** {@link #ONE_THREAD_KEY_FOLD_BYTES}, or another bound in tests. */
  private volatile long oneThreadKeyFoldBytes = ONE_THREAD_KEY_FOLD_BYTES;

  /** Drops the states of replaced folds, off the queries that replaced them. */
  private final ScheduledThreadPoolExecutor drops = Threads.scheduledPool(1,
      Threads.daemonNamed("se-wal-tail-fold-drops"));

  EntityTailFolds(DataFileCache files, WalTailRows rows) {
    this.files = files;
    this.rows = rows;
  }

  /**
   * The fold of segments {@code afterSeq+1 .. last} of {@code table} (read with its current
   * schema) onto {@code snapshot}; leases on the files read are added to {@code leases}.
   */
  Read read(String catalogId, Table table, Snapshot snapshot, long afterSeq, long last, Segments segments,
      List<DataFileCache.Lease> leases, Cancel cancel) {
    return read(catalogId, table, snapshot, afterSeq, last, segments, leases, cancel, false);
  }

  /**
   * As above; with {@code carried} ({@code snapshot} is a {@link #carriedBase}), null instead of
   * a fold of the whole tail: when the kept fold is no longer on {@code snapshot}, when the tail
   * read ends before the kept fold's end (segments collected meanwhile: the read would miss what
   * the table's current snapshot holds), or when its layers cannot be extended. The caller then
   * reads the current snapshot.
   */
  Read read(String catalogId, Table table, Snapshot snapshot, long afterSeq, long last, Segments segments,
      List<DataFileCache.Lease> leases, Cancel cancel, boolean carried) {
    TableWal key = new TableWal(catalogId, table.uuid());
    Base base = new Base(snapshot == null ? null : snapshot.snapshotId(), table.schema().schemaId(), afterSeq);
    Fold known = fold(key);
    if (carried && (known == null || !known.base().equals(base) || last < throughSeq(known))) {
      return null;
    }
    Read kept = readCovered(catalogId, base, known, last, leases);
    if (kept != null) {
      return kept;
    }
    // One fold grows per table at a time: a query that would fold what another is folding waits
    // for it and extends its layers (or finds them enough), so the same segments are not folded
    // twice at once.
    Turn turn = growing.compute(key, (k, t) -> (t == null ? new Turn() : t).join());
    try {
      try {
        while (!turn.permit.tryAcquire(50, TimeUnit.MILLISECONDS)) {
          cancel.check();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the WAL tail fold of table " + table.name(), e);
      }
      try {
        known = fold(key);
        if (carried && (known == null || !known.base().equals(base) || last < throughSeq(known))) {
          return null;
        }
        return readKnown(catalogId, table, snapshot, base, known, last, segments, leases, cancel, carried);
      } finally {
        turn.permit.release();
      }
    } finally {
      growing.computeIfPresent(key, (k, t) -> t.leave());
    }
  }

  /**
   * The rows of the keys {@code keyFilter} selects (a DuckDB predicate over the key columns, see
   * {@link WalTailRows#foldEntityKeys}) in the fold of segments {@code afterSeq+1 .. last} onto
   * {@code snapshot}, for a query that reads no other key of the table (its WHERE keeps only
   * rows with those keys): the kept fold's layers when they end exactly at the tail's end, else
   * a fold of the whole tail restricted to those keys, which is not kept and leaves the kept
   * fold as it is. Its cost is reading the tail's segments and folding those keys alone, where
   * growing the kept fold folds every key the new segments touch (under heavy upserts hundreds
   * of thousands, looked up in the whole snapshot). With {@code carried} ({@code snapshot} is a
   * {@link #carriedBase}), the kept fold's layers when they end exactly at the tail's end, else
   * null (nothing is folded: the caller reads the current snapshot, whose tail is shorter).
   * {@code tailBytes}, the tail's frame bytes, and the keys the filter can select pick the fold's
   * DuckDB threads: one up to {@link #ONE_THREAD_KEY_FOLD_BYTES} and
   * {@link #ONE_THREAD_KEY_FOLD_KEYS}.
   */
  Read readKeys(String catalogId, Table table, Snapshot snapshot, long afterSeq, long last, Segments segments,
      long tailBytes, FilterPushdown.KeyFilter keyFilter, List<DataFileCache.Lease> leases, Cancel cancel,
      boolean carried) {
    Base base = new Base(snapshot == null ? null : snapshot.snapshotId(), table.schema().schemaId(), afterSeq);
    Read kept = readCovered(catalogId, base, fold(new TableWal(catalogId, table.uuid())), last, leases);
    if (kept != null || carried) {
      return kept;
    }
    long started = System.nanoTime();
    ProducerDedup.Pass dedup = segments.dedup(ProducerDedup.State.START);
    SegmentRange tail = new SegmentRange(afterSeq + 1, last, seq -> {
      cancel.check();
      return dedup.withoutDuplicates(segments.segment(seq));
    });
    DataFileCache.Lease lease = files.scratch(catalogId);
    try {
      WalTailRows.EntityLayer made = rows.foldEntityKeys(catalogId, table, snapshot, afterSeq, tail,
          lease.path(), keyFilter.sql(), cancel,
          tailBytes <= oneThreadKeyFoldBytes && keyFilter.keys() <= ONE_THREAD_KEY_FOLD_KEYS ? 1 : 0);
      if (tail.through() < last) {
        throw new IllegalStateException("the fold of segments " + (afterSeq + 1) + ".." + last + " ended at "
            + tail.through());
      }
      if (LOG.isDebugEnabled()) {
        LOG.debug("folded the WAL tail of table {} on snapshot {} for some keys: segments {}..{}, {} rows, {} ms",
            table.name(), base.snapshotId(), afterSeq + 1, last, made.rows(),
            (System.nanoTime() - started) / 1_000_000);
      }
      List<PlannedFile> out = new ArrayList<>();
      if (made.rows() > 0) {
        out.add(new PlannedFile("wal-fold-keys:" + table.uuid() + ":" + afterSeq + ".." + last,
            lease.path().toString(), new long[0]));
      }
      leases.add(lease);
      return new Read(out, made.replacedPositions(), keyFilter.sql());
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
  }

  /** A table's turn to grow its fold, with the queries holding or waiting for it. */
  private static final class Turn {
    final Semaphore permit = new Semaphore(1);
    private int queries;

    Turn join() {
      queries++;
      return this;
    }

    /** This turn, or null (removed) when the last query left. */
    Turn leave() {
      return --queries == 0 ? null : this;
    }
  }

  /** The tables whose fold a query is growing or waiting to grow (tests). */
  int growingTables() {
    return growing.size();
  }

  /**
   * {@code known}'s layers that end at or before {@code last}, in order, when it is on {@code base};
   * none otherwise.
   */
  private static List<Layer> layersThrough(Fold known, Base base, long last) {
    if (known == null || !known.base().equals(base)) {
      return List.of();
    }
    List<Layer> layers = new ArrayList<>();
    for (Layer layer : known.layers()) {
      if (layer.throughSeq() > last) {
        break;
      }
      layers.add(layer);
    }
    return layers;
  }

  /**
   * The read of {@code known}'s layers (the table's kept fold) when it is on {@code base} and they
   * end exactly at the tail's end {@code last}: nothing to fold; else null, as when a layer's
   * file is gone.
   */
  private Read readCovered(String catalogId, Base base, Fold known, long last, List<DataFileCache.Lease> leases) {
    if (known == null || !known.base().equals(base)) {
      return null;
    }
    Fold kept = new Fold(base, layersThrough(known, base, last));
    if (throughSeq(kept) != last) {
      return null;
    }
    List<DataFileCache.Lease> taken = new ArrayList<>();
    List<Path> rowsPaths = new ArrayList<>();
    try {
      for (Layer layer : kept.layers()) {
        rowsPaths.add(acquireKept(catalogId, layer.rowsName(), taken));
      }
    } catch (LayerGone e) {
      release(taken);
      return null;
    }
    leases.addAll(taken);
    return read(new Leased(kept, rowsPaths));
  }

  /** {@link #read}, with {@code known} the table's kept fold (null: none). */
  private Read readKnown(String catalogId, Table table, Snapshot snapshot, Base base, Fold known, long last,
      Segments segments, List<DataFileCache.Lease> leases, Cancel cancel, boolean carried) {
    TableWal key = new TableWal(catalogId, table.uuid());
    List<Layer> layers = layersThrough(known, base, last);
    boolean replaces = known == null || !known.base().equals(base);
    // Each layer finished is kept at once, so a fold stopped by its query's timeout or client
    // leaves what it folded to the next query instead of starting over (unless its states are
    // more than are kept: keeping them would drop them under the fold's next step).
    Consumer<Fold> progress = partial -> {
      if ((replaces || throughSeq(known) <= throughSeq(partial)) && stateRows(partial) <= MAX_STATE_ROWS) {
        remember(key, partial);
      }
    };
    List<DataFileCache.Lease> taken = new ArrayList<>();
    try {
      Leased made = extend(catalogId, table, snapshot, base, layers, last, segments, taken, cancel, layerBytes,
          progress);
      if (made == null && carried) {
        release(taken);
        return null;
      }
      if (made == null) {
        release(taken);
        taken.clear();
        made = extend(catalogId, table, snapshot, base, List.of(), last, segments, taken, cancel, layerBytes,
            progress);
      }
      if (made == null) {
        // An operation sorts between two of the steps (an out-of-order version): one layer.
        release(taken);
        taken.clear();
        made = extend(catalogId, table, snapshot, base, List.of(), last, segments, taken, cancel, Long.MAX_VALUE,
            progress);
        if (made == null) {
          throw new IllegalStateException("a fold of the whole WAL tail made no layer");
        }
      }
      if (replaces || throughSeq(known) <= last) {
        remember(key, made.fold());
      } else {
        // A read pinned before the known fold's end does not replace it: its own layer goes.
        dropLater(statesLeft(made.fold(), known));
      }
      leases.addAll(taken);
      return read(made);
    } catch (RuntimeException e) {
      release(taken);
      throw e;
    }
  }

  /**
   * {@code layers} (whose rows files are leased into {@code taken}, in order) extended through
   * {@code last}, a layer per at most {@code layerBytes} of segment frames (the last layer a fold
   * may have takes the rest), each handed to {@code progress} once made unless it is the last;
   * null when the layers cannot be extended (a file gone, an out-of-order operation, too many
   * layers) and the tail must be folded whole.
   */
  private Leased extend(String catalogId, Table table, Snapshot snapshot, Base base, List<Layer> layers, long last,
      Segments segments, List<DataFileCache.Lease> taken, Cancel cancel, long layerBytes, Consumer<Fold> progress) {
    List<Layer> out = new ArrayList<>(layers);
    long through = layers.isEmpty() ? base.afterSeq() : layers.get(layers.size() - 1).throughSeq();
    if (through < last && out.size() >= MAX_LAYERS) {
      return null;
    }
    List<Path> rowsPaths = new ArrayList<>();
    try {
      for (Layer layer : layers) {
        rowsPaths.add(acquireKept(catalogId, layer.rowsName(), taken));
      }
    } catch (LayerGone e) {
      return null;
    }
    // One dedup pass from where the layer before left it: a new segment costs no re-read of
    // producers.json and the segments before it.
    ProducerDedup.Pass dedup = through == last ? null : segments.dedup(layers.isEmpty()
        ? ProducerDedup.State.START : layers.get(layers.size() - 1).dedup());
    List<String> made = new ArrayList<>();
    try {
      while (through < last) {
        if (out.size() >= MAX_LAYERS) {
          dropUnkept(made);
          return null;
        }
        // Read as the fold stages them, one at a time: a long tail is never held in memory whole.
        // The last layer a fold may have takes the rest, and so does the next layer of a fold
        // whose states, at the rows per segment of its layers so far, would hold more rows than
        // are kept: its steps would be dropped, and each step reads the states before it.
        boolean rest = out.size() == MAX_LAYERS - 1 || projectedStateRows(out, base, through, last) > MAX_STATE_ROWS;
        SegmentRange added = new SegmentRange(through + 1, last, rest ? Long.MAX_VALUE : layerBytes, seq -> {
          cancel.check();
          return dedup.withoutDuplicates(segments.segment(seq));
        });
        Made layer = fold(catalogId, table, snapshot, base, out, through, last, added, cancel);
        if (layer == null) {
          dropUnkept(made);
          return null;
        }
        made.add(layer.state());
        taken.add(layer.lease());
        rowsPaths.add(layer.lease().path());
        out.add(new Layer(layer.throughSeq(), layer.rowsName(), layer.state(), layer.made(), dedup.state()));
        through = layer.throughSeq();
        if (through < last) {
          progress.accept(new Fold(base, List.copyOf(out)));
        }
      }
    } catch (RuntimeException e) {
      dropUnkept(made);
      throw e;
    }
    return new Leased(new Fold(base, out), rowsPaths);
  }

  /** Drops those of {@code states} (layers made by a fold) that no fold kept holds. */
  private void dropUnkept(List<String> states) {
    if (states.isEmpty()) {
      return;
    }
    Set<String> kept = new HashSet<>();
    synchronized (this) {
      folds.values().forEach(fold -> fold.layers().forEach(layer -> kept.add(layer.state())));
    }
    dropLater(states.stream().filter(state -> !kept.contains(state)).toList());
  }

  /** A layer folded of {@code added} (the segments after {@code through}) and its rows file's lease. */
  private record Made(long throughSeq, String rowsName, String state, WalTailRows.EntityLayer made,
      DataFileCache.Lease lease) {}

  /**
   * The layer folding {@code added} onto {@code layers}; null when it cannot be made exactly
   * (nothing is kept then).
   */
  private Made fold(String catalogId, Table table, Snapshot snapshot, Base base, List<Layer> layers, long through,
      long last, SegmentRange added, Cancel cancel) {
    String name = "wal-fold:" + table.uuid() + ":" + (base.snapshotId() == null ? "none" : base.snapshotId())
        + ":schema-" + base.schemaId() + ":" + base.afterSeq() + ":" + (through + 1) + ".." + last + ":"
        + UUID.randomUUID();
    List<String> states = layers.stream().map(Layer::state).toList();
    String state = rows.newEntityState();
    long started = System.nanoTime();
    WalTailRows.EntityLayer[] made = new WalTailRows.EntityLayer[1];
    DataFileCache.Lease rowsLease;
    try {
      rowsLease = files.acquire(catalogId, name + ":rows", target -> {
        Optional<WalTailRows.EntityLayer> layer = rows.foldEntityLayer(catalogId, table, snapshot, base.afterSeq(),
            states, layers.size(), added, target, state, cancel);
        if (layer.isEmpty()) {
          throw new LayerGone();
        }
        made[0] = layer.get();
      });
    } catch (LayerGone e) {
      return null; // nothing was kept
    } catch (RuntimeException e) {
      rows.dropEntityStates(List.of(state));
      throw e;
    }
    if (added.through() <= through) {
      rows.dropEntityStates(List.of(state));
      rowsLease.close();
      throw new IllegalStateException("the fold of segments " + (through + 1) + ".." + last + " read none of them");
    }
    if (LOG.isDebugEnabled()) {
      LOG.debug("folded WAL tail layer {} of table {} on snapshot {}: segments {}..{} of {}, {} rows, {} state rows,"
          + " {} ms", layers.size(), table.name(), base.snapshotId(), through + 1, added.through(), last,
          made[0].rows(), made[0].stateRows(), (System.nanoTime() - started) / 1_000_000);
    }
    return new Made(added.through(), name + ":rows", state, made[0], rowsLease);
  }

  /**
   * The snapshot of the fold kept for {@code table} when a query of the table's {@code current}
   * snapshot (whose {@code se.wal.seq} is {@code currentSeq}) may read that snapshot and the
   * kept fold instead (extended by the segments after it): null unless every condition holds.
   * Reconciliation commits a new snapshot every pass, and a fold on it starts over from the
   * whole tail after it (under heavy upserts about a pass's worth of rows, looked up in the whole
   * table); the kept fold onto an older snapshot already holds those rows. Both reads give the
   * same rows when:
   *
   * <ul>
   *   <li>the kept fold is on an older snapshot of the same schema as the table's, and reaches at
   *       least {@code currentSeq} (it holds everything the current snapshot reconciled);</li>
   *   <li>every commit after the fold's snapshot up to the current one reconciled WAL (it carries
   *       {@code se.wal.seq}) or only rewrote files ({@code replace}: compaction, slice changes),
   *       so none changed the table's rows other than by the WAL the fold holds; at most
   *       {@value #MAX_CARRIED_COMMITS} of them a slice (a sliced table's slices commit apart);</li>
   *   <li>the kept fold's states hold at most {@value #MAX_CARRIED_STATE_ROWS} rows;</li>
   *   <li>the fold's snapshot is still in the table's metadata, at most
   *       {@value #MAX_CARRIED_MILLIS} ms old, and kept by the table's maintenance: younger than
   *       half its {@code se.maintenance.snapshot-retention}, or else within its
   *       {@code se.maintenance.min-snapshots}, so its files are not expired under the query.</li>
   * </ul>
   */
  /**
   * How many commits a carried fold's snapshot may be behind the current one ({@link
   * #carriedBase}) on a table with {@code slices} slices (0: not sliced) whose maintenance is
   * {@code policy}: {@value #MAX_CARRIED_COMMITS} a slice (a sliced table's slices commit apart,
   * one commit each for a round of segments). Snapshot expiry keeps every snapshot younger than
   * the retention; only a retention shorter than twice the age a carried fold's snapshot may
   * have leaves the snapshots it keeps by count ({@code min-snapshots}) as the bound.
   */
  static int carriedCommits(MaintenancePolicy policy, int slices) {
    int commits = MAX_CARRIED_COMMITS * Math.max(1, slices);
    return policy.snapshotRetention().toMillis() > 2 * MAX_CARRIED_MILLIS ? commits
        : Math.min(commits, policy.minSnapshots() - 1);
  }

  Snapshot carriedBase(String catalogId, Table table, Snapshot current, long currentSeq, long nowMillis) {
    Fold known = fold(new TableWal(catalogId, table.uuid()));
    if (known == null || current == null || known.base().snapshotId() == null || known.layers().isEmpty()
        || known.base().snapshotId() == current.snapshotId() || known.base().schemaId() != table.schema().schemaId()
        || throughSeq(known) < currentSeq || stateRows(known) > MAX_CARRIED_STATE_ROWS) {
      return null;
    }
    Snapshot base = table.snapshot(known.base().snapshotId());
    if (base == null || base.timestampMillis() < nowMillis - MAX_CARRIED_MILLIS) {
      return null;
    }
    int keep;
    try {
      keep = carriedCommits(MaintenancePolicy.forTable(table, MaintenancePolicy.defaults()),
          TableSlices.marksIn(current).size());
    } catch (RuntimeException e) {
      return null; // a property maintenance refuses: its report names it
    }
    return WalHighWaterMark.descendsThrough(table, current, base.snapshotId(), keep,
        s -> WalHighWaterMark.seqOf(s) != null || DataOperations.REPLACE.equals(s.operation())) ? base : null;
  }

  /** A lease on a layer's file still in the cache, added to {@code taken}; LayerGone when evicted. */
  private Path acquireKept(String catalogId, String name, List<DataFileCache.Lease> taken) {
    DataFileCache.Lease lease = files.acquire(catalogId, name, target -> {
      throw new LayerGone();
    });
    taken.add(lease);
    return lease.path();
  }

  private static long throughSeq(Fold fold) {
    List<Layer> layers = fold.layers();
    return layers.isEmpty() ? fold.base().afterSeq() : layers.get(layers.size() - 1).throughSeq();
  }

  /** The files and replaced positions of a fold. */
  private static Read read(Leased leased) {
    List<Layer> layers = leased.fold().layers();
    Map<Integer, List<long[]>> hidden = new HashMap<>();
    Map<String, List<long[]>> replaced = new HashMap<>();
    for (Layer layer : layers) {
      layer.made().replacedLayerRows().forEach((n, positions) -> hidden.computeIfAbsent(n, k -> new ArrayList<>())
          .add(positions));
      layer.made().replacedPositions().forEach((file, positions) -> replaced.computeIfAbsent(file,
          k -> new ArrayList<>()).add(positions));
    }
    List<PlannedFile> out = new ArrayList<>();
    for (int i = 0; i < layers.size(); i++) {
      out.add(new PlannedFile(layers.get(i).rowsName(), leased.rowsPaths().get(i).toString(),
          union(hidden.getOrDefault(i, List.of()))));
    }
    Map<String, long[]> snapshotRows = new HashMap<>();
    replaced.forEach((file, positions) -> snapshotRows.put(file, union(positions)));
    return new Read(out, snapshotRows, null);
  }

  private static long[] union(List<long[]> positions) {
    if (positions.isEmpty()) {
      return new long[0];
    }
    if (positions.size() == 1) {
      return positions.get(0);
    }
    return positions.stream().flatMapToLong(Arrays::stream).sorted().distinct().toArray();
  }

  private static void release(List<DataFileCache.Lease> leases) {
    leases.forEach(DataFileCache.Lease::close);
  }

  private synchronized Fold fold(TableWal key) {
    return folds.get(key);
  }

  /** The last segment the fold kept for {@code key} holds, or -1 when none is kept. */
  long keptThrough(TableWal key) {
    Fold known = fold(key);
    return known == null ? -1 : throughSeq(known);
  }

  /**
   * Keeps {@code fold} as {@code key}'s and drops the states no fold keeps any more: those of the
   * fold it replaces that it does not share, and those of the folds dropped to stay within
   * {@value #MAX_TABLES} tables and {@value #MAX_STATE_ROWS} state rows (least recently used
   * first; the new fold too when it alone holds more).
   */
  private void remember(TableWal key, Fold fold) {
    List<String> dropped = new ArrayList<>();
    synchronized (this) {
      Fold old = folds.put(key, fold);
      if (old != null) {
        dropped.addAll(statesLeft(old, fold));
      }
      long stateRows = 0;
      for (Fold kept : folds.values()) {
        stateRows += stateRows(kept);
      }
      Iterator<Map.Entry<TableWal, Fold>> eldest = folds.entrySet().iterator();
      while (eldest.hasNext() && (folds.size() > MAX_TABLES || stateRows > MAX_STATE_ROWS)) {
        Fold gone = eldest.next().getValue();
        eldest.remove();
        stateRows -= stateRows(gone);
        gone.layers().forEach(layer -> dropped.add(layer.state()));
      }
    }
    dropLater(dropped);
  }

  /** Drops {@code states} in the background. */
  private void dropLater(List<String> states) {
    if (states.isEmpty()) {
      return;
    }
    try {
      drops.execute(() -> rows.dropEntityStates(states));
    } catch (RejectedExecutionException e) {
      rows.dropEntityStates(states); // closed: at once
    }
  }

  /** The states of {@code fold}'s layers that {@code kept} does not hold. */
  private static List<String> statesLeft(Fold fold, Fold kept) {
    Set<String> keep = new HashSet<>();
    kept.layers().forEach(layer -> keep.add(layer.state()));
    List<String> left = new ArrayList<>();
    fold.layers().forEach(layer -> {
      if (!keep.contains(layer.state())) {
        left.add(layer.state());
      }
    });
    return left;
  }

  private static long stateRows(Fold fold) {
    return stateRows(fold.layers());
  }

  /**
   * The state rows of {@code layers} (through segment {@code through} of a fold on {@code base})
   * once extended through {@code last} at their rows per segment so far (0 without layers).
   */
  private static double projectedStateRows(List<Layer> layers, Base base, long through, long last) {
    long rows = stateRows(layers);
    long segments = through - base.afterSeq();
    return segments <= 0 ? rows : rows + (double) rows / segments * (last - through);
  }

  private static long stateRows(List<Layer> layers) {
    long rows = 0;
    for (Layer layer : layers) {
      rows += layer.made().stateRows();
    }
    return rows;
  }

  /** Folds at most {@code bytes} of segment frames per layer (for tests). */
  void layerBytes(long bytes) {
    layerBytes = bytes;
  }

  /** Folds for some keys run on one DuckDB thread up to {@code bytes} of tail frames (for tests; -1: never). */
  void oneThreadKeyFoldBytes(long bytes) {
    oneThreadKeyFoldBytes = bytes;
  }

  /** The segment each layer of the fold kept for the table ends with, in order (for tests). */
  synchronized List<Long> layerEnds(String catalogId, UUID tableUuid) {
    Fold fold = folds.get(new TableWal(catalogId, tableUuid));
    return fold == null ? List.of() : fold.layers().stream().map(Layer::throughSeq).toList();
  }

  /** Drops every fold and its states (after the drops queued). */
  void close() {
    drops.shutdown();
    try {
      drops.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<String> dropped = new ArrayList<>();
    synchronized (this) {
      folds.values().forEach(fold -> fold.layers().forEach(layer -> dropped.add(layer.state())));
      folds.clear();
    }
    rows.dropEntityStates(dropped);
  }
}

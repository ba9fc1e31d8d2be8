package io.storageengine.query;

import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.ProducerDedup;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalSegment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

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
 * the names of the layers' files and the positions they replace; the files are in the DuckDB
 * runtime's file cache, which may evict them between queries. The whole tail is folded again
 * (into one layer) when a layer's file is gone, when a new segment has an operation that sorts
 * between earlier ones (an out-of-order version), and after {@value #MAX_LAYERS} layers, which
 * bounds the files a query reads.
 */
final class EntityTailFolds {
  static final int MAX_LAYERS = 16;
  static final int MAX_TABLES = 32;

  /** What a fold is of: the tail of {@code afterSeq} on a snapshot (null: none) and schema. */
  private record Base(Long snapshotId, int schemaId, long afterSeq) {}

  /**
   * One layer: the segments through {@code throughSeq}, its files' cache names, what it replaces,
   * and where the tail's producer dedup stands after it (the next layer's pass resumes there).
   */
  private record Layer(long throughSeq, String rowsName, String stateName, WalTailRows.EntityLayer made,
      ProducerDedup.State dedup) {}

  private record Fold(Base base, List<Layer> layers) {}

  /** A fold with the leased paths of its layers' rows files, in order. */
  private record Leased(Fold fold, List<Path> rowsPaths) {}

  /** What a read adds: the layers' rows files (less replaced rows) and the snapshot rows replaced. */
  record Read(List<PlannedFile> files, Map<String, long[]> replacedPositions, int layersFolded) {}

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
  private final Map<TableWal, Fold> folds = new LruMap<>(MAX_TABLES);

  EntityTailFolds(DataFileCache files, WalTailRows rows) {
    this.files = files;
    this.rows = rows;
  }

  /**
   * The fold of segments {@code afterSeq+1 .. last} of {@code table} (read with its current
   * schema) onto {@code snapshot}; leases on the files read are added to {@code leases}.
   */
  Read read(String catalogId, Table table, Snapshot snapshot, long afterSeq, long last, Segments segments,
      List<DataFileCache.Lease> leases) {
    TableWal key = new TableWal(catalogId, table.uuid());
    Base base = new Base(snapshot == null ? null : snapshot.snapshotId(), table.schema().schemaId(), afterSeq);
    Fold known = fold(key);
    List<Layer> layers = new ArrayList<>();
    if (known != null && known.base().equals(base)) {
      for (Layer layer : known.layers()) {
        if (layer.throughSeq() > last) {
          break;
        }
        layers.add(layer);
      }
    }
    List<DataFileCache.Lease> taken = new ArrayList<>();
    try {
      Leased made = extend(catalogId, table, snapshot, base, layers, last, segments, taken);
      if (made == null) {
        release(taken);
        taken.clear();
        made = extend(catalogId, table, snapshot, base, List.of(), last, segments, taken);
        if (made == null) {
          throw new IllegalStateException("a fold of the whole WAL tail made no layer");
        }
      }
      if (known == null || !known.base().equals(base) || throughSeq(known) <= last) {
        // A read pinned before the known fold's end does not replace it.
        remember(key, made.fold());
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
   * {@code last}; null when the layers cannot be extended (a file gone, an out-of-order
   * operation, too many layers) and the tail must be folded whole.
   */
  private Leased extend(String catalogId, Table table, Snapshot snapshot, Base base, List<Layer> layers, long last,
      Segments segments, List<DataFileCache.Lease> taken) {
    List<Layer> out = new ArrayList<>(layers);
    long through = layers.isEmpty() ? base.afterSeq() : layers.get(layers.size() - 1).throughSeq();
    boolean grows = through < last;
    if (grows && out.size() >= MAX_LAYERS) {
      return null;
    }
    List<Path> rowsPaths = new ArrayList<>();
    List<Path> states = new ArrayList<>();
    try {
      for (Layer layer : layers) {
        rowsPaths.add(acquireKept(catalogId, layer.rowsName(), taken));
        if (grows) {
          states.add(acquireKept(catalogId, layer.stateName(), taken));
        }
      }
    } catch (LayerGone e) {
      return null;
    }
    if (!grows) {
      return new Leased(new Fold(base, out), rowsPaths);
    }
    // One dedup pass from where the layer before left it: a new segment costs no re-read of
    // producers.json and the segments before it.
    ProducerDedup.Pass dedup = segments.dedup(layers.isEmpty() ? ProducerDedup.State.START
        : layers.get(layers.size() - 1).dedup());
    List<WalSegment> added = new ArrayList<>();
    for (long seq = through + 1; seq <= last; seq++) {
      added.add(dedup.withoutDuplicates(segments.segment(seq)));
    }
    String name = "wal-fold:" + table.uuid() + ":" + (base.snapshotId() == null ? "none" : base.snapshotId())
        + ":schema-" + base.schemaId() + ":" + base.afterSeq() + ":" + (through + 1) + ".." + last + ":"
        + UUID.randomUUID();
    WalTailRows.EntityLayer[] made = new WalTailRows.EntityLayer[1];
    Path[] stateScratch = new Path[1];
    DataFileCache.Lease rowsLease;
    try {
      rowsLease = files.acquire(catalogId, name + ":rows", target -> {
        Path state = target.resolveSibling(target.getFileName() + ".state");
        stateScratch[0] = state;
        Optional<WalTailRows.EntityLayer> layer = rows.foldEntityLayer(catalogId, table, snapshot, base.afterSeq(),
            states, out.size(), added, target, state);
        if (layer.isEmpty()) {
          throw new LayerGone();
        }
        made[0] = layer.get();
      });
    } catch (LayerGone e) {
      deleteQuietly(stateScratch[0]);
      return null;
    }
    taken.add(rowsLease);
    rowsPaths.add(rowsLease.path());
    try {
      taken.add(files.acquire(catalogId, name + ":state", target -> move(stateScratch[0], target)));
    } finally {
      deleteQuietly(stateScratch[0]);
    }
    out.add(new Layer(last, name + ":rows", name + ":state", made[0], dedup.state()));
    return new Leased(new Fold(base, out), rowsPaths);
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
    return new Read(out, snapshotRows, layers.size());
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

  private static void move(Path from, Path to) {
    try {
      Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw SeException.internal("cannot store a WAL tail fold's state in the data file cache", e);
    }
  }

  private static void deleteQuietly(Path path) {
    if (path != null) {
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        // A scratch file left behind is removed with the cache directory.
      }
    }
  }

  private synchronized Fold fold(TableWal key) {
    return folds.get(key);
  }

  private synchronized void remember(TableWal key, Fold fold) {
    folds.put(key, fold);
  }
}

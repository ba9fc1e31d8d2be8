package io.storageengine.server;

import io.storageengine.catalog.TableSlices;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.query.PendingWal;
import io.storageengine.reconcile.SliceMeta;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.Table;

/**
 * The pending segments {@code "t$wal"} shows, read from the cluster's WAL: the table's
 * {@code published_seq}, the segments listed after it (with the time the object store wrote
 * each), and each one read (and checked) for its writer, frames, rows and payload bytes. A segment gone meanwhile (reconciled and collected) is
 * left out. The slices {@code "t$slices"} shows are read from the table's slices-meta.
 */
final class WalPendingSegments implements PendingWal {
  private final WalLog wal;
  /** Cluster storage holding the tables' slices-meta (null: slices as created). */
  private final ObjectStore clusterStore;

  WalPendingSegments(WalLog wal) {
    this(wal, null);
  }

  WalPendingSegments(WalLog wal, ObjectStore clusterStore) {
    this.wal = wal;
    this.clusterStore = clusterStore;
  }

  /** The slices of the table's current snapshot, from its slices-meta (as created while it has none). */
  @Override
  public List<TableSlices.Slice> slices(String catalogId, Table table) {
    if (clusterStore == null) {
      return PendingWal.super.slices(catalogId, table);
    }
    return SliceMeta.read(clusterStore, new TableWal(catalogId, table.uuid()))
        .map(layout -> layout.asOf(TableSlices.marks(table, table.currentSnapshot())))
        .orElseGet(() -> PendingWal.super.slices(catalogId, table));
  }

  @Override
  public List<Segment> pending(String catalogId, UUID tableUuid) {
    TableWal table = new TableWal(catalogId, tableUuid);
    long published = wal.state(table).publishedSeq();
    List<Segment> out = new ArrayList<>();
    for (WalLog.Listed listed : wal.listAfter(table, published)) {
      long seq = listed.seq();
      Optional<WalSegment> segment = wal.read(table, seq);
      if (segment.isEmpty()) {
        continue;
      }
      out.add(new Segment(seq, segment.get().writerId(), segment.get().writerNonce(), segment.get().frames().size(),
          segment.get().rowCount(), segment.get().frameBytes(), published, listed.writtenAt()));
    }
    return out;
  }
}

package io.storageengine.server;

import io.storageengine.query.PendingWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalLog;
import io.storageengine.wal.WalSegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The pending segments {@code "t$wal"} shows, read from the cluster's WAL: the table's
 * {@code published_seq}, the segments listed after it, and each one read (and checked) for its
 * writer, frames, rows and payload bytes. A segment gone meanwhile (reconciled and collected) is
 * left out.
 */
final class WalPendingSegments implements PendingWal {
  private final WalLog wal;

  WalPendingSegments(WalLog wal) {
    this.wal = wal;
  }

  @Override
  public List<Segment> pending(String catalogId, UUID tableUuid) {
    TableWal table = new TableWal(catalogId, tableUuid);
    long published = wal.state(table).publishedSeq();
    List<Segment> out = new ArrayList<>();
    for (long seq : wal.segmentsAfter(table, published)) {
      Optional<WalSegment> segment = wal.read(table, seq);
      if (segment.isEmpty()) {
        continue;
      }
      long bytes = 0;
      for (WalFrame frame : segment.get().frames()) {
        bytes += frame.arrowIpc().length;
      }
      out.add(new Segment(seq, segment.get().writerId(), segment.get().writerNonce(), segment.get().frames().size(),
          segment.get().rowCount(), bytes, published));
    }
    return out;
  }
}

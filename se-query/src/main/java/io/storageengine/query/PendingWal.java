package io.storageengine.query;

import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Table;

/**
 * What the write-ahead log holds for a table that its Iceberg snapshot does not have yet: the
 * segments after its published sequence number, as the {@code "t$wal"} metadata table shows
 * them (see {@link MetadataTables}), and next to it the slices-meta of a sliced entity table,
 * for {@code "t$slices"}. The host that has the WAL implements it; without one a table shows no
 * pending segments, and its slices are those {@code se.slice.count} creates.
 */
public interface PendingWal {
  /**
   * One acknowledged segment not yet reconciled: its sequence number in the table's log, the
   * writer that appended it (id and per-process nonce), its frames, rows and Arrow payload bytes,
   * the table's {@code publishedSeq} when it was read, and when the object store wrote the
   * segment ({@code writtenAt}, its clock; null where the store does not say).
   */
  record Segment(long seq, String writerId, String writerNonce, int frames, long rows, long bytes, long publishedSeq,
      Instant writtenAt) {
    /** A segment whose write time is not known. */
    public Segment(long seq, String writerId, String writerNonce, int frames, long rows, long bytes,
        long publishedSeq) {
      this(seq, writerId, writerNonce, frames, rows, bytes, publishedSeq, null);
    }
  }

  /** A host without a WAL. */
  PendingWal NONE = (catalogId, tableUuid) -> List.of();

  /**
   * The pending segments of the table {@code tableUuid} of tenant {@code catalogId}, by
   * ascending sequence number; segments reconciled while they are listed are left out.
   */
  List<Segment> pending(String catalogId, UUID tableUuid);

  /**
   * The slices of sliced entity table {@code table} of tenant {@code catalogId} as of its current
   * snapshot: by default the {@code se.slice.count} equal ranges the table started with; the host
   * with the WAL reads them from the table's slices-meta, which splits and merges change.
   */
  default List<TableSlices.Slice> slices(String catalogId, Table table) {
    return TableSlices.uniform(TableSettings.of(table).sliceCount());
  }
}

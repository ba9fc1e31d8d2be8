package io.storageengine.ingest;

import io.storageengine.wal.TableWal;

/**
 * Told after each WAL segment is durable, so the host can schedule reconciliation of the table.
 * Called on a flush thread after the segment's requests were acknowledged; it must not block for
 * long. An exception thrown here is logged and never affects acknowledgements.
 */
@FunctionalInterface
public interface IngestListener {
  IngestListener NONE = (table, seq, rows, bytes) -> {};

  /**
   * @param table the table whose WAL grew
   * @param seq the new segment's sequence number
   * @param rows rows in the segment
   * @param bytes Arrow IPC bytes in the segment's frames
   */
  void segmentWritten(TableWal table, long seq, long rows, long bytes);
}

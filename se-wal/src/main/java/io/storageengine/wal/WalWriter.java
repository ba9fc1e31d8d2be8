package io.storageengine.wal;

import java.util.List;

/**
 * Appends segments to a table's WAL with the exactly-once protocol of ARCHITECTURE.md 6.5.
 * Safe for any number of concurrent writers per table, in this and other processes.
 */
public interface WalWriter {
  /**
   * Writes {@code frames} as one new segment and returns its sequence number once the segment
   * is durable (the caller may then acknowledge). Retries lost responses and recycled slots
   * internally; a returned seq is never shared with another writer's segment. Storage failures
   * throw {@code SeException(UNAVAILABLE)}: nothing was acknowledged, the caller may retry.
   * After the segment and before returning it puts the table's pending marker ({@link
   * WalLog#pendingTables}).
   */
  long append(TableWal table, List<WalFrame> frames);

  /**
   * Records the table's current name in {@code table.json} next to its WAL (written only when
   * absent or different). Called by ingestion before the first append of a stream.
   */
  void registerTableName(TableWal table, TableName name);
}

package io.storageengine.wal;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
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

  /**
   * For the write side of idempotent ingestion: creates the table's {@code producers.json} when
   * absent (so it exists before the first frame with a producer is appended), and returns the
   * producer windows as of every segment now in the WAL. With {@code known} (a result of an
   * earlier call) only the segments after its {@link ProducerWindows#throughSeq()} are read
   * and folded into a copy.
   */
  default ProducerWindows catchUpProducerWindows(TableWal table, ProducerWindows known,
      Duration retention) {
    throw new SeException(ErrorCode.UNSUPPORTED, "this WAL writer does not keep producer windows");
  }
}

package io.storageengine.reconcile;

import java.time.Clock;
import java.time.Duration;

/**
 * Tunables of a reconcile pass, with defaults in one place.
 *
 * @param maxBytesPerCommit WAL bytes (Arrow IPC payload) read into one commit; at least one
 *     segment is always taken so a large segment never stalls the table
 * @param targetFileSizeBytes target size of each Parquet data file written
 * @param rowGroupRows Parquet row group size in rows; files are split only at row group
 *     boundaries, so small targets need small row groups
 * @param maxCommitAttempts passes restarted after a commit conflict before giving up
 * @param duckdbThreads DuckDB worker threads per pass
 * @param defaultTombstoneRetention used when a table has no {@code se.tombstone-retention}
 * @param clock time source for tombstone ages
 */
public record ReconcileOptions(
    long maxBytesPerCommit,
    long targetFileSizeBytes,
    long rowGroupRows,
    int maxCommitAttempts,
    int duckdbThreads,
    Duration defaultTombstoneRetention,
    Clock clock) {

  public static final long DEFAULT_MAX_BYTES_PER_COMMIT = 256L << 20;
  public static final long DEFAULT_TARGET_FILE_SIZE = 128L << 20;
  public static final long DEFAULT_ROW_GROUP_ROWS = 122_880;
  public static final int DEFAULT_MAX_COMMIT_ATTEMPTS = 5;
  public static final Duration DEFAULT_TOMBSTONE_RETENTION = Duration.ofDays(7);

  public ReconcileOptions {
    if (maxBytesPerCommit <= 0 || targetFileSizeBytes <= 0 || rowGroupRows <= 0
        || maxCommitAttempts <= 0 || duckdbThreads <= 0) {
      throw new IllegalArgumentException("reconcile options must be positive");
    }
  }

  public static ReconcileOptions defaults() {
    return new ReconcileOptions(DEFAULT_MAX_BYTES_PER_COMMIT, DEFAULT_TARGET_FILE_SIZE,
        DEFAULT_ROW_GROUP_ROWS, DEFAULT_MAX_COMMIT_ATTEMPTS,
        Math.max(1, Runtime.getRuntime().availableProcessors()),
        DEFAULT_TOMBSTONE_RETENTION, Clock.systemUTC());
  }

  public ReconcileOptions withMaxBytesPerCommit(long bytes) {
    return new ReconcileOptions(bytes, targetFileSizeBytes, rowGroupRows, maxCommitAttempts,
        duckdbThreads, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withTargetFileSize(long bytes, long rowGroupRows) {
    return new ReconcileOptions(maxBytesPerCommit, bytes, rowGroupRows, maxCommitAttempts,
        duckdbThreads, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withDuckdbThreads(int threads) {
    return new ReconcileOptions(maxBytesPerCommit, targetFileSizeBytes, rowGroupRows,
        maxCommitAttempts, threads, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withClock(Clock newClock) {
    return new ReconcileOptions(maxBytesPerCommit, targetFileSizeBytes, rowGroupRows,
        maxCommitAttempts, duckdbThreads, defaultTombstoneRetention, newClock);
  }
}

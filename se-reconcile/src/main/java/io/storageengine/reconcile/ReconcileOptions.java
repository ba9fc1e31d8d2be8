package io.storageengine.reconcile;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Tunables of a reconcile pass, with defaults in one place. {@link #SETTINGS} declare the flag,
 * variable and default of each field but the clock; {@link #from} reads them.
 *
 * @param maxBytesPerCommit WAL bytes (Arrow IPC payload) read into one commit; at least one
 *     segment is always taken so a large segment never stalls the table
 * @param targetFileSizeBytes target size of each Parquet data file written
 * @param rowGroupRows Parquet row group size in rows; files are split only at row group
 *     boundaries, so small targets need small row groups
 * @param maxCommitAttempts passes restarted after a commit conflict before giving up
 * @param duckdbThreads DuckDB worker threads per pass
 * @param keyIndexBytes memory the key indexes of entity tables may take in this process, all
 *     together (0: none kept, every entity pass reads its candidate files)
 * @param defaultTombstoneRetention used when a table has no {@code se.tombstone-retention}
 * @param clock time source for tombstone ages
 */
public record ReconcileOptions(
    long maxBytesPerCommit,
    long targetFileSizeBytes,
    long rowGroupRows,
    int maxCommitAttempts,
    int duckdbThreads,
    long keyIndexBytes,
    Duration defaultTombstoneRetention,
    Clock clock) {

  public static final long DEFAULT_MAX_BYTES_PER_COMMIT = 256L << 20;
  public static final long DEFAULT_TARGET_FILE_SIZE = 128L << 20;
  public static final long DEFAULT_ROW_GROUP_ROWS = 122_880;
  public static final int DEFAULT_MAX_COMMIT_ATTEMPTS = 5;
  public static final Duration DEFAULT_TOMBSTONE_RETENTION = Duration.ofDays(7);

  public static final Setting<Long> MAX_BYTES_PER_COMMIT = Setting.size("reconcile.max-bytes-per-commit", "256MiB",
      "WAL bytes read into one commit (at least one segment is always taken)");
  public static final Setting<Long> TARGET_FILE_SIZE = Setting.size("reconcile.target-file-size", "128MiB",
      "target size of each Parquet data file a reconcile writes");
  public static final Setting<Integer> ROW_GROUP_ROWS = Setting.integer("reconcile.row-group-rows", "122880", 1,
      "Parquet row group size in rows; files are split only at row group boundaries");
  public static final Setting<Integer> COMMIT_ATTEMPTS = Setting.integer("reconcile.commit-attempts", "5", 1,
      "passes restarted after a commit conflict before a reconcile gives up");
  public static final Setting<Integer> DUCKDB_THREADS = Setting.integer("reconcile.duckdb-threads", "", 1,
      "DuckDB worker threads per reconcile pass (default: one per available processor)");
  public static final Setting<Duration> TOMBSTONE_RETENTION = Setting.duration("reconcile.tombstone-retention",
      "168h", "how long deletes of entity tables are remembered when a table has no se.tombstone-retention");
  public static final Setting<Long> KEY_INDEX_MEMORY = Setting.size("reconcile.key-index-memory", "",
      "memory the key indexes of entity tables may take, all together (default: half the maximum heap; 0: none)");
  /** Every setting of a reconcile pass. */
  public static final List<Setting<?>> SETTINGS = List.of(MAX_BYTES_PER_COMMIT, TARGET_FILE_SIZE, ROW_GROUP_ROWS,
      COMMIT_ATTEMPTS, DUCKDB_THREADS, KEY_INDEX_MEMORY, TOMBSTONE_RETENTION);

  public ReconcileOptions {
    if (maxBytesPerCommit <= 0 || targetFileSizeBytes <= 0 || rowGroupRows <= 0
        || maxCommitAttempts <= 0 || duckdbThreads <= 0 || keyIndexBytes < 0) {
      throw new IllegalArgumentException("reconcile options must be positive");
    }
  }

  public static ReconcileOptions defaults() {
    return new ReconcileOptions(DEFAULT_MAX_BYTES_PER_COMMIT, DEFAULT_TARGET_FILE_SIZE,
        DEFAULT_ROW_GROUP_ROWS, DEFAULT_MAX_COMMIT_ATTEMPTS,
        Math.max(1, Runtime.getRuntime().availableProcessors()), defaultKeyIndexBytes(),
        DEFAULT_TOMBSTONE_RETENTION, Clock.systemUTC());
  }

  /** The options given by {@link #SETTINGS} in {@code source}, on the system clock. */
  public static ReconcileOptions from(ConfigSource source) {
    return new ReconcileOptions(source.get(MAX_BYTES_PER_COMMIT), source.get(TARGET_FILE_SIZE),
        source.get(ROW_GROUP_ROWS), source.get(COMMIT_ATTEMPTS),
        source.find(DUCKDB_THREADS).orElseGet(() -> Math.max(1, Runtime.getRuntime().availableProcessors())),
        source.find(KEY_INDEX_MEMORY).orElseGet(ReconcileOptions::defaultKeyIndexBytes),
        source.get(TOMBSTONE_RETENTION), Clock.systemUTC());
  }

  /** Half the maximum heap: key indexes are the largest thing a worker keeps on its heap. */
  static long defaultKeyIndexBytes() {
    return Runtime.getRuntime().maxMemory() / 2;
  }

  public ReconcileOptions withKeyIndexBytes(long bytes) {
    return new ReconcileOptions(maxBytesPerCommit, targetFileSizeBytes, rowGroupRows, maxCommitAttempts,
        duckdbThreads, bytes, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withMaxBytesPerCommit(long bytes) {
    return new ReconcileOptions(bytes, targetFileSizeBytes, rowGroupRows, maxCommitAttempts,
        duckdbThreads, keyIndexBytes, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withTargetFileSize(long bytes, long rowGroupRows) {
    return new ReconcileOptions(maxBytesPerCommit, bytes, rowGroupRows, maxCommitAttempts,
        duckdbThreads, keyIndexBytes, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withDuckdbThreads(int threads) {
    return new ReconcileOptions(maxBytesPerCommit, targetFileSizeBytes, rowGroupRows,
        maxCommitAttempts, threads, keyIndexBytes, defaultTombstoneRetention, clock);
  }

  public ReconcileOptions withClock(Clock newClock) {
    return new ReconcileOptions(maxBytesPerCommit, targetFileSizeBytes, rowGroupRows,
        maxCommitAttempts, duckdbThreads, keyIndexBytes, defaultTombstoneRetention, newClock);
  }
}

package io.storageengine.ingest;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.List;

/**
 * Tuning of ingestion, with the defaults of ARCHITECTURE.md 6.1 and 6.4 in one place.
 * {@link #SETTINGS} declare the flag, variable and default of each field; {@link #from} reads them.
 *
 * @param flushInterval how long a table's group commit collects writes before it writes one WAL
 *     segment ({@code --ingest.flush-interval}, default 1 s)
 * @param flushBytes a segment is written as soon as this many Arrow IPC bytes are waiting
 *     ({@code --ingest.flush-bytes}, default 64 MiB)
 * @param maxUnacknowledgedBatches per stream: reading stops while this many batches wait for
 *     their ack (default 32)
 * @param maxStreamBytes per stream: reading stops while this many bytes wait for their ack;
 *     also the memory limit of the stream's allocator and the largest accepted batch (256 MiB)
 * @param globalBytes all streams together never hold more than this many unacknowledged bytes
 *     (default 1 GiB)
 * @param flushThreads size of the daemon pool that writes segments (default 4)
 */
public record IngestConfig(
    Duration flushInterval,
    long flushBytes,
    int maxUnacknowledgedBatches,
    long maxStreamBytes,
    long globalBytes,
    int flushThreads) {

  public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofSeconds(1);
  public static final long DEFAULT_FLUSH_BYTES = 64L << 20;
  public static final int DEFAULT_MAX_UNACKNOWLEDGED_BATCHES = 32;
  public static final long DEFAULT_MAX_STREAM_BYTES = 256L << 20;
  public static final long DEFAULT_GLOBAL_BYTES = 1L << 30;
  public static final int DEFAULT_FLUSH_THREADS = 4;

  public static final Setting<Duration> FLUSH_INTERVAL = Setting.duration("ingest.flush-interval", "1s",
      "group-commit window per table (e.g. 200ms, 1s)");
  public static final Setting<Long> FLUSH_BYTES = Setting.size("ingest.flush-bytes", "64MiB",
      "group-commit size threshold per table");
  public static final Setting<Long> MEMORY_LIMIT = Setting.size("ingest.memory-limit", "1GiB",
      "global budget of unacknowledged ingest bytes");
  public static final Setting<Integer> MAX_UNACKNOWLEDGED_BATCHES = Setting.integer(
      "ingest.max-unacknowledged-batches", "32", 1, "per stream: reading pauses while this many batches wait for their ack");
  public static final Setting<Long> MAX_STREAM_BYTES = Setting.size("ingest.max-stream-bytes", "256MiB",
      "per stream: unacknowledged bytes before reading pauses; also the largest accepted batch");
  public static final Setting<Integer> FLUSH_THREADS = Setting.integer("ingest.flush-threads", "4", 1,
      "threads that write WAL segments");
  /** Every setting of ingestion. */
  public static final List<Setting<?>> SETTINGS = List.of(FLUSH_INTERVAL, FLUSH_BYTES, MEMORY_LIMIT,
      MAX_UNACKNOWLEDGED_BATCHES, MAX_STREAM_BYTES, FLUSH_THREADS);

  public IngestConfig {
    if (flushInterval == null || flushInterval.isNegative() || flushInterval.isZero()) {
      throw SeException.invalid("ingest.flush-interval must be positive, got %s", flushInterval);
    }
    requirePositive("ingest.flush-bytes", flushBytes);
    requirePositive("ingest.max-unacknowledged-batches", maxUnacknowledgedBatches);
    requirePositive("ingest.max-stream-bytes", maxStreamBytes);
    requirePositive("ingest.global-bytes", globalBytes);
    requirePositive("ingest.flush-threads", flushThreads);
  }

  /** Every default. */
  public static IngestConfig defaults() {
    return new IngestConfig(DEFAULT_FLUSH_INTERVAL, DEFAULT_FLUSH_BYTES,
        DEFAULT_MAX_UNACKNOWLEDGED_BATCHES, DEFAULT_MAX_STREAM_BYTES, DEFAULT_GLOBAL_BYTES,
        DEFAULT_FLUSH_THREADS);
  }

  /** The config given by {@link #SETTINGS} in {@code source}. */
  public static IngestConfig from(ConfigSource source) {
    return new IngestConfig(source.get(FLUSH_INTERVAL), source.get(FLUSH_BYTES),
        source.get(MAX_UNACKNOWLEDGED_BATCHES), source.get(MAX_STREAM_BYTES), source.get(MEMORY_LIMIT),
        source.get(FLUSH_THREADS));
  }

  public IngestConfig withFlushInterval(Duration value) {
    return new IngestConfig(value, flushBytes, maxUnacknowledgedBatches, maxStreamBytes,
        globalBytes, flushThreads);
  }

  public IngestConfig withFlushBytes(long value) {
    return new IngestConfig(flushInterval, value, maxUnacknowledgedBatches, maxStreamBytes,
        globalBytes, flushThreads);
  }

  public IngestConfig withMaxUnacknowledgedBatches(int value) {
    return new IngestConfig(flushInterval, flushBytes, value, maxStreamBytes, globalBytes,
        flushThreads);
  }

  public IngestConfig withMaxStreamBytes(long value) {
    return new IngestConfig(flushInterval, flushBytes, maxUnacknowledgedBatches, value,
        globalBytes, flushThreads);
  }

  public IngestConfig withGlobalBytes(long value) {
    return new IngestConfig(flushInterval, flushBytes, maxUnacknowledgedBatches, maxStreamBytes,
        value, flushThreads);
  }

  public IngestConfig withFlushThreads(int value) {
    return new IngestConfig(flushInterval, flushBytes, maxUnacknowledgedBatches, maxStreamBytes,
        globalBytes, value);
  }

  private static void requirePositive(String name, long value) {
    if (value <= 0) {
      throw SeException.invalid("%s must be positive, got %d", name, value);
    }
  }
}

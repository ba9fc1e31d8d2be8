package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Settings of the query engine; {@link #SETTINGS} declare the flag, variable and default of each
 * field and {@link #from} reads them. Where data file copies and spill files live, and how many
 * bytes of copies are kept, is the DuckDB runtime's ({@link io.storageengine.duckdb.DuckRuntime}).
 *
 * @param duckdbMemoryLimit DuckDB {@code memory_limit} of one query, e.g. {@code 1GB}
 * @param duckdbThreads DuckDB worker threads of one query
 * @param batchRows rows per Arrow batch streamed to clients
 * @param maxSessions Flight SQL sessions (session options) kept by the server
 * @param limits what one query, one tenant and all queries may use (see {@link QueryLimits})
 * @param tailWarmInterval how often the WAL tail folds of entity tables read whole lately are
 *     checked and grown in the background ({@link TailWarmer}); zero: never
 */
public record QueryConfig(
    String duckdbMemoryLimit,
    int duckdbThreads,
    int batchRows,
    int maxSessions,
    QueryLimits limits,
    Duration tailWarmInterval) {

  public static final String DEFAULT_MEMORY_LIMIT = "1GB";
  public static final int DEFAULT_THREADS = 2;
  public static final int DEFAULT_BATCH_ROWS = 8192;
  public static final int DEFAULT_MAX_SESSIONS = 10_000;
  public static final Duration DEFAULT_TAIL_WARM_INTERVAL = Duration.ofMillis(100);
  private static final Pattern DUCKDB_SIZE = DuckDbSizes.PATTERN;

  public static final Setting<String> MEMORY_LIMIT = Setting.matching("query.memory-limit", "1GB", DUCKDB_SIZE,
      "a size such as 1GB", "SIZE", "DuckDB memory_limit of one query");
  public static final Setting<Integer> DUCKDB_THREADS = Setting.integer("query.duckdb-threads", "2", 1,
      "DuckDB worker threads of one query");
  public static final Setting<Integer> BATCH_ROWS = Setting.integer("query.batch-rows", "8192", 1,
      "rows per Arrow batch streamed to clients");
  public static final Setting<Integer> MAX_SESSIONS = Setting.integer("query.max-sessions", "10000", 1,
      "Flight SQL sessions (session options) kept by the server");
  public static final Setting<Duration> TAIL_WARM_INTERVAL = Setting.duration("query.tail-warm-interval", "100ms",
      "how often the WAL tail folds of entity tables queried whole in the last 30 s are grown in the background "
          + "when a segment arrived, so the next query finds the newest rows folded (0ms: never)");
  /** Every setting of the query engine, its {@link QueryLimits} included. */
  public static final List<Setting<?>> SETTINGS = java.util.stream.Stream.concat(
      java.util.stream.Stream.of(MEMORY_LIMIT, DUCKDB_THREADS, BATCH_ROWS, MAX_SESSIONS, TAIL_WARM_INTERVAL),
      QueryLimits.SETTINGS.stream()).toList();

  public QueryConfig {
    if (duckdbMemoryLimit == null || !DUCKDB_SIZE.matcher(duckdbMemoryLimit).matches()) {
      throw SeException.invalid("query memory limit `%s`: expected a size such as 1GB", duckdbMemoryLimit);
    }
    DuckDbSizes.bytes(duckdbMemoryLimit);
    if (duckdbThreads < 1) {
      throw SeException.invalid("query threads `%d`: must be at least 1", duckdbThreads);
    }
    if (batchRows < 1 || maxSessions < 1) {
      throw SeException.invalid("query batch rows and sessions must be positive");
    }
    if (limits == null) {
      throw SeException.invalid("query limits are required");
    }
    if (tailWarmInterval == null || tailWarmInterval.isNegative()) {
      throw SeException.invalid("query tail warm interval %s: must not be negative", tailWarmInterval);
    }
    long perQuery = DuckDbSizes.bytes(duckdbMemoryLimit);
    if (perQuery > limits.totalMemoryBytes()) {
      throw SeException.invalid("query memory limit %s is more than the total query memory of %d bytes "
          + "(--query.total-memory): no query could run", duckdbMemoryLimit, limits.totalMemoryBytes());
    }
  }

  /** A config with the default {@link QueryLimits}. */
  public QueryConfig(String duckdbMemoryLimit, int duckdbThreads, int batchRows, int maxSessions) {
    this(duckdbMemoryLimit, duckdbThreads, batchRows, maxSessions, QueryLimits.defaults());
  }

  /** A config whose WAL tail folds are warmed every {@link #DEFAULT_TAIL_WARM_INTERVAL}. */
  public QueryConfig(String duckdbMemoryLimit, int duckdbThreads, int batchRows, int maxSessions, QueryLimits limits) {
    this(duckdbMemoryLimit, duckdbThreads, batchRows, maxSessions, limits, DEFAULT_TAIL_WARM_INTERVAL);
  }

  /** The DuckDB {@code memory_limit} of one query in bytes. */
  public long memoryLimitBytes() {
    return DuckDbSizes.bytes(duckdbMemoryLimit);
  }

  /** The defaults. */
  public static QueryConfig defaults() {
    return new QueryConfig(DEFAULT_MEMORY_LIMIT, DEFAULT_THREADS, DEFAULT_BATCH_ROWS, DEFAULT_MAX_SESSIONS);
  }

  /** The config given by {@link #SETTINGS} in {@code source}. */
  public static QueryConfig from(ConfigSource source) {
    return new QueryConfig(source.get(MEMORY_LIMIT), source.get(DUCKDB_THREADS), source.get(BATCH_ROWS),
        source.get(MAX_SESSIONS), QueryLimits.from(source), source.get(TAIL_WARM_INTERVAL));
  }

  public QueryConfig withMemoryLimit(String limit) {
    return new QueryConfig(limit, duckdbThreads, batchRows, maxSessions, limits, tailWarmInterval);
  }

  public QueryConfig withThreads(int threads) {
    return new QueryConfig(duckdbMemoryLimit, threads, batchRows, maxSessions, limits, tailWarmInterval);
  }

  public QueryConfig withBatchRows(int rows) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, rows, maxSessions, limits, tailWarmInterval);
  }

  public QueryConfig withLimits(QueryLimits newLimits) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, batchRows, maxSessions, newLimits, tailWarmInterval);
  }

  public QueryConfig withTailWarmInterval(Duration interval) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, batchRows, maxSessions, limits, interval);
  }
}

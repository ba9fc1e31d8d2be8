package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
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
 */
public record QueryConfig(
    String duckdbMemoryLimit,
    int duckdbThreads,
    int batchRows,
    int maxSessions,
    QueryLimits limits) {

  public static final String DEFAULT_MEMORY_LIMIT = "1GB";
  public static final int DEFAULT_THREADS = 2;
  public static final int DEFAULT_BATCH_ROWS = 8192;
  public static final int DEFAULT_MAX_SESSIONS = 10_000;
  private static final Pattern DUCKDB_SIZE = DuckDbSizes.PATTERN;

  public static final Setting<String> MEMORY_LIMIT = Setting.matching("query.memory-limit", "1GB", DUCKDB_SIZE,
      "a size such as 1GB", "SIZE", "DuckDB memory_limit of one query");
  public static final Setting<Integer> DUCKDB_THREADS = Setting.integer("query.duckdb-threads", "2", 1,
      "DuckDB worker threads of one query");
  public static final Setting<Integer> BATCH_ROWS = Setting.integer("query.batch-rows", "8192", 1,
      "rows per Arrow batch streamed to clients");
  public static final Setting<Integer> MAX_SESSIONS = Setting.integer("query.max-sessions", "10000", 1,
      "Flight SQL sessions (session options) kept by the server");
  /** Every setting of the query engine, its {@link QueryLimits} included. */
  public static final List<Setting<?>> SETTINGS = java.util.stream.Stream.concat(
      java.util.stream.Stream.of(MEMORY_LIMIT, DUCKDB_THREADS, BATCH_ROWS, MAX_SESSIONS),
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
        source.get(MAX_SESSIONS), QueryLimits.from(source));
  }

  public QueryConfig withMemoryLimit(String limit) {
    return new QueryConfig(limit, duckdbThreads, batchRows, maxSessions, limits);
  }

  public QueryConfig withThreads(int threads) {
    return new QueryConfig(duckdbMemoryLimit, threads, batchRows, maxSessions, limits);
  }

  public QueryConfig withBatchRows(int rows) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, rows, maxSessions, limits);
  }

  public QueryConfig withLimits(QueryLimits newLimits) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, batchRows, maxSessions, newLimits);
  }
}

package io.storageengine.query;

import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Settings of the query engine.
 *
 * @param duckdbMemoryLimit DuckDB {@code memory_limit} of one query, e.g. {@code 1GB}
 * @param duckdbThreads DuckDB worker threads of one query
 * @param localDirectory private working directory: the data file cache and DuckDB spill files
 *     live under it
 * @param cacheMaxBytes upper bound of the local copies of remote data files (LRU by bytes)
 * @param batchRows rows per Arrow batch streamed to clients
 * @param maxPreparedStatements no longer bounds anything: prepared statement handles are
 *     self-contained (the server keeps none); kept so existing configurations stay valid
 * @param maxSessions Flight SQL sessions (session options) kept by the server
 */
public record QueryConfig(
    String duckdbMemoryLimit,
    int duckdbThreads,
    Path localDirectory,
    long cacheMaxBytes,
    int batchRows,
    int maxPreparedStatements,
    int maxSessions) {

  public static final String DEFAULT_MEMORY_LIMIT = "1GB";
  public static final int DEFAULT_THREADS = 2;
  public static final long DEFAULT_CACHE_MAX_BYTES = 1L << 30;
  public static final int DEFAULT_BATCH_ROWS = 8192;
  public static final int DEFAULT_MAX_PREPARED_STATEMENTS = 10_000;
  public static final int DEFAULT_MAX_SESSIONS = 10_000;

  public QueryConfig {
    Objects.requireNonNull(localDirectory, "localDirectory");
    if (duckdbMemoryLimit == null || !duckdbMemoryLimit.matches("[0-9]+(\\.[0-9]+)?\\s*[A-Za-z]*")) {
      throw SeException.invalid("query memory limit `%s`: expected a size such as 1GB", duckdbMemoryLimit);
    }
    if (duckdbThreads < 1) {
      throw SeException.invalid("query threads `%d`: must be at least 1", duckdbThreads);
    }
    if (cacheMaxBytes < 0 || batchRows < 1 || maxPreparedStatements < 1 || maxSessions < 1) {
      throw SeException.invalid("query cache size, batch rows, prepared statements and sessions must be positive");
    }
  }

  /** The defaults, working under {@code localDirectory}. */
  public static QueryConfig defaults(Path localDirectory) {
    return new QueryConfig(DEFAULT_MEMORY_LIMIT, DEFAULT_THREADS, localDirectory, DEFAULT_CACHE_MAX_BYTES,
        DEFAULT_BATCH_ROWS, DEFAULT_MAX_PREPARED_STATEMENTS, DEFAULT_MAX_SESSIONS);
  }

  public QueryConfig withMemoryLimit(String limit) {
    return new QueryConfig(limit, duckdbThreads, localDirectory, cacheMaxBytes, batchRows, maxPreparedStatements, maxSessions);
  }

  public QueryConfig withThreads(int threads) {
    return new QueryConfig(duckdbMemoryLimit, threads, localDirectory, cacheMaxBytes, batchRows, maxPreparedStatements, maxSessions);
  }

  public QueryConfig withCacheMaxBytes(long bytes) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, localDirectory, bytes, batchRows, maxPreparedStatements, maxSessions);
  }

  public QueryConfig withBatchRows(int rows) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, localDirectory, cacheMaxBytes, rows, maxPreparedStatements, maxSessions);
  }
}

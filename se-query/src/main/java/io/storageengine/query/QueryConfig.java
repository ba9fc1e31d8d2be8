package io.storageengine.query;

import io.storageengine.common.SeException;

/**
 * Settings of the query engine. Where data file copies and spill files live, and how many bytes
 * of copies are kept, is the DuckDB runtime's ({@link io.storageengine.duckdb.DuckRuntime}).
 *
 * @param duckdbMemoryLimit DuckDB {@code memory_limit} of one query, e.g. {@code 1GB}
 * @param duckdbThreads DuckDB worker threads of one query
 * @param batchRows rows per Arrow batch streamed to clients
 * @param maxPreparedStatements no longer bounds anything: prepared statement handles are
 *     self-contained (the server keeps none); kept so existing configurations stay valid
 * @param maxSessions Flight SQL sessions (session options) kept by the server
 */
public record QueryConfig(
    String duckdbMemoryLimit,
    int duckdbThreads,
    int batchRows,
    int maxPreparedStatements,
    int maxSessions) {

  public static final String DEFAULT_MEMORY_LIMIT = "1GB";
  public static final int DEFAULT_THREADS = 2;
  public static final int DEFAULT_BATCH_ROWS = 8192;
  public static final int DEFAULT_MAX_PREPARED_STATEMENTS = 10_000;
  public static final int DEFAULT_MAX_SESSIONS = 10_000;

  public QueryConfig {
    if (duckdbMemoryLimit == null || !duckdbMemoryLimit.matches("[0-9]+(\\.[0-9]+)?\\s*[A-Za-z]*")) {
      throw SeException.invalid("query memory limit `%s`: expected a size such as 1GB", duckdbMemoryLimit);
    }
    if (duckdbThreads < 1) {
      throw SeException.invalid("query threads `%d`: must be at least 1", duckdbThreads);
    }
    if (batchRows < 1 || maxPreparedStatements < 1 || maxSessions < 1) {
      throw SeException.invalid("query batch rows, prepared statements and sessions must be positive");
    }
  }

  /** The defaults. */
  public static QueryConfig defaults() {
    return new QueryConfig(DEFAULT_MEMORY_LIMIT, DEFAULT_THREADS, DEFAULT_BATCH_ROWS, DEFAULT_MAX_PREPARED_STATEMENTS,
        DEFAULT_MAX_SESSIONS);
  }

  public QueryConfig withMemoryLimit(String limit) {
    return new QueryConfig(limit, duckdbThreads, batchRows, maxPreparedStatements, maxSessions);
  }

  public QueryConfig withThreads(int threads) {
    return new QueryConfig(duckdbMemoryLimit, threads, batchRows, maxPreparedStatements, maxSessions);
  }

  public QueryConfig withBatchRows(int rows) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, rows, maxPreparedStatements, maxSessions);
  }
}

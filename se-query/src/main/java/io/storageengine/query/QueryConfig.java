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
 */
public record QueryConfig(
    String duckdbMemoryLimit,
    int duckdbThreads,
    int batchRows,
    int maxSessions) {

  public static final String DEFAULT_MEMORY_LIMIT = "1GB";
  public static final int DEFAULT_THREADS = 2;
  public static final int DEFAULT_BATCH_ROWS = 8192;
  public static final int DEFAULT_MAX_SESSIONS = 10_000;
  private static final Pattern DUCKDB_SIZE = Pattern.compile("[0-9]+(\\.[0-9]+)?\\s*[A-Za-z]*");

  public static final Setting<String> MEMORY_LIMIT = Setting.matching("query.memory-limit", "1GB", DUCKDB_SIZE,
      "a size such as 1GB", "SIZE", "DuckDB memory_limit of one query");
  public static final Setting<Integer> DUCKDB_THREADS = Setting.integer("query.duckdb-threads", "2", 1,
      "DuckDB worker threads of one query");
  public static final Setting<Integer> BATCH_ROWS = Setting.integer("query.batch-rows", "8192", 1,
      "rows per Arrow batch streamed to clients");
  public static final Setting<Integer> MAX_SESSIONS = Setting.integer("query.max-sessions", "10000", 1,
      "Flight SQL sessions (session options) kept by the server");
  /** Every setting of the query engine. */
  public static final List<Setting<?>> SETTINGS = List.of(MEMORY_LIMIT, DUCKDB_THREADS, BATCH_ROWS, MAX_SESSIONS);

  public QueryConfig {
    if (duckdbMemoryLimit == null || !DUCKDB_SIZE.matcher(duckdbMemoryLimit).matches()) {
      throw SeException.invalid("query memory limit `%s`: expected a size such as 1GB", duckdbMemoryLimit);
    }
    if (duckdbThreads < 1) {
      throw SeException.invalid("query threads `%d`: must be at least 1", duckdbThreads);
    }
    if (batchRows < 1 || maxSessions < 1) {
      throw SeException.invalid("query batch rows and sessions must be positive");
    }
  }

  /** The defaults. */
  public static QueryConfig defaults() {
    return new QueryConfig(DEFAULT_MEMORY_LIMIT, DEFAULT_THREADS, DEFAULT_BATCH_ROWS, DEFAULT_MAX_SESSIONS);
  }

  /** The config given by {@link #SETTINGS} in {@code source}. */
  public static QueryConfig from(ConfigSource source) {
    return new QueryConfig(source.get(MEMORY_LIMIT), source.get(DUCKDB_THREADS), source.get(BATCH_ROWS),
        source.get(MAX_SESSIONS));
  }

  public QueryConfig withMemoryLimit(String limit) {
    return new QueryConfig(limit, duckdbThreads, batchRows, maxSessions);
  }

  public QueryConfig withThreads(int threads) {
    return new QueryConfig(duckdbMemoryLimit, threads, batchRows, maxSessions);
  }

  public QueryConfig withBatchRows(int rows) {
    return new QueryConfig(duckdbMemoryLimit, duckdbThreads, rows, maxSessions);
  }
}

package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.List;

/**
 * What one query, one tenant and all queries of the process may use, so that one tenant cannot
 * starve another; {@link #SETTINGS} declare the flag, variable and default of each field. Each
 * limit's error names the limit and its setting.
 *
 * @param timeout how long a query may run once admitted (its DuckDB work is then stopped), and
 *     how long it may wait for admission
 * @param tenantConcurrency queries of one tenant running at once
 * @param tenantQueue queries of one tenant waiting for admission; more are RESOURCE_EXHAUSTED
 * @param totalMemoryBytes DuckDB memory of all running queries of the process: each reserves
 *     its {@code query.memory-limit} while it runs
 * @param spillLimit DuckDB {@code max_temp_directory_size} of one query, e.g. {@code 10GB}
 * @param maxStatementBytes size of a statement's text (UTF-8), checked before it is parsed
 * @param maxStatementDepth nesting of parentheses in a statement, checked before it is parsed,
 *     and (scaled, see {@link StatementLimits}) of its parse tree
 * @param maxResultRows rows one result may have
 * @param maxResultBytes Arrow bytes one result may have
 * @param cpuThreads DuckDB threads of all running queries of the process together: a query
 *     starts with {@code query.duckdb-threads} when that many are free, else with those free,
 *     and always with at least one (see {@link QueryAdmission})
 * @param demoteAfter how long a query runs (from its admission) before the OS priority of the
 *     threads running its DuckDB work is lowered to {@code demotedNice}, so that it yields the
 *     cores to shorter queries, ingestion and reconciliation while they run, and keeps them
 *     otherwise; zero never lowers it (see {@link QueryThreads})
 * @param demotedNice the Linux nice value (1..19) of a demoted query's threads
 */
public record QueryLimits(
    Duration timeout,
    int tenantConcurrency,
    int tenantQueue,
    long totalMemoryBytes,
    String spillLimit,
    long maxStatementBytes,
    int maxStatementDepth,
    long maxResultRows,
    long maxResultBytes,
    int cpuThreads,
    Duration demoteAfter,
    int demotedNice) {

  public static final Setting<Duration> TIMEOUT = Setting.duration("query.timeout", "5m",
      "longest a query may run (its DuckDB work is then stopped) and longest it may wait for admission");
  public static final Setting<Integer> TENANT_CONCURRENCY = Setting.integer("query.tenant-concurrency", "2", 1,
      "queries of one tenant running at once");
  public static final Setting<Integer> TENANT_QUEUE = Setting.integer("query.tenant-queue", "16", 0,
      "queries of one tenant waiting for admission; more are refused RESOURCE_EXHAUSTED");
  public static final Setting<Long> TOTAL_MEMORY = Setting.size("query.total-memory", "4GiB",
      "DuckDB memory of all running queries: each reserves its query.memory-limit, others wait");
  public static final Setting<String> SPILL_LIMIT = Setting.matching("query.spill-limit", "10GB",
      DuckDbSizes.PATTERN, "a size such as 10GB", "SIZE",
      "DuckDB max_temp_directory_size of one query (spill files)");
  public static final Setting<Long> MAX_STATEMENT_SIZE = Setting.size("query.max-statement-size", "1MiB",
      "largest statement text (UTF-8), checked before parsing");
  public static final Setting<Integer> MAX_STATEMENT_DEPTH = Setting.integer("query.max-statement-depth", "200", 1,
      "deepest nesting of parentheses (and of the parse tree) in a statement");
  public static final Setting<Integer> MAX_RESULT_ROWS = Setting.integer("query.max-result-rows", "100000000", 1,
      "most rows one result may have");
  public static final Setting<Long> MAX_RESULT_BYTES = Setting.size("query.max-result-bytes", "8GiB",
      "most Arrow bytes one result may have");
  /** Empty: {@link #defaultCpuThreads()}. */
  public static final Setting<Integer> CPU_THREADS = Setting.integer("query.cpu-threads", "", 1,
      "DuckDB threads of all running queries together; a query gets query.duckdb-threads only when that many "
          + "are free, and at least 1 (default: one per processor)");
  public static final Setting<Duration> DEMOTE_AFTER = Setting.duration("query.demote-after", "1s",
      "how long a query runs before its threads' OS priority is lowered to query.demoted-nice, so that it yields "
          + "the cores to shorter work (0s: never; Linux only)");
  public static final Setting<Integer> DEMOTED_NICE = Setting.integer("query.demoted-nice", "10", 1,
      "the nice value (1..19) of the threads of a query running past query.demote-after");
  /** Every setting of the limits. */
  public static final List<Setting<?>> SETTINGS = List.of(TIMEOUT, TENANT_CONCURRENCY, TENANT_QUEUE, TOTAL_MEMORY,
      SPILL_LIMIT, MAX_STATEMENT_SIZE, MAX_STATEMENT_DEPTH, MAX_RESULT_ROWS, MAX_RESULT_BYTES, CPU_THREADS,
      DEMOTE_AFTER, DEMOTED_NICE);

  public QueryLimits {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw SeException.invalid("query timeout `%s`: must be positive", timeout);
    }
    if (tenantConcurrency < 1 || tenantQueue < 0) {
      throw SeException.invalid("query tenant concurrency %d and queue %d: need at least 1 and 0",
          tenantConcurrency, tenantQueue);
    }
    if (spillLimit == null || !DuckDbSizes.PATTERN.matcher(spillLimit).matches()) {
      throw SeException.invalid("query spill limit `%s`: expected a size such as 10GB", spillLimit);
    }
    DuckDbSizes.bytes(spillLimit);
    if (totalMemoryBytes < 1 || maxStatementBytes < 1 || maxStatementDepth < 1 || maxResultRows < 1
        || maxResultBytes < 1 || cpuThreads < 1) {
      throw SeException.invalid("query limits must be positive");
    }
    if (demoteAfter == null || demoteAfter.isNegative()) {
      throw SeException.invalid("query demote-after `%s`: must be zero (never) or positive", demoteAfter);
    }
    if (demotedNice < 1 || demotedNice > 19) {
      throw SeException.invalid("query demoted nice %d: must be 1..19 (a lower priority than the default 0)",
          demotedNice);
    }
  }

  /**
   * One thread per processor: a query alone keeps DuckDB's parallelism (on 2 cores, one
   * processor less one would run every query on one thread, half as fast for a large scan), and
   * since a thread DuckDB gives a running query is not taken back until it ends, the budget
   * bounds what running queries hold; the queries that come next still get one thread each.
   */
  public static int defaultCpuThreads() {
    return Math.max(1, Runtime.getRuntime().availableProcessors());
  }

  /** The defaults. */
  public static QueryLimits defaults() {
    return from(ConfigSource.defaults());
  }

  /** The limits given by {@link #SETTINGS} in {@code source}. */
  public static QueryLimits from(ConfigSource source) {
    return new QueryLimits(source.get(TIMEOUT), source.get(TENANT_CONCURRENCY), source.get(TENANT_QUEUE),
        source.get(TOTAL_MEMORY), source.get(SPILL_LIMIT), source.get(MAX_STATEMENT_SIZE),
        source.get(MAX_STATEMENT_DEPTH), (long) source.get(MAX_RESULT_ROWS), source.get(MAX_RESULT_BYTES),
        source.find(CPU_THREADS).orElseGet(QueryLimits::defaultCpuThreads), source.get(DEMOTE_AFTER),
        source.get(DEMOTED_NICE));
  }

  public QueryLimits withTimeout(Duration limit) {
    return new QueryLimits(limit, tenantConcurrency, tenantQueue, totalMemoryBytes, spillLimit, maxStatementBytes,
        maxStatementDepth, maxResultRows, maxResultBytes, cpuThreads, demoteAfter, demotedNice);
  }

  public QueryLimits withTenantConcurrency(int running, int queued) {
    return new QueryLimits(timeout, running, queued, totalMemoryBytes, spillLimit, maxStatementBytes,
        maxStatementDepth, maxResultRows, maxResultBytes, cpuThreads, demoteAfter, demotedNice);
  }

  public QueryLimits withTotalMemory(long bytes) {
    return new QueryLimits(timeout, tenantConcurrency, tenantQueue, bytes, spillLimit, maxStatementBytes,
        maxStatementDepth, maxResultRows, maxResultBytes, cpuThreads, demoteAfter, demotedNice);
  }

  public QueryLimits withStatementLimits(long bytes, int depth) {
    return new QueryLimits(timeout, tenantConcurrency, tenantQueue, totalMemoryBytes, spillLimit, bytes, depth,
        maxResultRows, maxResultBytes, cpuThreads, demoteAfter, demotedNice);
  }

  public QueryLimits withCpuThreads(int threads) {
    return new QueryLimits(timeout, tenantConcurrency, tenantQueue, totalMemoryBytes, spillLimit, maxStatementBytes,
        maxStatementDepth, maxResultRows, maxResultBytes, threads, demoteAfter, demotedNice);
  }

  /** Queries running longer than {@code after} (zero: never) get their threads' nice set to {@code nice}. */
  public QueryLimits withDemotion(Duration after, int nice) {
    return new QueryLimits(timeout, tenantConcurrency, tenantQueue, totalMemoryBytes, spillLimit, maxStatementBytes,
        maxStatementDepth, maxResultRows, maxResultBytes, cpuThreads, after, nice);
  }

  public QueryLimits withResultLimits(long rows, long bytes) {
    return new QueryLimits(timeout, tenantConcurrency, tenantQueue, totalMemoryBytes, spillLimit, maxStatementBytes,
        maxStatementDepth, rows, bytes, cpuThreads, demoteAfter, demotedNice);
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every setting of the query engine: its flag, variable and default, and the field it sets. */
class QueryConfigTest {
  @Test
  void everySettingAndDefaultIsPinned() {
    assertThat(QueryConfig.SETTINGS.stream()
        .collect(Collectors.toMap(s -> s.flag() + " " + s.environmentVariable(), Setting::defaultValue)))
        .containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
            Map.entry("--query.memory-limit SE_QUERY_MEMORY_LIMIT", "1GB"),
            Map.entry("--query.duckdb-threads SE_QUERY_DUCKDB_THREADS", "2"),
            Map.entry("--query.batch-rows SE_QUERY_BATCH_ROWS", "8192"),
            Map.entry("--query.max-sessions SE_QUERY_MAX_SESSIONS", "10000"),
            Map.entry("--query.tail-warm-interval SE_QUERY_TAIL_WARM_INTERVAL", "100ms"),
            Map.entry("--query.timeout SE_QUERY_TIMEOUT", "5m"),
            Map.entry("--query.tenant-concurrency SE_QUERY_TENANT_CONCURRENCY", "2"),
            Map.entry("--query.tenant-queue SE_QUERY_TENANT_QUEUE", "16"),
            Map.entry("--query.total-memory SE_QUERY_TOTAL_MEMORY", "4GiB"),
            Map.entry("--query.spill-limit SE_QUERY_SPILL_LIMIT", "10GB"),
            Map.entry("--query.max-statement-size SE_QUERY_MAX_STATEMENT_SIZE", "1MiB"),
            Map.entry("--query.max-statement-depth SE_QUERY_MAX_STATEMENT_DEPTH", "200"),
            Map.entry("--query.max-result-rows SE_QUERY_MAX_RESULT_ROWS", "100000000"),
            Map.entry("--query.max-result-bytes SE_QUERY_MAX_RESULT_BYTES", "8GiB"),
            Map.entry("--query.cpu-threads SE_QUERY_CPU_THREADS", ""),
            Map.entry("--query.demote-after SE_QUERY_DEMOTE_AFTER", "1s"),
            Map.entry("--query.demoted-nice SE_QUERY_DEMOTED_NICE", "10")));
    QueryConfig config = QueryConfig.defaults();
    assertThat(config).isEqualTo(new QueryConfig("1GB", 2, 8192, 10_000));
    assertThat(config.tailWarmInterval()).isEqualTo(java.time.Duration.ofMillis(100));
    assertThat(config.limits()).isEqualTo(new QueryLimits(java.time.Duration.ofMinutes(5), 2, 16, 4L << 30, "10GB",
        1L << 20, 200, 100_000_000L, 8L << 30, Math.max(1, Runtime.getRuntime().availableProcessors()),
        java.time.Duration.ofSeconds(1), 10));
    assertThat(config.memoryLimitBytes()).isEqualTo(1_000_000_000L);
    assertThat(QueryConfig.from(ConfigSource.defaults())).isEqualTo(config);
  }

  @Test
  void everySettingSetsItsField() {
    QueryConfig config = QueryConfig.from(ConfigSource.of(Map.of(
        "query.memory-limit", "512MB",
        "query.duckdb-threads", "4"), Map.of(
        "SE_QUERY_BATCH_ROWS", "1024",
        "SE_QUERY_MAX_SESSIONS", "50", "SE_QUERY_TAIL_WARM_INTERVAL", "0ms")));
    assertThat(config).isEqualTo(new QueryConfig("512MB", 4, 1024, 50).withTailWarmInterval(java.time.Duration.ZERO));
    QueryLimits limits = QueryLimits.from(ConfigSource.of(Map.of(
        "query.timeout", "30s", "query.tenant-concurrency", "3", "query.tenant-queue", "0",
        "query.total-memory", "2GiB", "query.spill-limit", "1GiB"), Map.of(
        "SE_QUERY_MAX_STATEMENT_SIZE", "64KiB", "SE_QUERY_MAX_STATEMENT_DEPTH", "10",
        "SE_QUERY_MAX_RESULT_ROWS", "5", "SE_QUERY_MAX_RESULT_BYTES", "1MiB", "SE_QUERY_CPU_THREADS", "6",
        "SE_QUERY_DEMOTE_AFTER", "0s", "SE_QUERY_DEMOTED_NICE", "19")));
    assertThat(limits).isEqualTo(new QueryLimits(java.time.Duration.ofSeconds(30), 3, 0, 2L << 30, "1GiB",
        64L << 10, 10, 5, 1L << 20, 6, java.time.Duration.ZERO, 19));
  }

  @Test
  void aDemotedNiceOutsideOneToNineteenIsRefusedNamingIt() {
    assertThatThrownBy(() -> QueryLimits.from(ConfigSource.of(Map.of("query.demoted-nice", "20"), Map.of())))
        .hasMessageContaining("query demoted nice 20: must be 1..19");
    assertThatThrownBy(() -> QueryLimits.from(ConfigSource.of(Map.of("query.demoted-nice", "0"), Map.of())))
        .hasMessageContaining("query.demoted-nice");
  }

  @Test
  void aQueryMemoryLimitAboveTheTotalIsRefused() {
    assertThatThrownBy(() -> QueryConfig.from(ConfigSource.of(Map.of(
        "query.memory-limit", "3GB", "query.total-memory", "2GiB"), Map.of())))
        .hasMessage("query memory limit 3GB is more than the total query memory of 2147483648 bytes "
            + "(--query.total-memory): no query could run");
    assertThatThrownBy(() -> QueryConfig.defaults().withMemoryLimit("1 parsec"))
        .hasMessage("size `1 parsec`: unknown unit `parsec` (use KB, MB, GB, TB or KiB, MiB, GiB, TiB)");
  }

  @Test
  void badValuesAreRefusedNamingTheSetting() {
    assertThatThrownBy(() -> QueryConfig.from(ConfigSource.of(Map.of("query.memory-limit", "lots; SET x"), Map.of())))
        .hasMessage("--query.memory-limit: expected a size such as 1GB, got 'lots; SET x'");
    assertThatThrownBy(() -> QueryConfig.from(ConfigSource.of(Map.of(), Map.of("SE_QUERY_DUCKDB_THREADS", "0"))))
        .hasMessage("--query.duckdb-threads: expected an integer >= 1, got '0'");
    QueryConfig config = QueryConfig.defaults();
    assertThatThrownBy(() -> config.withMemoryLimit("lots; SET x")).hasMessageContaining("query memory limit `lots; SET x`");
    assertThatThrownBy(() -> config.withThreads(0)).hasMessageContaining("query threads `0`");
  }
}

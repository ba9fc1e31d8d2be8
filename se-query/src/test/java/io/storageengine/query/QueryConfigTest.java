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
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "--query.memory-limit SE_QUERY_MEMORY_LIMIT", "1GB",
            "--query.duckdb-threads SE_QUERY_DUCKDB_THREADS", "2",
            "--query.batch-rows SE_QUERY_BATCH_ROWS", "8192",
            "--query.max-sessions SE_QUERY_MAX_SESSIONS", "10000"));
    QueryConfig config = QueryConfig.defaults();
    assertThat(config).isEqualTo(new QueryConfig("1GB", 2, 8192, 10_000));
    assertThat(QueryConfig.from(ConfigSource.defaults())).isEqualTo(config);
  }

  @Test
  void everySettingSetsItsField() {
    QueryConfig config = QueryConfig.from(ConfigSource.of(Map.of(
        "query.memory-limit", "512MB",
        "query.duckdb-threads", "4"), Map.of(
        "SE_QUERY_BATCH_ROWS", "1024",
        "SE_QUERY_MAX_SESSIONS", "50")));
    assertThat(config).isEqualTo(new QueryConfig("512MB", 4, 1024, 50));
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

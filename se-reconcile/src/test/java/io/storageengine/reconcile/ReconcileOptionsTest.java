package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every setting of a reconcile pass: its flag, variable and default, and the field it sets. */
class ReconcileOptionsTest {
  @Test
  void everySettingAndDefaultIsPinned() {
    assertThat(ReconcileOptions.SETTINGS.stream()
        .collect(Collectors.toMap(s -> s.flag() + " " + s.environmentVariable(), Setting::defaultValue)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "--reconcile.max-bytes-per-commit SE_RECONCILE_MAX_BYTES_PER_COMMIT", "256MiB",
            "--reconcile.target-file-size SE_RECONCILE_TARGET_FILE_SIZE", "128MiB",
            "--reconcile.row-group-rows SE_RECONCILE_ROW_GROUP_ROWS", "122880",
            "--reconcile.commit-attempts SE_RECONCILE_COMMIT_ATTEMPTS", "5",
            "--reconcile.duckdb-threads SE_RECONCILE_DUCKDB_THREADS", "",
            "--reconcile.key-index-memory SE_RECONCILE_KEY_INDEX_MEMORY", "",
            "--reconcile.tombstone-retention SE_RECONCILE_TOMBSTONE_RETENTION", "168h"));
    ReconcileOptions defaults = ReconcileOptions.defaults();
    assertThat(ReconcileOptions.from(ConfigSource.defaults()).withClock(defaults.clock())).isEqualTo(defaults);
  }

  @Test
  void everySettingSetsItsField() {
    ReconcileOptions options = ReconcileOptions.from(ConfigSource.of(Map.of(
        "reconcile.max-bytes-per-commit", "1MiB",
        "reconcile.target-file-size", "8MiB",
        "reconcile.row-group-rows", "1000",
        "reconcile.key-index-memory", "64MiB"), Map.of(
        "SE_RECONCILE_COMMIT_ATTEMPTS", "2",
        "SE_RECONCILE_DUCKDB_THREADS", "3",
        "SE_RECONCILE_TOMBSTONE_RETENTION", "2h")));
    assertThat(options).isEqualTo(new ReconcileOptions(1L << 20, 8L << 20, 1000, 2, 3, 64L << 20, Duration.ofHours(2),
        options.clock()));
  }

  @Test
  void badValuesNameTheFlag() {
    assertThatThrownBy(() -> ReconcileOptions.from(ConfigSource.of(Map.of("reconcile.duckdb-threads", "0"), Map.of())))
        .hasMessage("--reconcile.duckdb-threads: expected an integer >= 1, got '0'");
    assertThatThrownBy(() -> ReconcileOptions.from(ConfigSource.of(Map.of(), Map.of("SE_RECONCILE_TARGET_FILE_SIZE", "x"))))
        .hasMessage("--reconcile.target-file-size: expected a size such as 64MiB, got 'x'");
  }
}

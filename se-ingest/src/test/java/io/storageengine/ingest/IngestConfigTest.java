package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every setting of ingestion: its flag, variable and default, and the field it sets. */
class IngestConfigTest {
  @Test
  void everySettingAndDefaultIsPinned() {
    assertThat(IngestConfig.SETTINGS.stream()
        .collect(Collectors.toMap(s -> s.flag() + " " + s.environmentVariable(), Setting::defaultValue)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "--ingest.flush-interval SE_INGEST_FLUSH_INTERVAL", "1s",
            "--ingest.flush-bytes SE_INGEST_FLUSH_BYTES", "64MiB",
            "--ingest.memory-limit SE_INGEST_MEMORY_LIMIT", "1GiB",
            "--ingest.max-unacknowledged-batches SE_INGEST_MAX_UNACKNOWLEDGED_BATCHES", "32",
            "--ingest.max-stream-bytes SE_INGEST_MAX_STREAM_BYTES", "256MiB",
            "--ingest.flush-threads SE_INGEST_FLUSH_THREADS", "4"));
    assertThat(IngestConfig.from(ConfigSource.defaults())).isEqualTo(IngestConfig.defaults());
  }

  @Test
  void everySettingSetsItsField() {
    IngestConfig config = IngestConfig.from(ConfigSource.of(Map.of(
        "ingest.flush-interval", "200ms",
        "ingest.flush-bytes", "1MiB",
        "ingest.memory-limit", "2GiB",
        "ingest.max-unacknowledged-batches", "8"), Map.of(
        "SE_INGEST_MAX_STREAM_BYTES", "16MiB",
        "SE_INGEST_FLUSH_THREADS", "2")));
    assertThat(config).isEqualTo(new IngestConfig(Duration.ofMillis(200), 1L << 20, 8, 16L << 20, 2L << 30, 2));
  }

  @Test
  void badValuesNameTheFlag() {
    assertThatThrownBy(() -> IngestConfig.from(ConfigSource.of(Map.of("ingest.flush-threads", "0"), Map.of())))
        .hasMessage("--ingest.flush-threads: expected an integer >= 1, got '0'");
    assertThatThrownBy(() -> IngestConfig.from(ConfigSource.of(Map.of(), Map.of("SE_INGEST_MAX_STREAM_BYTES", "big"))))
        .hasMessage("--ingest.max-stream-bytes: expected a size such as 64MiB, got 'big'");
  }
}

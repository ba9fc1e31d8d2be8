package io.storageengine.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every setting of the broker: its flag, variable and default, and the field it sets. */
class BrokerConfigTest {
  @Test
  void everySettingAndDefaultIsPinned() {
    assertThat(BrokerConfig.SETTINGS.stream()
        .collect(Collectors.toMap(s -> s.flag() + " " + s.environmentVariable(), Setting::defaultValue)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "--broker.lease-duration SE_BROKER_LEASE_DURATION", "30s",
            "--broker.commit-delay SE_BROKER_COMMIT_DELAY", "5ms"));
    BrokerConfig defaults = BrokerConfig.defaults();
    assertThat(defaults).isEqualTo(new BrokerConfig(Duration.ofSeconds(30), Duration.ofMillis(5), RetryPolicy.defaults()));
    assertThat(BrokerConfig.from(ConfigSource.defaults())).isEqualTo(defaults);
  }

  @Test
  void everySettingSetsItsField() {
    BrokerConfig config = BrokerConfig.from(ConfigSource.of(Map.of("broker.lease-duration", "2m"),
        Map.of("SE_BROKER_COMMIT_DELAY", "20ms")));
    assertThat(config).isEqualTo(new BrokerConfig(Duration.ofMinutes(2), Duration.ofMillis(20), RetryPolicy.defaults()));
  }

  @Test
  void badValuesNameTheFlag() {
    assertThatThrownBy(() -> BrokerConfig.from(ConfigSource.of(Map.of("broker.lease-duration", "5ms"), Map.of())))
        .hasMessage("--broker.lease-duration: must be at least 10ms, got '5ms'");
    assertThatThrownBy(() -> BrokerConfig.from(ConfigSource.of(Map.of(), Map.of("SE_BROKER_COMMIT_DELAY", "soon"))))
        .hasMessage("--broker.commit-delay: expected a duration such as 500ms, 1s, 5m, got 'soon'");
  }
}

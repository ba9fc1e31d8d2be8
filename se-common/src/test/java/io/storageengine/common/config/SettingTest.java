package io.storageengine.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The derivation of flags and variables, the precedence of sources and every parser's errors. */
class SettingTest {
  private static final Setting<Duration> INTERVAL = Setting.duration("demo.probe-interval", "500ms", "how often");

  @Test
  void flagAndVariableComeFromTheKey() {
    assertThat(INTERVAL.flag()).isEqualTo("--demo.probe-interval");
    assertThat(INTERVAL.environmentVariable()).isEqualTo("SE_DEMO_PROBE_INTERVAL");
    assertThat(INTERVAL.withAliases("--probe-interval").flags()).containsExactly("--demo.probe-interval", "--probe-interval");
    assertThatThrownBy(() -> Setting.string("Bad_Key", "", "X", "no"))
        .hasMessage("setting key `Bad_Key`: expected lower-case words joined by . or -");
  }

  @Test
  void flagsWinOverEnvironmentWhichWinsOverDefaults() {
    assertThat(ConfigSource.defaults().get(INTERVAL)).isEqualTo(Duration.ofMillis(500));
    ConfigSource env = ConfigSource.of(Map.of(), Map.of("SE_DEMO_PROBE_INTERVAL", " 2s "));
    assertThat(env.get(INTERVAL)).isEqualTo(Duration.ofSeconds(2));
    ConfigSource flag = ConfigSource.of(Map.of("demo.probe-interval", "3m"), Map.of("SE_DEMO_PROBE_INTERVAL", "2s"));
    assertThat(flag.get(INTERVAL)).isEqualTo(Duration.ofMinutes(3));
    assertThat(env.with(INTERVAL, "1h").get(INTERVAL)).isEqualTo(Duration.ofHours(1));
    Setting<Integer> unset = Setting.integer("demo.threads", "", 1, "default: one per processor");
    assertThat(ConfigSource.defaults().find(unset)).isEmpty();
    assertThat(ConfigSource.of(Map.of("demo.threads", "3"), Map.of()).find(unset)).contains(3);
  }

  @Test
  void everyTypeParsesWhatUsersWrite() {
    assertThat(Setting.size("demo.size", "64MiB", "").parse("64MiB")).isEqualTo(64L << 20);
    assertThat(Setting.size("demo.size", "64MiB", "").parse("512kb")).isEqualTo(512L << 10);
    assertThat(Setting.size("demo.size", "64MiB", "").parse("4096")).isEqualTo(4096L);
    assertThat(Setting.integer("demo.n", "1", 0, "").parse("0")).isZero();
    assertThat(Setting.ratio("demo.r", "0.2", "").parse("1")).isEqualTo(1.0);
    assertThat(Setting.bool("demo.b", "true", "").parse("FALSE")).isFalse();
    assertThat(Setting.oneOf("demo.type", "fs", List.of("fs", "s3"), "").parse("s3")).isEqualTo("s3");
    assertThat(Setting.hostPort("demo.address", "", "").parse("[::1]:0"))
        .isEqualTo(InetSocketAddress.createUnresolved("::1", 0));
  }

  @Test
  void badValuesNameTheFlagAndTheValue() {
    assertThatThrownBy(() -> INTERVAL.parse("soon"))
        .isInstanceOfSatisfying(SeException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage("--demo.probe-interval: expected a duration such as 500ms, 1s, 5m, got 'soon'");
    assertThatThrownBy(() -> Setting.size("demo.size", "", "").parse("lots"))
        .hasMessage("--demo.size: expected a size such as 64MiB, got 'lots'");
    assertThatThrownBy(() -> Setting.size("demo.size", "", "").parse("99999999999GiB"))
        .hasMessage("--demo.size: size '99999999999GiB' is too large");
    assertThatThrownBy(() -> Setting.integer("demo.n", "", 1, "").parse("0"))
        .hasMessage("--demo.n: expected an integer >= 1, got '0'");
    assertThatThrownBy(() -> Setting.ratio("demo.r", "", "").parse("0"))
        .hasMessage("--demo.r: expected a number in (0, 1], got '0'");
    assertThatThrownBy(() -> Setting.bool("demo.b", "", "").parse("yes"))
        .hasMessage("--demo.b: expected true or false, got 'yes'");
    assertThatThrownBy(() -> Setting.oneOf("demo.type", "", List.of("fs", "s3", "memory"), "").parse("ftp"))
        .hasMessage("--demo.type: expected fs, s3 or memory, got 'ftp'");
    assertThatThrownBy(() -> Setting.matching("demo.m", "", Pattern.compile("[0-9]+GB"), "a size such as 1GB", "SIZE", "")
        .parse("1; DROP")).hasMessage("--demo.m: expected a size such as 1GB, got '1; DROP'");
    Setting<InetSocketAddress> address = Setting.hostPort("demo.address", "", "");
    assertThatThrownBy(() -> address.parse("nope")).hasMessage("--demo.address: expected host:port, got 'nope'");
    assertThatThrownBy(() -> address.parse("h:x")).hasMessage("--demo.address: port must be a number, got 'x'");
    assertThatThrownBy(() -> address.parse("h:99999")).hasMessage("--demo.address: port 99999 out of range");
  }
}

package io.storageengine.reconcile.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Pins the process defaults of maintenance: every setting's flag, variable and default, the
 * field it sets, and that each is a table property without its {@code se.} prefix.
 */
class MaintenancePolicySettingsTest {
  @Test
  void everySettingAndDefaultIsPinned() {
    assertThat(MaintenancePolicy.SETTINGS.stream()
        .collect(Collectors.toMap(s -> s.flag() + " " + s.environmentVariable(), Setting::defaultValue)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "--maintenance.enabled SE_MAINTENANCE_ENABLED", "true",
            "--maintenance.target-file-size SE_MAINTENANCE_TARGET_FILE_SIZE", "128MiB",
            "--maintenance.min-input-files SE_MAINTENANCE_MIN_INPUT_FILES", "5",
            "--maintenance.delete-ratio SE_MAINTENANCE_DELETE_RATIO", "0.2",
            "--maintenance.snapshot-retention SE_MAINTENANCE_SNAPSHOT_RETENTION", "1h",
            "--maintenance.min-snapshots SE_MAINTENANCE_MIN_SNAPSHOTS", "10",
            "--maintenance.orphan-age SE_MAINTENANCE_ORPHAN_AGE", "24h",
            "--maintenance.wal-gc-age SE_MAINTENANCE_WAL_GC_AGE", "10m",
            "--maintenance.max-manifests SE_MAINTENANCE_MAX_MANIFESTS", "50"));
    assertThat(MaintenancePolicy.SETTINGS.stream().map(s -> "se." + s.key()).toList())
        .containsExactlyElementsOf(MaintenancePolicy.KEYS);
    assertThat(MaintenancePolicy.from(ConfigSource.defaults())).isEqualTo(MaintenancePolicy.defaults());
  }

  @Test
  void everySettingSetsItsField() {
    MaintenancePolicy policy = MaintenancePolicy.from(ConfigSource.of(Map.of(
        "maintenance.enabled", "false",
        "maintenance.target-file-size", "64MiB",
        "maintenance.min-input-files", "2",
        "maintenance.delete-ratio", "0.5",
        "maintenance.snapshot-retention", "2h"), Map.of(
        "SE_MAINTENANCE_MIN_SNAPSHOTS", "3",
        "SE_MAINTENANCE_ORPHAN_AGE", "48h",
        "SE_MAINTENANCE_WAL_GC_AGE", "5m",
        "SE_MAINTENANCE_MAX_MANIFESTS", "20")));
    assertThat(policy).isEqualTo(new MaintenancePolicy(false, 64L << 20, 2, 0.5, Duration.ofHours(2), 3,
        Duration.ofHours(48), Duration.ofMinutes(5), 20));
  }

  @Test
  void badValuesNameTheFlag() {
    assertThatThrownBy(() -> MaintenancePolicy.from(ConfigSource.of(Map.of("maintenance.delete-ratio", "2"), Map.of())))
        .hasMessage("--maintenance.delete-ratio: expected a number in (0, 1], got '2'");
    assertThatThrownBy(() -> MaintenancePolicy.from(ConfigSource.of(Map.of(), Map.of("SE_MAINTENANCE_ENABLED", "yes"))))
        .hasMessage("--maintenance.enabled: expected true or false, got 'yes'");
  }
}

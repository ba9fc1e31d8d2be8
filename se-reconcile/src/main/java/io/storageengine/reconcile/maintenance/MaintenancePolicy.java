package io.storageengine.reconcile.maintenance;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;

/**
 * How a table is maintained. Every setting can be overridden per table by a table property
 * ({@code se.maintenance.*}); {@link #forTable} reads them, with the process defaults (usually
 * {@link #defaults()}) for the properties a table does not set. Durations are ISO-8601
 * ({@code PT1H}, {@code P1D}) or milliseconds; sizes are bytes.
 *
 * <p>The process defaults are settings ({@link #SETTINGS}, read by {@link #from}): each property
 * without its {@code se.} prefix, e.g. {@code --maintenance.target-file-size}, with the flag
 * syntax of sizes and durations ({@code 128MiB}, {@code 1h}).
 *
 * @param enabled {@code se.maintenance.enabled}: false skips the table entirely
 * @param targetFileSizeBytes {@code se.maintenance.target-file-size}: size compaction writes;
 *     files below {@link #SMALL_FILE_FRACTION} of it are small
 * @param minInputFiles {@code se.maintenance.min-input-files}: small files of one partition
 *     needed before they are compacted
 * @param deleteRatio {@code se.maintenance.delete-ratio}: a file whose deletion vector removes
 *     at least this share of its rows is rewritten even alone (the vector is folded in)
 * @param snapshotRetention {@code se.maintenance.snapshot-retention}: snapshots younger than
 *     this are kept
 * @param minSnapshots {@code se.maintenance.min-snapshots}: this many recent snapshots are kept
 *     whatever their age
 * @param orphanAge {@code se.maintenance.orphan-age}: an unreferenced file is deleted only once
 *     it is older than this (it may belong to a commit in progress)
 * @param walGcAge {@code se.maintenance.wal-gc-age}: WAL segments are collected only up to the
 *     {@code se.wal.seq} of a snapshot at least this old (a stalled writer's safety margin)
 * @param maxManifests {@code se.maintenance.max-manifests}: data manifests of the current
 *     snapshot above which they are rewritten
 */
public record MaintenancePolicy(
    boolean enabled,
    long targetFileSizeBytes,
    int minInputFiles,
    double deleteRatio,
    Duration snapshotRetention,
    int minSnapshots,
    Duration orphanAge,
    Duration walGcAge,
    int maxManifests) {

  public static final String PREFIX = "se.maintenance.";
  public static final String ENABLED = PREFIX + "enabled";
  public static final String TARGET_FILE_SIZE = PREFIX + "target-file-size";
  public static final String MIN_INPUT_FILES = PREFIX + "min-input-files";
  public static final String DELETE_RATIO = PREFIX + "delete-ratio";
  public static final String SNAPSHOT_RETENTION = PREFIX + "snapshot-retention";
  public static final String MIN_SNAPSHOTS = PREFIX + "min-snapshots";
  public static final String ORPHAN_AGE = PREFIX + "orphan-age";
  public static final String WAL_GC_AGE = PREFIX + "wal-gc-age";
  public static final String MAX_MANIFESTS = PREFIX + "max-manifests";
  /** Every property key, for documentation and validation. */
  public static final List<String> KEYS = List.of(ENABLED, TARGET_FILE_SIZE, MIN_INPUT_FILES, DELETE_RATIO,
      SNAPSHOT_RETENTION, MIN_SNAPSHOTS, ORPHAN_AGE, WAL_GC_AGE, MAX_MANIFESTS);

  public static final long DEFAULT_TARGET_FILE_SIZE = 128L << 20;
  public static final int DEFAULT_MIN_INPUT_FILES = 5;
  public static final double DEFAULT_DELETE_RATIO = 0.2;
  public static final Duration DEFAULT_SNAPSHOT_RETENTION = Duration.ofHours(1);
  public static final int DEFAULT_MIN_SNAPSHOTS = 10;
  public static final Duration DEFAULT_ORPHAN_AGE = Duration.ofDays(1);
  public static final Duration DEFAULT_WAL_GC_AGE = Duration.ofMinutes(10);
  public static final int DEFAULT_MAX_MANIFESTS = 50;

  public static final Setting<Boolean> ENABLED_SETTING = Setting.bool(processKey(ENABLED), "true",
      "tables are maintained unless their se.maintenance.enabled says false");
  public static final Setting<Long> TARGET_FILE_SIZE_SETTING = Setting.size(processKey(TARGET_FILE_SIZE), "128MiB",
      "size compaction writes; smaller files are candidates");
  public static final Setting<Integer> MIN_INPUT_FILES_SETTING = Setting.integer(processKey(MIN_INPUT_FILES), "5", 1,
      "small files of one partition needed before they are compacted");
  public static final Setting<Double> DELETE_RATIO_SETTING = Setting.ratio(processKey(DELETE_RATIO), "0.2",
      "share of deleted rows at which a file is rewritten even alone");
  public static final Setting<Duration> SNAPSHOT_RETENTION_SETTING = Setting.duration(processKey(SNAPSHOT_RETENTION),
      "1h", "snapshots younger than this are kept");
  public static final Setting<Integer> MIN_SNAPSHOTS_SETTING = Setting.integer(processKey(MIN_SNAPSHOTS), "10", 1,
      "this many recent snapshots are kept whatever their age");
  public static final Setting<Duration> ORPHAN_AGE_SETTING = Setting.duration(processKey(ORPHAN_AGE), "24h",
      "an unreferenced file is deleted only once older than this");
  public static final Setting<Duration> WAL_GC_AGE_SETTING = Setting.duration(processKey(WAL_GC_AGE), "10m",
      "WAL is collected only up to a snapshot at least this old");
  public static final Setting<Integer> MAX_MANIFESTS_SETTING = Setting.integer(processKey(MAX_MANIFESTS), "50", 1,
      "data manifests of the current snapshot above which they are rewritten");
  /** The process defaults of every table property, as settings. */
  public static final List<Setting<?>> SETTINGS = List.of(ENABLED_SETTING, TARGET_FILE_SIZE_SETTING,
      MIN_INPUT_FILES_SETTING, DELETE_RATIO_SETTING, SNAPSHOT_RETENTION_SETTING, MIN_SNAPSHOTS_SETTING,
      ORPHAN_AGE_SETTING, WAL_GC_AGE_SETTING, MAX_MANIFESTS_SETTING);

  /** A data file smaller than this share of the target size is a compaction candidate. */
  public static final double SMALL_FILE_FRACTION = 0.75;

  public MaintenancePolicy {
    if (targetFileSizeBytes <= 0 || minInputFiles < 1 || minSnapshots < 1 || maxManifests < 1) {
      throw new IllegalArgumentException("maintenance sizes and counts must be positive");
    }
    if (!(deleteRatio > 0 && deleteRatio <= 1)) {
      throw new IllegalArgumentException("delete ratio must be in (0, 1]");
    }
    if (snapshotRetention.isNegative() || orphanAge.isNegative() || walGcAge.isNegative()) {
      throw new IllegalArgumentException("maintenance durations must not be negative");
    }
  }

  public static MaintenancePolicy defaults() {
    return new MaintenancePolicy(true, DEFAULT_TARGET_FILE_SIZE, DEFAULT_MIN_INPUT_FILES, DEFAULT_DELETE_RATIO,
        DEFAULT_SNAPSHOT_RETENTION, DEFAULT_MIN_SNAPSHOTS, DEFAULT_ORPHAN_AGE, DEFAULT_WAL_GC_AGE,
        DEFAULT_MAX_MANIFESTS);
  }

  /** The process defaults given by {@link #SETTINGS} in {@code source}. */
  public static MaintenancePolicy from(ConfigSource source) {
    return new MaintenancePolicy(source.get(ENABLED_SETTING), source.get(TARGET_FILE_SIZE_SETTING),
        source.get(MIN_INPUT_FILES_SETTING), source.get(DELETE_RATIO_SETTING), source.get(SNAPSHOT_RETENTION_SETTING),
        source.get(MIN_SNAPSHOTS_SETTING), source.get(ORPHAN_AGE_SETTING), source.get(WAL_GC_AGE_SETTING),
        source.get(MAX_MANIFESTS_SETTING));
  }

  /** {@code se.maintenance.x} -> {@code maintenance.x}. */
  private static String processKey(String property) {
    return property.substring("se.".length());
  }

  /** The table's policy: its {@code se.maintenance.*} properties over {@code defaults}. */
  public static MaintenancePolicy forTable(Table table, MaintenancePolicy defaults) {
    return fromProperties(table.name(), table.properties(), defaults);
  }

  /**
   * The policy given by {@code properties} over {@code defaults}; an invalid value fails with
   * {@code INVALID_ARGUMENT} naming the table, the property and the value.
   */
  public static MaintenancePolicy fromProperties(String tableName, Map<String, String> properties,
      MaintenancePolicy defaults) {
    Parser p = new Parser(tableName, properties);
    try {
      return new MaintenancePolicy(
          p.bool(ENABLED, defaults.enabled()),
          p.positiveLong(TARGET_FILE_SIZE, defaults.targetFileSizeBytes()),
          (int) p.positiveLong(MIN_INPUT_FILES, defaults.minInputFiles()),
          p.ratio(DELETE_RATIO, defaults.deleteRatio()),
          p.duration(SNAPSHOT_RETENTION, defaults.snapshotRetention()),
          (int) p.positiveLong(MIN_SNAPSHOTS, defaults.minSnapshots()),
          p.duration(ORPHAN_AGE, defaults.orphanAge()),
          p.duration(WAL_GC_AGE, defaults.walGcAge()),
          (int) p.positiveLong(MAX_MANIFESTS, defaults.maxManifests()));
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("table %s: invalid maintenance policy: %s", tableName, e.getMessage());
    }
  }

  /** Files smaller than this are compaction candidates. */
  public long smallFileBytes() {
    return (long) (targetFileSizeBytes * SMALL_FILE_FRACTION);
  }

  private record Parser(String table, Map<String, String> properties) {
    private String value(String key) {
      String v = properties.get(key);
      return v == null || v.isBlank() ? null : v.trim();
    }

    private SeException invalid(String key, String value, String expected) {
      return SeException.invalid("table %s: invalid %s '%s' (expected %s)", table, key, value, expected);
    }

    boolean bool(String key, boolean fallback) {
      String v = value(key);
      if (v == null) {
        return fallback;
      }
      if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
        return Boolean.parseBoolean(v);
      }
      throw invalid(key, v, "true or false");
    }

    long positiveLong(String key, long fallback) {
      String v = value(key);
      if (v == null) {
        return fallback;
      }
      try {
        long n = Long.parseLong(v);
        if (n > 0 && n <= Integer.MAX_VALUE * 1024L * 1024L) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw invalid(key, v, "a positive integer");
    }

    double ratio(String key, double fallback) {
      String v = value(key);
      if (v == null) {
        return fallback;
      }
      try {
        double d = Double.parseDouble(v);
        if (d > 0 && d <= 1) {
          return d;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw invalid(key, v, "a number in (0, 1]");
    }

    Duration duration(String key, Duration fallback) {
      String v = value(key);
      if (v == null) {
        return fallback;
      }
      try {
        Duration d = v.chars().allMatch(Character::isDigit) ? Duration.ofMillis(Long.parseLong(v)) : Duration.parse(v);
        if (!d.isNegative()) {
          return d;
        }
      } catch (RuntimeException e) {
        // reported below
      }
      throw invalid(key, v, "an ISO-8601 duration such as PT1H, or milliseconds");
    }
  }
}

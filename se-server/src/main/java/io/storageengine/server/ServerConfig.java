package io.storageengine.server;

import io.storageengine.auth.AuthConfig;
import io.storageengine.broker.BrokerConfig;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.query.QueryConfig;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.secretstore.SecretStoreOptions;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Resolved configuration: flags over environment over defaults, parsed and validated. It holds
 * the settings of every module; {@link #ingest()}, {@link #reconcile()}, {@link #maintenance()},
 * {@link #query(Path)} and {@link #broker()} build the modules' config records from them.
 */
public final class ServerConfig {
  /** Settings only the command of one role has a flag for (their variables work everywhere). */
  public static final List<Setting<?>> ROLE_SETTINGS = List.of(ConfigKey.LB_PROBE_INTERVAL.setting(),
      ConfigKey.WORKER_CONCURRENCY.setting());
  /** The settings every command that runs engine roles has a flag for, grouped by module. */
  public static final List<Setting<?>> SETTINGS = commonSettings();
  /** Every setting: {@link #SETTINGS} and {@link #ROLE_SETTINGS}. */
  public static final List<Setting<?>> ALL_SETTINGS = Stream.concat(SETTINGS.stream(), ROLE_SETTINGS.stream()).toList();

  private final ConfigSource source;

  private ServerConfig(ConfigSource source) {
    this.source = source;
  }

  /** Resolves every key: {@code flags} (by key) first, then {@code environment}, then the default. */
  public static ServerConfig resolve(Map<ConfigKey, String> flags, Map<String, String> environment) {
    Map<String, String> byKey = new HashMap<>();
    flags.forEach((key, value) -> byKey.put(key.flag(), value));
    return resolveSettings(byKey, environment);
  }

  /**
   * Resolves every setting: {@code flags} by setting key ({@code query.memory-limit}) first, then
   * {@code environment}, then the default; an invalid value fails naming its flag.
   */
  public static ServerConfig resolveSettings(Map<String, String> flags, Map<String, String> environment) {
    ServerConfig config = new ServerConfig(ConfigSource.of(flags, environment));
    config.validate();
    return config;
  }

  public static ServerConfig defaults() {
    return resolve(Map.of(), Map.of());
  }

  /** A copy with one key replaced (tests, and se dev's port 0). */
  public ServerConfig with(ConfigKey key, String value) {
    return with(key.setting(), value);
  }

  /** A copy with one setting replaced, as if by its flag. */
  public ServerConfig with(Setting<?> setting, String value) {
    ServerConfig config = new ServerConfig(source.with(setting, value));
    config.validate();
    return config;
  }

  /** The key's text (its flag, variable or default). */
  public String get(ConfigKey key) {
    return source.text(key.setting());
  }

  /** The setting's parsed value. */
  public <T> T value(Setting<T> setting) {
    return source.get(setting);
  }

  /** Where every setting's value comes from. */
  public ConfigSource source() {
    return source;
  }

  private void validate() {
    for (Setting<?> setting : ALL_SETTINGS) {
      source.find(setting); // blank means "not set" for the settings that allow it; the modules check the rest
    }
    serverAddress();
    ingest();
    reconcile();
    maintenance();
    broker();
    query();
    secretStoreOptions();
    auth(AuthConfig.Launch.START);
  }

  /** The authentication settings ({@code auth.*}); the mode defaults as {@code launch} says. */
  public AuthConfig auth(AuthConfig.Launch launch) {
    return AuthConfig.from(source, launch);
  }

  /**
   * The TLS settings ({@code tls.*}), their files read and checked now. Not part of validation:
   * a config is built up one setting at a time, and the certificate comes before its key.
   */
  public TlsConfig tls() {
    return TlsConfig.from(source);
  }

  /** Ingestion's config ({@code ingest.*}). */
  public IngestConfig ingest() {
    return IngestConfig.from(source);
  }

  /** The options of reconcile passes ({@code reconcile.*}). */
  public ReconcileOptions reconcile() {
    return ReconcileOptions.from(source);
  }

  /** The process defaults of table maintenance ({@code maintenance.*}); tables override them by property. */
  public MaintenancePolicy maintenance() {
    return MaintenancePolicy.from(source);
  }

  /** The query engine's config ({@code query.*}). */
  public QueryConfig query() {
    return QueryConfig.from(source);
  }

  /** Where a server's DuckDB runtime keeps data file copies and spill files. */
  public Path duckdbDirectory() {
    return dataDir().resolve("query-cache");
  }

  /** The broker's config ({@code broker.*}). */
  public BrokerConfig broker() {
    return BrokerConfig.from(source);
  }

  /** The secret store's type and its {@code secret-store.*} options (validates the type). */
  public SecretStoreOptions secretStoreOptions() {
    Map<String, String> options = new HashMap<>();
    for (ConfigKey key : ConfigKey.values()) {
      if (key.flag().startsWith("secret-store.") && key != ConfigKey.SECRET_STORE_TYPE) {
        options.put(key.flag().substring("secret-store.".length()), get(key));
      }
    }
    return new SecretStoreOptions(get(ConfigKey.SECRET_STORE_TYPE), options);
  }

  public InetSocketAddress serverAddress() {
    return parseAddress(get(ConfigKey.SERVER_ADDRESS), "--server.address");
  }

  /** Parses {@code host:port} (port 0 = any free port). */
  public static InetSocketAddress parseAddress(String text, String option) {
    return Setting.parseHostPort(option, text);
  }

  public Path dataDir() {
    return Path.of(get(ConfigKey.DATA_DIR)).toAbsolutePath().normalize();
  }

  /** The fs object store's root: --object-store.root, else --data-dir. */
  public Path objectStoreRoot() {
    String root = get(ConfigKey.OBJECT_STORE_ROOT);
    return root.isEmpty() ? dataDir() : Path.of(root).toAbsolutePath().normalize();
  }

  public Duration duration(ConfigKey key) {
    return parseDuration("--" + key.flag(), get(key));
  }

  /** Parses {@code 500ms}, {@code 1s}, {@code 5m}, {@code 2h}; the error names {@code option}. */
  public static Duration parseDuration(String option, String text) {
    return Setting.parseDuration(option, text);
  }

  /** The value of an integer setting such as {@link ConfigKey#WORKER_CONCURRENCY}. */
  public int integer(ConfigKey key) {
    Object value = source.get(key.setting());
    if (!(value instanceof Integer n)) {
      throw new IllegalArgumentException(key + " is not an integer setting");
    }
    return n;
  }

  public long bytes(ConfigKey key) {
    return Setting.parseSize("--" + key.flag(), get(key));
  }

  /**
   * The server's own settings, then each module's, grouped by the key's first word in the order
   * the groups first appear (so {@code reconcile.interval} sits with the reconcile settings).
   */
  private static List<Setting<?>> commonSettings() {
    Map<String, Setting<?>> byKey = new LinkedHashMap<>();
    Stream.of(ConfigKey.values()).map(ConfigKey::setting).filter(s -> !ROLE_SETTINGS.contains(s))
        .forEach(s -> byKey.put(s.key(), s));
    Stream.of(IngestConfig.SETTINGS, ReconcileOptions.SETTINGS, MaintenancePolicy.SETTINGS, QueryConfig.SETTINGS,
        DuckRuntime.SETTINGS, BrokerConfig.SETTINGS, AuthConfig.SETTINGS, TlsConfig.SETTINGS).flatMap(List::stream).forEach(s -> byKey.putIfAbsent(s.key(), s));
    Map<String, List<Setting<?>>> groups = new LinkedHashMap<>();
    for (Setting<?> s : byKey.values()) {
      groups.computeIfAbsent(s.key().split("\\.")[0], g -> new ArrayList<>()).add(s);
    }
    return groups.values().stream().flatMap(List::stream).toList();
  }
}

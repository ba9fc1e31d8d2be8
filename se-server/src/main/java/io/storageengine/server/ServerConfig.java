package io.storageengine.server;

import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretStoreOptions;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Resolved configuration: flags over environment over defaults, parsed and validated. */
public final class ServerConfig {
  private static final Pattern DURATION = Pattern.compile("^(\\d+)(ms|s|m|h)$");
  private static final Pattern SIZE = Pattern.compile("^(\\d+)([KMG]i?B|B)?$", Pattern.CASE_INSENSITIVE);

  private final Map<ConfigKey, String> values;

  private ServerConfig(Map<ConfigKey, String> values) {
    this.values = values;
  }

  /** Resolves every key: {@code flags} (by key) first, then {@code environment}, then the default. */
  public static ServerConfig resolve(Map<ConfigKey, String> flags, Map<String, String> environment) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    for (ConfigKey key : ConfigKey.values()) {
      String v = flags.get(key);
      if (v == null) {
        v = environment.get(key.environmentVariable());
      }
      values.put(key, v == null ? key.defaultValue() : v.trim());
    }
    ServerConfig config = new ServerConfig(values);
    config.validate();
    return config;
  }

  public static ServerConfig defaults() {
    return resolve(Map.of(), Map.of());
  }

  /** A copy with one key replaced (tests, and se dev's port 0). */
  public ServerConfig with(ConfigKey key, String value) {
    Map<ConfigKey, String> copy = new EnumMap<>(values);
    copy.put(key, value);
    ServerConfig config = new ServerConfig(copy);
    config.validate();
    return config;
  }

  public String get(ConfigKey key) {
    return values.get(key);
  }

  private void validate() {
    serverAddress();
    duration(ConfigKey.INGEST_FLUSH_INTERVAL);
    duration(ConfigKey.RECONCILE_INTERVAL);
    duration(ConfigKey.MAINTENANCE_INTERVAL);
    bytes(ConfigKey.INGEST_FLUSH_BYTES);
    bytes(ConfigKey.INGEST_MEMORY_LIMIT);
    String type = get(ConfigKey.OBJECT_STORE_TYPE);
    if (!type.equals("fs") && !type.equals("s3") && !type.equals("memory")) {
      throw SeException.invalid("--object-store.type: expected fs, s3 or memory, got '%s'", type);
    }
    secretStoreOptions();
  }

  /** The secret store's type and its {@code secret-store.*} options (validates the type). */
  public SecretStoreOptions secretStoreOptions() {
    Map<String, String> options = new java.util.HashMap<>();
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
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw SeException.invalid("%s: expected host:port, got '%s'", option, text);
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw SeException.invalid("%s: port must be a number, got '%s'", option, text.substring(colon + 1));
    }
    if (port < 0 || port > 65535) {
      throw SeException.invalid("%s: port %d out of range", option, port);
    }
    return InetSocketAddress.createUnresolved(host, port);
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
    Matcher m = DURATION.matcher(text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw SeException.invalid("%s: expected a duration such as 500ms, 1s, 5m, got '%s'", option, text);
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  public long bytes(ConfigKey key) {
    Matcher m = SIZE.matcher(get(key));
    if (!m.matches()) {
      throw SeException.invalid("--%s: expected a size such as 64MiB, got '%s'", key.flag(), get(key));
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "B" : m.group(2).toUpperCase(Locale.ROOT);
    long mult = switch (unit.charAt(0)) {
      case 'K' -> 1L << 10;
      case 'M' -> 1L << 20;
      case 'G' -> 1L << 30;
      default -> 1L;
    };
    return n * mult;
  }
}

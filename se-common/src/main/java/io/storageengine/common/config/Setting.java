package io.storageengine.common.config;

import io.storageengine.common.SeException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One configuration setting, declared once next to the config record that uses it: its key
 * ({@code query.memory-limit}), a typed parser, its default (as text, the way a user writes it)
 * and a description. The flag ({@code --query.memory-limit}) and the environment variable
 * ({@code SE_QUERY_MEMORY_LIMIT}) are derived from the key here and nowhere else. An empty
 * default means "not set": the module documents what it does then.
 *
 * @param <T> the parsed value
 */
public final class Setting<T> {
  private static final Pattern DURATION = Pattern.compile("^(\\d+)(ms|s|m|h)$");
  private static final Pattern SIZE = Pattern.compile("^(\\d+)([KMG]i?B|B)?$", Pattern.CASE_INSENSITIVE);

  /** Parses a setting's text; a bad value fails with {@code INVALID_ARGUMENT} naming {@code option}. */
  @FunctionalInterface
  interface Parser<T> {
    T parse(String option, String text);
  }

  private final String key;
  private final String defaultValue;
  private final String description;
  private final String paramLabel;
  private final Parser<T> parser;
  private final List<String> aliases;

  private Setting(String key, String defaultValue, String description, String paramLabel, Parser<T> parser,
      List<String> aliases) {
    if (!key.matches("[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*")) {
      throw new IllegalArgumentException("setting key `" + key + "`: expected lower-case words joined by . or -");
    }
    this.key = key;
    this.defaultValue = Objects.requireNonNull(defaultValue, "defaultValue");
    this.description = Objects.requireNonNull(description, "description");
    this.paramLabel = paramLabel;
    this.parser = parser;
    this.aliases = List.copyOf(aliases);
  }

  /** Free text; any value is valid. */
  public static Setting<String> string(String key, String defaultValue, String paramLabel, String description) {
    return new Setting<>(key, defaultValue, description, paramLabel, (option, text) -> text, List.of());
  }

  /** One of {@code choices}, e.g. {@code fs}, {@code s3} or {@code memory}. */
  public static Setting<String> oneOf(String key, String defaultValue, List<String> choices, String description) {
    List<String> allowed = List.copyOf(choices);
    String expected = allowed.size() == 1 ? allowed.get(0)
        : String.join(", ", allowed.subList(0, allowed.size() - 1)) + " or " + allowed.get(allowed.size() - 1);
    return new Setting<>(key, defaultValue, description, "TYPE", (option, text) -> {
      if (!allowed.contains(text)) {
        throw SeException.invalid("%s: expected %s, got '%s'", option, expected, text);
      }
      return text;
    }, List.of());
  }

  /** A text matching {@code pattern}; {@code expected} completes "expected ..." in the error. */
  public static Setting<String> matching(String key, String defaultValue, Pattern pattern, String expected,
      String paramLabel, String description) {
    return new Setting<>(key, defaultValue, description, paramLabel, (option, text) -> {
      if (!pattern.matcher(text).matches()) {
        throw SeException.invalid("%s: expected %s, got '%s'", option, expected, text);
      }
      return text;
    }, List.of());
  }

  /** A duration: {@code 500ms}, {@code 1s}, {@code 5m}, {@code 2h}. */
  public static Setting<Duration> duration(String key, String defaultValue, String description) {
    return new Setting<>(key, defaultValue, description, "DURATION", Setting::parseDuration, List.of());
  }

  /** A size in bytes: {@code 4096}, {@code 512KiB}, {@code 64MiB}, {@code 1GiB} (K/M/G are powers of 1024). */
  public static Setting<Long> size(String key, String defaultValue, String description) {
    return new Setting<>(key, defaultValue, description, "SIZE", Setting::parseSize, List.of());
  }

  /** An integer of at least {@code min}. */
  public static Setting<Integer> integer(String key, String defaultValue, int min, String description) {
    return new Setting<>(key, defaultValue, description, "N", (option, text) -> {
      try {
        int n = Integer.parseInt(text);
        if (n >= min) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw SeException.invalid("%s: expected an integer >= %d, got '%s'", option, min, text);
    }, List.of());
  }

  /** A number in (0, 1]. */
  public static Setting<Double> ratio(String key, String defaultValue, String description) {
    return new Setting<>(key, defaultValue, description, "RATIO", (option, text) -> {
      try {
        double d = Double.parseDouble(text);
        if (d > 0 && d <= 1) {
          return d;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw SeException.invalid("%s: expected a number in (0, 1], got '%s'", option, text);
    }, List.of());
  }

  /** {@code true} or {@code false}. */
  public static Setting<Boolean> bool(String key, String defaultValue, String description) {
    return new Setting<>(key, defaultValue, description, "BOOLEAN", (option, text) -> {
      if (!text.equalsIgnoreCase("true") && !text.equalsIgnoreCase("false")) {
        throw SeException.invalid("%s: expected true or false, got '%s'", option, text);
      }
      return Boolean.parseBoolean(text);
    }, List.of());
  }

  /** {@code host:port} (port 0 = any free port). */
  public static Setting<InetSocketAddress> hostPort(String key, String defaultValue, String description) {
    return new Setting<>(key, defaultValue, description, "HOST:PORT", Setting::parseHostPort, List.of());
  }

  /** This setting with more flag names (e.g. {@code --probe-interval}, the flag users know). */
  public Setting<T> withAliases(String... flags) {
    List<String> all = new ArrayList<>(aliases);
    for (String flag : flags) {
      if (!flag.startsWith("--")) {
        throw new IllegalArgumentException("flag alias `" + flag + "`: must start with --");
      }
      all.add(flag);
    }
    return new Setting<>(key, defaultValue, description, paramLabel, parser, all);
  }

  /** The key, e.g. {@code query.memory-limit}. */
  public String key() {
    return key;
  }

  /** The flag: {@code --} + the key. */
  public String flag() {
    return "--" + key;
  }

  /** The flag and its aliases, the flag first. */
  public List<String> flags() {
    List<String> all = new ArrayList<>();
    all.add(flag());
    all.addAll(aliases);
    return all;
  }

  /** {@code SE_} + the key upper-cased with dots and dashes as underscores. */
  public String environmentVariable() {
    return "SE_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** The default as a user would write it; empty when the setting is not set by default. */
  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  /** What the value looks like in help output: {@code DURATION}, {@code SIZE}, {@code N}, ... */
  public String paramLabel() {
    return paramLabel;
  }

  /** Parses {@code text}; a bad value fails with {@code INVALID_ARGUMENT} naming the flag and the value. */
  public T parse(String text) {
    return parser.parse(flag(), text);
  }

  @Override
  public String toString() {
    return flag();
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

  /** Parses {@code 4096}, {@code 64MiB}, {@code 1GiB}, {@code 512KB} (all powers of 1024); the error names {@code option}. */
  public static long parseSize(String option, String text) {
    Matcher m = SIZE.matcher(text);
    if (!m.matches()) {
      throw SeException.invalid("%s: expected a size such as 64MiB, got '%s'", option, text);
    }
    long mult = switch (m.group(2) == null ? 'B' : Character.toUpperCase(m.group(2).charAt(0))) {
      case 'K' -> 1L << 10;
      case 'M' -> 1L << 20;
      case 'G' -> 1L << 30;
      default -> 1L;
    };
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), mult);
    } catch (ArithmeticException | NumberFormatException e) {
      throw SeException.invalid("%s: size '%s' is too large", option, text);
    }
  }

  /** Parses {@code host:port} (port 0 = any free port, {@code [::1]:7777} for IPv6); the error names {@code option}. */
  public static InetSocketAddress parseHostPort(String option, String text) {
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
}

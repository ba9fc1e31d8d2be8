package io.storageengine.common.config;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where the values of settings come from: a flag (by setting key) wins over the setting's
 * environment variable, the variable over the default. Values are trimmed. Immutable.
 */
public final class ConfigSource {
  private static final ConfigSource DEFAULTS = new ConfigSource(Map.of(), Map.of());

  private final Map<String, String> flags;
  private final Map<String, String> environment;

  private ConfigSource(Map<String, String> flags, Map<String, String> environment) {
    this.flags = Map.copyOf(flags);
    this.environment = Map.copyOf(environment);
  }

  /**
   * {@code flags} by setting key ({@code query.memory-limit}, no dashes) over {@code environment}
   * (by variable name, e.g. {@code System.getenv()}).
   */
  public static ConfigSource of(Map<String, String> flags, Map<String, String> environment) {
    return new ConfigSource(flags, environment);
  }

  /** Nothing set: every setting has its default. */
  public static ConfigSource defaults() {
    return DEFAULTS;
  }

  /** The setting's text: its flag, else its environment variable, else its default; trimmed. */
  public String text(Setting<?> setting) {
    String v = flags.get(setting.key());
    if (v == null) {
      v = environment.get(setting.environmentVariable());
    }
    return v == null ? setting.defaultValue() : v.trim();
  }

  /** The parsed value; a bad value fails with {@code INVALID_ARGUMENT} naming the flag. */
  public <T> T get(Setting<T> setting) {
    return setting.parse(text(setting));
  }

  /** The parsed value, or empty when the text is blank (the setting is not set). */
  public <T> Optional<T> find(Setting<T> setting) {
    String text = text(setting);
    return text.isBlank() ? Optional.empty() : Optional.of(setting.parse(text));
  }

  /** A copy where {@code setting} is given {@code value} as if by its flag. */
  public ConfigSource with(Setting<?> setting, String value) {
    Map<String, String> copy = new HashMap<>(flags);
    copy.put(setting.key(), value);
    return new ConfigSource(copy, environment);
  }
}

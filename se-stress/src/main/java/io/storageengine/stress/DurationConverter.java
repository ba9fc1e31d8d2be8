package io.storageengine.stress;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Durations written like the server's options: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern DURATION = Pattern.compile("^(\\d+)(ms|s|m|h)$");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String value) {
    Matcher m = DURATION.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new CommandLine.TypeConversionException(
          "expected a duration such as 500ms, 30s, 5m, got '" + value + "'");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }
}

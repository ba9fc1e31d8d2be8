package io.storageengine.query;

import io.storageengine.common.SeException;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sizes written in DuckDB's syntax ({@code memory_limit}, {@code max_temp_directory_size}): a
 * number and a unit, where {@code KB}/{@code MB}/{@code GB}/{@code TB} are powers of 1000 and
 * {@code KiB}/{@code MiB}/{@code GiB}/{@code TiB} powers of 1024, as DuckDB reads them.
 */
final class DuckDbSizes {
  /** What a DuckDB size looks like (the unit is checked by {@link #bytes}). */
  static final Pattern PATTERN = Pattern.compile("([0-9]+(\\.[0-9]+)?)\\s*([A-Za-z]*)");

  private DuckDbSizes() {}

  /** The bytes {@code size} stands for; INVALID_ARGUMENT for anything DuckDB would not read. */
  static long bytes(String size) {
    Matcher m = size == null ? null : PATTERN.matcher(size.trim());
    if (m == null || !m.matches()) {
      throw SeException.invalid("size `%s`: expected a number and a unit such as 1GB", size);
    }
    long unit = switch (m.group(3).toLowerCase(Locale.ROOT)) {
      case "", "b", "byte", "bytes" -> 1L;
      case "k", "kb" -> 1_000L;
      case "m", "mb" -> 1_000_000L;
      case "g", "gb" -> 1_000_000_000L;
      case "t", "tb" -> 1_000_000_000_000L;
      case "kib" -> 1L << 10;
      case "mib" -> 1L << 20;
      case "gib" -> 1L << 30;
      case "tib" -> 1L << 40;
      default -> throw SeException.invalid("size `%s`: unknown unit `%s` (use KB, MB, GB, TB or KiB, MiB, GiB, TiB)",
          size, m.group(3));
    };
    return new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit)).longValue();
  }
}

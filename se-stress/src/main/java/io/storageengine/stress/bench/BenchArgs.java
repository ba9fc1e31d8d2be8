package io.storageengine.stress.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A benchmark's {@code --key value} arguments. A key given twice keeps its last value; a
 * trailing key without a value is ignored; a value that does not parse fails naming its key.
 */
final class BenchArgs {
  private final Map<String, String> values = new HashMap<>();

  private BenchArgs(String[] args) {
    for (int i = 0; i + 1 < args.length; i += 2) {
      values.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
  }

  static BenchArgs parse(String[] args) {
    return new BenchArgs(args);
  }

  String string(String key, String fallback) {
    return values.getOrDefault(key, fallback);
  }

  long longValue(String key, long fallback) {
    return parse(key, fallback, Long::parseLong);
  }

  int intValue(String key, int fallback) {
    return parse(key, fallback, Integer::parseInt);
  }

  /** A comma-separated list of longs, e.g. {@code --entity-keys 100000,1000000}. */
  List<Long> longs(String key, String fallback) {
    List<Long> list = new ArrayList<>();
    for (String part : string(key, fallback).split(",")) {
      list.add(parseOne(key, part.trim(), Long::parseLong));
    }
    return list;
  }

  /** {@code --threads}: DuckDB threads, default the machine's processors. */
  int threads() {
    return intValue("threads", Runtime.getRuntime().availableProcessors());
  }

  private <T> T parse(String key, T fallback, java.util.function.Function<String, T> parser) {
    String value = values.get(key);
    return value == null ? fallback : parseOne(key, value, parser);
  }

  private static <T> T parseOne(String key, String value, java.util.function.Function<String, T> parser) {
    try {
      return parser.apply(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + key + ": not a number: " + value, e);
    }
  }
}

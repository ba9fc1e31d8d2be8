package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.util.Arrays;

/**
 * Collects durations (kept in microseconds), each with the moment it belongs to, and reports
 * percentiles, over the whole run or per window of time. Thread-safe.
 */
final class LatencyRecorder {
  private long[] micros = new long[1024];
  /** When each sample happened ({@link System#nanoTime}): its window. */
  private long[] at = new long[1024];
  private int size;

  /** A duration that ends now. */
  void record(long nanos) {
    record(nanos, System.nanoTime());
  }

  /** A duration that belongs to the moment {@code atNanos} ({@link System#nanoTime}). */
  synchronized void record(long nanos, long atNanos) {
    if (size == micros.length) {
      micros = Arrays.copyOf(micros, size * 2);
      at = Arrays.copyOf(at, size * 2);
    }
    at[size] = atNanos;
    micros[size++] = Math.max(0, nanos / 1000);
  }

  /**
   * The samples per window of {@code windowNanos} from {@code startNanos} (a sample before the
   * start counts in the first): {@code [{"from_s":0,"count":n,"p50":..,"p99":..,"max":..},...]}
   * in milliseconds, a window without samples left out. A run's start and steady state differ;
   * one percentile over the whole run hides which of them its tail came from.
   */
  synchronized ArrayNode windowsJson(long startNanos, long windowNanos) {
    java.util.TreeMap<Long, java.util.List<Long>> windows = new java.util.TreeMap<>();
    for (int i = 0; i < size; i++) {
      windows.computeIfAbsent(Math.max(0, (at[i] - startNanos) / windowNanos), w -> new java.util.ArrayList<>())
          .add(micros[i]);
    }
    ArrayNode out = Json.MAPPER.createArrayNode();
    windows.forEach((w, samples) -> {
      long[] sorted = samples.stream().mapToLong(Long::longValue).sorted().toArray();
      ObjectNode node = out.addObject();
      node.put("from_s", w * windowNanos / 1_000_000_000L);
      node.put("count", sorted.length);
      node.put("p50", round(percentile(sorted, 50) / 1000.0));
      node.put("p99", round(percentile(sorted, 99) / 1000.0));
      node.put("max", round(sorted[sorted.length - 1] / 1000.0));
    });
    return out;
  }

  private static long percentile(long[] sorted, double p) {
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  synchronized int count() {
    return size;
  }

  /** The {@code p}-th percentile (0..100) in milliseconds, or -1 with no samples. */
  synchronized double percentileMillis(double p) {
    if (size == 0) {
      return -1;
    }
    long[] sorted = Arrays.copyOf(micros, size);
    Arrays.sort(sorted);
    return percentile(sorted, p) / 1000.0;
  }

  /** {@code {"count":n,"p50":..,...}} in milliseconds for the given percentiles (100 = max). */
  ObjectNode toJson(double... percentiles) {
    ObjectNode node = Json.object();
    node.put("count", count());
    for (double p : percentiles) {
      String name = p == 100 ? "max" : "p" + (p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p));
      node.put(name, round(percentileMillis(p)));
    }
    return node;
  }

  static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }
}

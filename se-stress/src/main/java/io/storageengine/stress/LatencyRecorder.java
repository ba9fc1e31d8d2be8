package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.util.Arrays;

/** Collects durations (kept in microseconds) and reports percentiles. Thread-safe. */
final class LatencyRecorder {
  private long[] micros = new long[1024];
  private int size;

  synchronized void record(long nanos) {
    if (size == micros.length) {
      micros = Arrays.copyOf(micros, size * 2);
    }
    micros[size++] = Math.max(0, nanos / 1000);
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
    int index = (int) Math.ceil(p / 100.0 * size) - 1;
    return sorted[Math.max(0, Math.min(size - 1, index))] / 1000.0;
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

package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.arrow.flight.FlightRuntimeException;

/** Counters shared by every producer of a run. Thread-safe. */
final class Metrics {
  final LongAdder rowsSent = new LongAdder();
  final LongAdder rowsAcked = new LongAdder();
  final LongAdder rowsUnknown = new LongAdder();
  final LongAdder batchesAcked = new LongAdder();
  final LongAdder batchesUnknown = new LongAdder();
  final LongAdder bytesAcked = new LongAdder();
  /** Batches the producers resent on a new stream after the client's stream gave up on them. */
  final LongAdder batchesResent = new LongAdder();
  /** Acks of resent batches that were durable already (the engine did not write them again). */
  final LongAdder duplicateAcks = new LongAdder();
  /** Reconnects of the client's idempotent streams (each resends the unacknowledged batches). */
  final LongAdder reconnects = new LongAdder();
  final LatencyRecorder ackLatency = new LatencyRecorder();
  final LatencyRecorder freshness = new LatencyRecorder();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  /** Table -> System.nanoTime() of its latest acknowledgement. */
  private final Map<String, AtomicLong> lastAckNanos = new ConcurrentHashMap<>();

  /** A batch of {@code table} was acknowledged at {@code nanos}. */
  void ackedAt(String table, long nanos) {
    lastAckNanos.computeIfAbsent(table, t -> new AtomicLong()).accumulateAndGet(nanos, Math::max);
  }

  /** Whether every table acknowledged so far has been acknowledged again after {@code nanos}. */
  boolean everyTableAckedAfter(long nanos) {
    return !lastAckNanos.isEmpty() && lastAckNanos.values().stream().allMatch(t -> t.get() - nanos > 0);
  }

  /** Counts one error under {@code where:KIND}, KIND being the Flight status code if any. */
  void error(String where, Throwable error) {
    errors.computeIfAbsent(where + ":" + kind(error), k -> new LongAdder()).increment();
  }

  long errorCount() {
    return errors.values().stream().mapToLong(LongAdder::sum).sum();
  }

  ObjectNode errorsJson() {
    ObjectNode node = Json.object();
    new TreeMap<>(errors).forEach((k, v) -> node.put(k, v.sum()));
    return node;
  }

  /** The Flight status code of {@code error} (looking through causes), else its class name. */
  static String kind(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof FlightRuntimeException f) {
        return f.status().code().name();
      }
    }
    Throwable root = error;
    while (root.getCause() != null && (root instanceof java.util.concurrent.CompletionException
        || root instanceof java.util.concurrent.ExecutionException)) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName();
  }
}

package io.storageengine.wal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * What a table's WAL says about its idempotent producers, folded in WAL order (seq, frame
 * index) through {@link #throughSeq()}: per producer the {@value #WINDOW} highest sequences
 * written, each with the place of its first frame, and the write time of its newest frame.
 *
 * <p>The rule every reader applies, so that all of them (reconciliation, the query path's WAL
 * tail, the ingestor's fast path) agree on which frame of a (producer, sequence) counts: the
 * first one in WAL order; every later frame with that pair is a duplicate. Two more rules keep
 * the state bounded, and are applied in WAL order as well:
 * <ul>
 *   <li>A producer whose frame comes more than the retention after its previous newest frame was
 *       idle for longer than the retention: it is forgotten first, and the frame starts a new
 *       window.</li>
 *   <li>A window holds the {@value #WINDOW} highest sequences: when a new one arrives the lowest
 *       is dropped. A sequence below a full window cannot be told apart from one never written
 *       (ingestion refuses it); a frame carrying one anyway is kept.</li>
 * </ul>
 *
 * <p>Not thread-safe. Stored as {@code producers.json} next to {@code state.json}
 * ({@link TableWal#producersKey()}).
 */
public final class ProducerWindows {
  /** Sequences remembered per producer: far more than a stream may have unacknowledged. */
  public static final int WINDOW = 256;
  /** How long an idle producer is remembered unless the table sets {@code se.producer-retention}. */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  private static final String THROUGH = "through_seq";
  private static final String PRODUCERS = "producers";
  private static final String LAST_WRITE = "last_write_millis";
  private static final String SEQUENCES = "sequences";

  /** Where the first frame of a sequence is: segment seq and frame index. */
  record Place(long walSeq, int frame) implements Comparable<Place> {
    @Override
    public int compareTo(Place o) {
      int c = Long.compare(walSeq, o.walSeq);
      return c != 0 ? c : Integer.compare(frame, o.frame);
    }
  }

  private static final class Window {
    final TreeMap<Long, Place> sequences = new TreeMap<>();
    long lastWriteMillis;

    /** Whether the producer was idle for longer than {@code retention} at {@code nowMillis}: forgotten. */
    boolean expired(long nowMillis, Duration retention) {
      return nowMillis - lastWriteMillis > retention.toMillis();
    }
  }

  private final Map<String, Window> producers = new HashMap<>();
  private long throughSeq;

  /** No producer, nothing folded. */
  public ProducerWindows() {}

  /** The last segment seq folded (0: none). */
  public long throughSeq() {
    return throughSeq;
  }

  /** Number of producers remembered. */
  public int producerCount() {
    return producers.size();
  }

  /**
   * Applies the frame at ({@code walSeq}, {@code frame}) carrying {@code stamp}; true when it is
   * the first frame of its (producer, sequence), false for a duplicate a reader skips. Applying
   * the same frame again returns the same answer.
   */
  public boolean admit(ProducerStamp stamp, long walSeq, int frame, Duration retention) {
    Window window = producers.get(stamp.producerId());
    if (window != null && window.expired(stamp.writeMillis(), retention)) {
      producers.remove(stamp.producerId());
      window = null;
    }
    if (window == null) {
      window = new Window();
      producers.put(stamp.producerId(), window);
    }
    window.lastWriteMillis = Math.max(window.lastWriteMillis, stamp.writeMillis());
    Place here = new Place(walSeq, frame);
    Place first = window.sequences.get(stamp.sequence());
    if (first != null) {
      return first.compareTo(here) >= 0;
    }
    window.sequences.put(stamp.sequence(), here);
    while (window.sequences.size() > WINDOW) {
      window.sequences.pollFirstEntry();
    }
    return true;
  }

  /** Applies every frame of {@code segment} (a segment after {@link #throughSeq()}). */
  public void fold(WalSegment segment, Duration retention) {
    for (int i = 0; i < segment.frames().size(); i++) {
      ProducerStamp stamp = segment.frames().get(i).producer();
      if (stamp != null) {
        admit(stamp, segment.seq(), i, retention);
      }
    }
    throughSeq = Math.max(throughSeq, segment.seq());
  }

  /** Raises {@link #throughSeq()} (segments without producer frames need no fold). */
  void foldedThrough(long seq) {
    throughSeq = Math.max(throughSeq, seq);
  }

  /**
   * What ingestion answers for a batch of {@code producerId} with {@code sequence} arriving at
   * {@code nowMillis}: whether a durable frame already carries it.
   */
  public Lookup lookup(String producerId, long sequence, long nowMillis, Duration retention) {
    Window window = producers.get(producerId);
    if (window == null || window.expired(nowMillis, retention)) {
      return Lookup.NEW;
    }
    if (window.sequences.containsKey(sequence)) {
      return Lookup.DUPLICATE;
    }
    if (window.sequences.size() >= WINDOW && sequence < window.sequences.firstKey()) {
      return Lookup.BELOW_WINDOW;
    }
    return Lookup.NEW;
  }

  /**
   * The highest sequence of {@code producerId} a durable frame carries, as {@link #lookup} sees
   * it at {@code nowMillis}: empty when the producer wrote nothing or was idle for longer than
   * the retention (forgotten).
   */
  public OptionalLong highestSequence(String producerId, long nowMillis, Duration retention) {
    Window window = producers.get(producerId);
    if (window == null || window.sequences.isEmpty() || window.expired(nowMillis, retention)) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(window.sequences.lastKey());
  }

  /** The lowest sequence the window of {@code producerId} still holds, or -1. */
  public long lowestRemembered(String producerId) {
    Window window = producers.get(producerId);
    return window == null || window.sequences.isEmpty() ? -1 : window.sequences.firstKey();
  }

  /** The answers of {@link #lookup}. */
  public enum Lookup {
    /** Not written yet (or its producer expired): write it. */
    NEW,
    /** A durable frame carries it: acknowledge again, write nothing. */
    DUPLICATE,
    /** Lower than every sequence of a full window: cannot tell whether it was written. */
    BELOW_WINDOW
  }

  /** Forgets the producers whose newest frame is older than {@code retention} at {@code nowMillis}. */
  public void expire(long nowMillis, Duration retention) {
    producers.values().removeIf(w -> w.expired(nowMillis, retention));
  }

  /** A deep copy. */
  public ProducerWindows copy() {
    return parse("copy", toJson());
  }

  /** The {@code producers.json} form. */
  public byte[] toJson() {
    ObjectNode root = Json.object();
    root.put(THROUGH, throughSeq);
    ObjectNode all = root.putObject(PRODUCERS);
    producers.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
      ObjectNode producer = all.putObject(e.getKey());
      producer.put(LAST_WRITE, e.getValue().lastWriteMillis);
      ArrayNode sequences = producer.putArray(SEQUENCES);
      e.getValue().sequences.forEach((seq, place) ->
          sequences.addArray().add(seq).add(place.walSeq()).add(place.frame()));
    });
    return Json.toBytes(root);
  }

  /** Parses {@link #toJson()}'s form read from {@code key}; INTERNAL when it is damaged. */
  public static ProducerWindows parse(String key, byte[] bytes) {
    JsonNode root;
    try {
      root = Json.parse(bytes);
    } catch (SeException e) {
      throw corrupt(key, e.getMessage());
    }
    ProducerWindows windows = new ProducerWindows();
    if (!root.isObject() || !root.path(THROUGH).canConvertToLong()
        || !root.path(PRODUCERS).isObject()) {
      throw corrupt(key, "expected {\"" + THROUGH + "\":n,\"" + PRODUCERS + "\":{...}}");
    }
    windows.throughSeq = root.get(THROUGH).asLong();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.get(PRODUCERS).fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode producer = e.getValue();
      if (!producer.path(LAST_WRITE).canConvertToLong() || !producer.path(SEQUENCES).isArray()) {
        throw corrupt(key, "producer '" + e.getKey() + "' is incomplete");
      }
      Window window = new Window();
      window.lastWriteMillis = producer.get(LAST_WRITE).asLong();
      for (JsonNode entry : producer.get(SEQUENCES)) {
        if (!entry.isArray() || entry.size() != 3) {
          throw corrupt(key, "producer '" + e.getKey() + "': expected [sequence, seq, frame]");
        }
        window.sequences.put(entry.get(0).asLong(),
            new Place(entry.get(1).asLong(), entry.get(2).asInt()));
      }
      windows.producers.put(e.getKey(), window);
    }
    return windows;
  }

  private static SeException corrupt(String key, String detail) {
    return new SeException(ErrorCode.INTERNAL, "corrupt producer windows " + key + ": " + detail);
  }
}

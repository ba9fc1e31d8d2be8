package io.storageengine.ingest;

import io.storageengine.common.AdmissionPressure;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Counts the ingest streams in admission and tells when a burst of them is under way. A stream
 * is in admission from when ingestion opens it (its schema arrived) until its target table is
 * resolved (the native protocol's header answered, a bulk ingest's table found or created) or
 * the stream ended, whichever comes first.
 *
 * <p>A burst begins when {@link #threshold} streams are in admission at once and ends once no
 * stream has been in admission for {@link #linger}: a few streams opening now and then never
 * make one, and the short gaps between the streams of a burst (clients opening them one after
 * another over a few connections) do not end it, so the last streams of a burst are admitted
 * under pressure too. Thread-safe.
 */
public final class AdmissionTracker implements AdmissionPressure {
  /** Streams in admission at once that begin a burst, by default. */
  public static final int DEFAULT_THRESHOLD = 8;
  /** How long a burst outlasts its last stream in admission, by default. */
  public static final Duration DEFAULT_LINGER = Duration.ofMillis(250);

  private final int threshold;
  private final long lingerNanos;
  private final LongSupplier nanoTime;
  // Guarded by this.
  private int admitting;
  private boolean burst;
  private long idleSinceNanos;

  /** A tracker with {@link #DEFAULT_THRESHOLD} and {@link #DEFAULT_LINGER}. */
  public AdmissionTracker() {
    this(DEFAULT_THRESHOLD, DEFAULT_LINGER, System::nanoTime);
  }

  /**
   * @param threshold streams in admission at once that begin a burst (at least 1)
   * @param linger how long a burst lasts after its last stream left admission
   * @param nanoTime the clock ({@link System#nanoTime} but in tests)
   */
  public AdmissionTracker(int threshold, Duration linger, LongSupplier nanoTime) {
    if (threshold < 1) {
      throw new IllegalArgumentException("admission burst threshold must be at least 1, got " + threshold);
    }
    if (linger == null || linger.isNegative()) {
      throw new IllegalArgumentException("admission burst linger must not be negative, got " + linger);
    }
    this.threshold = threshold;
    this.lingerNanos = linger.toNanos();
    this.nanoTime = nanoTime;
  }

  /** A stream entered admission; call {@link #admitted} exactly once for it later. */
  public synchronized void opened() {
    admitting++;
    if (admitting >= threshold) {
      burst = true;
    }
  }

  /** A stream left admission: its table is resolved, or it ended before. */
  public synchronized void admitted() {
    if (admitting <= 0) {
      throw new IllegalStateException("a stream left admission that never entered it");
    }
    admitting--;
    if (admitting == 0) {
      idleSinceNanos = nanoTime.getAsLong();
    }
  }

  /** Streams in admission now. */
  public synchronized int admitting() {
    return admitting;
  }

  /** True from when a burst began until no stream has been in admission for the linger. */
  @Override
  public synchronized boolean high() {
    if (!burst) {
      return false;
    }
    if (admitting == 0 && nanoTime.getAsLong() - idleSinceNanos >= lingerNanos) {
      burst = false;
    }
    return burst;
  }
}

package io.storageengine.broker;

import io.storageengine.common.SeException;
import java.time.Duration;

/**
 * Bounded retries with exponential backoff: after attempt {@code n} fails, the task waits
 * {@code min(initialBackoff * 2^(n-1), maxBackoff)}; after {@code maxAttempts} it is failed.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw SeException.invalid("maxAttempts must be >= 1, got %d", maxAttempts);
    }
    if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
      throw SeException.invalid(
          "backoff must satisfy 0 <= initial (%s) <= max (%s)", initialBackoff, maxBackoff);
    }
  }

  public static RetryPolicy defaults() {
    return new RetryPolicy(5, Duration.ofSeconds(1), Duration.ofMinutes(5));
  }

  /** Delay before the next attempt, after {@code attempts} attempts have failed (>= 1). */
  public long backoffMs(int attempts) {
    long delay = initialBackoff.toMillis();
    for (int i = 1; i < attempts && delay < maxBackoff.toMillis(); i++) {
      delay *= 2;
    }
    return Math.min(delay, maxBackoff.toMillis());
  }
}

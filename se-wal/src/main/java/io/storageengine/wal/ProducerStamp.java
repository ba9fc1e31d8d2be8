package io.storageengine.wal;

import io.storageengine.common.SeException;
import java.util.regex.Pattern;

/**
 * The identity of an idempotent write (ARCHITECTURE.md 6.1): the producer that sent it, the
 * producer's sequence number for the batch, and when the ingestor accepted it (epoch millis,
 * to expire producers that have been idle for longer than their retention). The pair
 * (producer id, sequence) is the identity: the engine stores each pair once and never compares
 * the content of two batches carrying it.
 */
public record ProducerStamp(String producerId, long sequence, long writeMillis) {
  /** Longest producer id accepted, in characters (all ASCII). */
  public static final int MAX_PRODUCER_ID_LENGTH = 128;

  private static final Pattern PRODUCER_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/-]*");

  public ProducerStamp {
    checkProducerId(producerId, "producer id");
    if (sequence < 0) {
      throw SeException.invalid("sequence must be >= 0, got %d", sequence);
    }
  }

  /**
   * Returns {@code id} if it is a valid producer id (1 to {@value #MAX_PRODUCER_ID_LENGTH}
   * characters of {@code A-Z a-z 0-9 . _ : / -}, starting with a letter or digit), else throws
   * INVALID_ARGUMENT prefixed with {@code what}.
   */
  public static String checkProducerId(String id, String what) {
    if (id == null || id.isEmpty()) {
      throw SeException.invalid("%s must be a non-empty string", what);
    }
    if (id.length() > MAX_PRODUCER_ID_LENGTH) {
      throw SeException.invalid("%s must be at most %d characters long, got %d", what,
          MAX_PRODUCER_ID_LENGTH, id.length());
    }
    if (!PRODUCER_ID.matcher(id).matches()) {
      throw SeException.invalid("%s must start with a letter or digit and hold only letters, "
          + "digits and . _ : / -, got '%s'", what, id);
    }
    return id;
  }
}

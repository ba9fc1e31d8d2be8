package io.storageengine.stress;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.arrow.vector.VarCharVector;

/**
 * Deterministic payloads (thread-safe): a prefix naming the row ({@code "<id>:"} or {@code "<key>:<version>:"})
 * followed by filler up to the requested length. Verification recomputes the expected payload
 * instead of remembering it, so the model stays small however long the run.
 */
final class Payloads {
  private static final byte[] FILLER = filler(1 << 16);

  private final int length;
  /** One buffer per producer thread: a workload's producers share this object. */
  private final ThreadLocal<byte[]> scratch;

  /** Payloads of {@code length} bytes (more when the prefix alone is longer). */
  Payloads(int length) {
    if (length < 0 || length > FILLER.length) {
      throw new IllegalArgumentException("payload length must be 0.." + FILLER.length + ", got " + length);
    }
    this.length = length;
    this.scratch = ThreadLocal.withInitial(() -> new byte[length + 64]);
  }

  /** Writes the payload of {@code prefix} into row {@code row} of {@code vector}. */
  int write(VarCharVector vector, int row, String prefix) {
    byte[] head = prefix.getBytes(StandardCharsets.US_ASCII);
    int total = Math.max(length, head.length);
    byte[] buffer = scratch.get();
    if (buffer.length < total) {
      buffer = new byte[total];
      scratch.set(buffer);
    }
    System.arraycopy(head, 0, buffer, 0, head.length);
    System.arraycopy(FILLER, 0, buffer, head.length, total - head.length);
    vector.setSafe(row, buffer, 0, total);
    return total;
  }

  /** The payload {@link #write} produces for {@code prefix}. */
  String expected(String prefix) {
    byte[] head = prefix.getBytes(StandardCharsets.US_ASCII);
    int total = Math.max(length, head.length);
    byte[] out = Arrays.copyOf(head, total);
    System.arraycopy(FILLER, 0, out, head.length, total - head.length);
    return new String(out, StandardCharsets.US_ASCII);
  }

  private static byte[] filler(int n) {
    byte[] bytes = new byte[n];
    for (int i = 0; i < n; i++) {
      bytes[i] = (byte) ('a' + (i * 7 + i / 26) % 26);
    }
    return bytes;
  }
}

package io.storageengine.duckdb;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The deleted row positions of one data file as a bitmap DuckDB reads with {@code get_bit}
 * (a BLOB cast to {@code BIT}): bit {@code p}, most significant bit of each byte first, set when
 * row {@code p} is deleted. A bitmap is {@code highest position / 8 + 1} bytes; rows past it are
 * not deleted. One value per file instead of one row per position: filling a DuckDB table with it
 * costs a copy of the bitmap, where a row per position costs an append each.
 */
public final class PositionMask {
  /** Positions a bitmap may hold: DuckDB's {@code get_bit} takes an INTEGER. */
  public static final long MAX_POSITION = Integer.MAX_VALUE - 8L;

  private byte[] bits = new byte[0];

  /** The bitmap of sorted {@code positions}. */
  public static byte[] of(long[] positions) {
    PositionMask mask = new PositionMask();
    if (positions.length > 0) {
      mask.grow(positions[positions.length - 1]);
    }
    for (long position : positions) {
      mask.set(position);
    }
    return mask.bytes();
  }

  /** The bitmap of the positions {@code positions} hands to its consumer, in any order. */
  public static byte[] of(Consumer<LongConsumer> positions) {
    PositionMask mask = new PositionMask();
    positions.accept(mask::set);
    return mask.bytes();
  }

  /** Sets bit {@code position}. */
  private void set(long position) {
    grow(position);
    int p = (int) position;
    bits[p >>> 3] |= (byte) (0x80 >>> (p & 7));
  }

  private void grow(long position) {
    if (position < 0 || position >= MAX_POSITION) {
      throw new SeException(ErrorCode.UNSUPPORTED, "a data file has too many rows for a deletion bitmap: position "
          + position);
    }
    int need = (int) (position >>> 3) + 1;
    if (need > bits.length) {
      bits = Arrays.copyOf(bits, Math.max(need, (int) Math.min(MAX_POSITION >>> 3, 2L * bits.length)));
    }
  }

  /** The bitmap, trimmed after its last set bit. */
  private byte[] bytes() {
    int end = bits.length;
    while (end > 0 && bits[end - 1] == 0) {
      end--;
    }
    return end == bits.length ? bits : Arrays.copyOf(bits, end);
  }
}

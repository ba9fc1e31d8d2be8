package io.storageengine.duckdb;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;

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

  private PositionMask() {}

  /** The bitmap of sorted {@code positions}. */
  public static byte[] of(long[] positions) {
    if (positions.length == 0) {
      return new byte[0];
    }
    long first = positions[0];
    long last = positions[positions.length - 1];
    if (first < 0 || last >= MAX_POSITION) {
      throw new SeException(ErrorCode.UNSUPPORTED, "a data file has too many rows for a deletion bitmap: position "
          + (first < 0 ? first : last));
    }
    byte[] mask = new byte[(int) (last >>> 3) + 1];
    for (long position : positions) {
      int p = (int) position;
      mask[p >>> 3] |= (byte) (0x80 >>> (p & 7));
    }
    return mask;
  }
}

package io.storageengine.wal;

import io.storageengine.common.SeException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.NonNullableStructVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.util.ValueVectorUtility;
import org.apache.arrow.vector.validate.ValidateUtil;

/**
 * A full, linear check of a loaded Arrow batch, for data that came from outside (a client's
 * record batch, a WAL frame) before anything reads it by offset, converts it or hands its
 * memory to native code (DuckDB's Arrow scan trusts every offset it is given).
 *
 * <p>Checked for every column, recursively through nested children: buffer sizes against the
 * value count (Arrow's {@link ValueVectorUtility#validate}), offsets non-negative,
 * non-decreasing and within the data buffer or child vector, struct children at least as long
 * as their parent, fixed-size list children of exactly {@code size * count} values, UTF-8 of
 * every string value, and for dictionary-encoded columns that the dictionary is known and every
 * index is within it (the dictionary's own values are checked the same way). Arrow's own
 * {@code validateFull} copies every string value to check its UTF-8; this check reads each
 * string column's bytes once, eight at a time while they are ASCII.
 *
 * <p>A failure is INVALID_ARGUMENT naming the column (dotted path for nested fields) and the
 * problem. Nothing is modified and nothing allocated in Arrow memory.
 */
public final class ArrowBatchCheck {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long HIGH_BITS = 0x8080808080808080L;

  private ArrowBatchCheck() {}

  /**
   * Checks every column of {@code root}; {@code dictionaries} resolves dictionary-encoded
   * columns (may be null when the schema has none).
   */
  public static void check(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    int rows = root.getRowCount();
    for (FieldVector vector : root.getFieldVectors()) {
      String name = vector.getField().getName();
      if (vector.getValueCount() != rows) {
        throw SeException.invalid("column `%s`: %d values in a batch of %d rows", name,
            vector.getValueCount(), rows);
      }
      checkColumn(name, vector, dictionaries);
    }
  }

  /** Checks one column (and its dictionary, if encoded); {@code name} is used in messages. */
  public static void checkColumn(String name, FieldVector vector, DictionaryProvider dictionaries) {
    try {
      validateBuffers(vector);
    } catch (ValidateUtil.ValidateException | IndexOutOfBoundsException
        | UnsupportedOperationException e) {
      throw SeException.invalid("column `%s`: %s", name, e.getMessage());
    }
    checkData(name, vector);
    DictionaryEncoding encoding = vector.getField().getDictionary();
    if (encoding != null) {
      checkDictionary(name, vector, encoding, dictionaries);
    }
  }

  /**
   * Arrow's {@link ValueVectorUtility#validate}, except for columns holding a map: Arrow's type
   * check visits a {@code MapVector} as a list and refuses its {@code Map} type, so for those
   * only the buffer check runs (the vector classes come from the schema anyway).
   */
  private static void validateBuffers(ValueVector vector) {
    if (holdsMap(vector.getField())) {
      vector.accept(new org.apache.arrow.vector.validate.ValidateVectorBufferVisitor(), null);
    } else {
      ValueVectorUtility.validate(vector);
    }
  }

  private static boolean holdsMap(org.apache.arrow.vector.types.pojo.Field field) {
    if (field.getType() instanceof org.apache.arrow.vector.types.pojo.ArrowType.Map) {
      return true;
    }
    for (org.apache.arrow.vector.types.pojo.Field child : field.getChildren()) {
      if (holdsMap(child)) {
        return true;
      }
    }
    return false;
  }

  private static void checkDictionary(String name, FieldVector indices, DictionaryEncoding encoding,
      DictionaryProvider dictionaries) {
    Dictionary dictionary = dictionaries == null ? null : dictionaries.lookup(encoding.getId());
    if (dictionary == null) {
      throw SeException.invalid("column `%s`: dictionary %d is not defined", name,
          encoding.getId());
    }
    if (!(indices instanceof BaseIntVector ints)) {
      throw SeException.invalid("column `%s`: dictionary indices must be integers, got %s", name,
          indices.getField().getType());
    }
    FieldVector values = dictionary.getVector();
    checkColumn(name + " (dictionary " + encoding.getId() + ")", values, null);
    long size = values.getValueCount();
    for (int i = 0; i < indices.getValueCount(); i++) {
      if (!indices.isNull(i)) {
        long index = ints.getValueAsLong(i);
        if (index < 0 || index >= size) {
          throw SeException.invalid("column `%s`: dictionary index %d at row %d is outside "
              + "dictionary %d of %d values", name, index, i, encoding.getId(), size);
        }
      }
    }
  }

  private static void checkData(String name, ValueVector vector) {
    int count = vector.getValueCount();
    if (vector instanceof BaseVariableWidthVector v) {
      int first = checkOffsets32(name, v.getOffsetBuffer(), count, v.getDataBuffer().capacity(),
          "data buffer");
      if (v instanceof VarCharVector && count > 0) {
        checkUtf8(name, v.getDataBuffer(), first, offsets32(v.getOffsetBuffer(), count), count);
      }
    } else if (vector instanceof BaseLargeVariableWidthVector v) {
      checkOffsets64(name, v.getOffsetBuffer(), count, v.getDataBuffer().capacity());
      if (v instanceof LargeVarCharVector && count > 0) {
        long firstOffset = v.getOffsetBuffer().getLong(0);
        long last = v.getOffsetBuffer().getLong((long) count * 8);
        if (last - firstOffset > Integer.MAX_VALUE - 16) {
          throw SeException.invalid("column `%s`: more than 2 GiB of string data in one batch",
              name);
        }
        int[] offsets = new int[count + 1];
        for (int i = 0; i <= count; i++) {
          offsets[i] = (int) (v.getOffsetBuffer().getLong((long) i * 8) - firstOffset);
        }
        checkUtf8Rebased(name, v.getDataBuffer(), firstOffset, offsets, count);
      }
    } else if (vector instanceof ListVector v) {
      checkOffsets32(name, v.getOffsetBuffer(), count, v.getDataVector().getValueCount(),
          "child vector");
      checkData(name + "." + v.getDataVector().getField().getName(), v.getDataVector());
    } else if (vector instanceof LargeListVector v) {
      checkOffsets64(name, v.getOffsetBuffer(), count, v.getDataVector().getValueCount());
      checkData(name + "." + v.getDataVector().getField().getName(), v.getDataVector());
    } else if (vector instanceof FixedSizeListVector v) {
      long expected = (long) v.getListSize() * count;
      if (v.getDataVector().getValueCount() < expected) {
        throw SeException.invalid("column `%s`: fixed-size list of %d x %d needs %d child values, "
            + "has %d", name, count, v.getListSize(), expected, v.getDataVector().getValueCount());
      }
      checkData(name + "." + v.getDataVector().getField().getName(), v.getDataVector());
    } else if (vector instanceof NonNullableStructVector v) {
      for (FieldVector child : v.getChildrenFromFields()) {
        String childName = name + "." + child.getField().getName();
        if (child.getValueCount() < count) {
          throw SeException.invalid("column `%s`: %d values in a struct of %d", childName,
              child.getValueCount(), count);
        }
        try {
          validateBuffers(child);
        } catch (ValidateUtil.ValidateException | IndexOutOfBoundsException e) {
          throw SeException.invalid("column `%s`: %s", childName, e.getMessage());
        }
        checkData(childName, child);
      }
    } else if (vector instanceof BaseFixedWidthVector) {
      return; // buffer sizes are all there is to check
    } else if (vector instanceof FieldVector f && !f.getChildrenFromFields().isEmpty()) {
      throw SeException.invalid("column `%s`: type %s is not accepted", name,
          f.getField().getType());
    }
  }

  /** Offsets 0..count non-negative, non-decreasing and at most {@code limit}; returns offset 0. */
  private static int checkOffsets32(String name, ArrowBuf offsets, int count, long limit,
      String what) {
    if (count == 0) {
      return 0;
    }
    int previous = offsets.getInt(0);
    if (previous < 0) {
      throw SeException.invalid("column `%s`: offset 0 is negative (%d)", name, previous);
    }
    for (int i = 1; i <= count; i++) {
      int offset = offsets.getInt((long) i * 4);
      if (offset < previous) {
        throw SeException.invalid("column `%s`: offset %d (%d) is %s", name, i, offset,
            offset < 0 ? "negative" : "smaller than offset " + (i - 1) + " (" + previous + ")");
      }
      previous = offset;
    }
    if (previous > limit) {
      throw SeException.invalid("column `%s`: last offset %d is beyond the %s (%d)", name,
          previous, what, limit);
    }
    return offsets.getInt(0);
  }

  private static void checkOffsets64(String name, ArrowBuf offsets, int count, long limit) {
    if (count == 0) {
      return;
    }
    long previous = offsets.getLong(0);
    if (previous < 0) {
      throw SeException.invalid("column `%s`: offset 0 is negative (%d)", name, previous);
    }
    for (int i = 1; i <= count; i++) {
      long offset = offsets.getLong((long) i * 8);
      if (offset < previous) {
        throw SeException.invalid("column `%s`: offset %d (%d) is %s", name, i, offset,
            offset < 0 ? "negative" : "smaller than offset " + (i - 1) + " (" + previous + ")");
      }
      previous = offset;
    }
    if (previous > limit) {
      throw SeException.invalid("column `%s`: last offset %d is beyond the data (%d)", name,
          previous, limit);
    }
  }

  /** The offsets 0..count rebased to offset 0 (already checked: non-decreasing, in bounds). */
  private static int[] offsets32(ArrowBuf offsets, int count) {
    int first = offsets.getInt(0);
    int[] out = new int[count + 1];
    for (int i = 0; i <= count; i++) {
      out[i] = offsets.getInt((long) i * 4) - first;
    }
    return out;
  }

  private static void checkUtf8(String name, ArrowBuf data, int first, int[] offsets, int count) {
    checkUtf8Rebased(name, data, first, offsets, count);
  }

  /**
   * Checks UTF-8 of values {@code [offsets[i], offsets[i+1])} of the bytes starting at
   * {@code base} in {@code data}. The bytes are copied once; if they are all ASCII no value can
   * be invalid, otherwise each value is decoded on its own (a character must not span values).
   */
  private static void checkUtf8Rebased(String name, ArrowBuf data, long base, int[] offsets,
      int count) {
    int length = offsets[count];
    if (length == 0) {
      return;
    }
    byte[] bytes = new byte[length];
    data.getBytes(base, bytes, 0, length);
    if (isAscii(bytes, 0, length)) {
      return;
    }
    for (int i = 0; i < count; i++) {
      int bad = firstInvalidUtf8(bytes, offsets[i], offsets[i + 1]);
      if (bad >= 0) {
        throw SeException.invalid("column `%s`: value at row %d is not valid UTF-8 (byte %d)",
            name, i, bad - offsets[i]);
      }
    }
  }

  private static boolean isAscii(byte[] bytes, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      if (((long) LONGS.get(bytes, i) & HIGH_BITS) != 0) {
        return false;
      }
    }
    for (; i < to; i++) {
      if (bytes[i] < 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The index of the first byte of {@code [from, to)} that is not part of well-formed UTF-8
   * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or -1.
   */
  static int firstInvalidUtf8(byte[] b, int from, int to) {
    int i = from;
    while (i < to) {
      if (i + 8 <= to && ((long) LONGS.get(b, i) & HIGH_BITS) == 0) {
        i += 8;
        continue;
      }
      int c = b[i] & 0xff;
      if (c < 0x80) {
        i++;
        continue;
      }
      int start = i;
      int need;
      int min;
      int lowSecond = 0x80;
      int highSecond = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) {
        need = 1;
      } else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c == 0xe0) {
          lowSecond = 0xa0; // overlong
        } else if (c == 0xed) {
          highSecond = 0x9f; // surrogates
        }
      } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c == 0xf0) {
          lowSecond = 0x90; // overlong
        } else if (c == 0xf4) {
          highSecond = 0x8f; // above U+10FFFF
        }
      } else {
        return start;
      }
      min = start + need;
      if (min >= to) {
        return start;
      }
      int second = b[start + 1] & 0xff;
      if (second < lowSecond || second > highSecond) {
        return start;
      }
      for (int k = 2; k <= need; k++) {
        if ((b[start + k] & 0xc0) != 0x80) {
          return start;
        }
      }
      i = start + need + 1;
    }
    return -1;
  }
}

package io.storageengine.catalog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantArray;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantObject;
import org.apache.iceberg.variants.VariantValue;

/**
 * Variant values in the binary encoding of the Parquet variant spec (a metadata buffer holding
 * the field-name dictionary, a value buffer), the form the WAL, DuckDB and Parquet carry: built
 * from JSON text, and checked when a client sends them already encoded.
 *
 * <p>JSON maps to variant as follows: objects and arrays keep their structure (object keys must
 * be unique), strings are strings, {@code true}/{@code false} booleans, {@code null} the variant
 * null, integers the smallest of int8/16/32/64 that holds them (larger ones decimal(38, 0) up
 * to 38 digits, else double), other numbers double.
 */
public final class VariantValues {
  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  /** Strings in the order of their UTF-8 bytes (code point order), the order the spec sorts keys in. */
  private static final java.util.Comparator<String> UTF8_ORDER = (a, b) -> {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  };

  private VariantValues() {}

  /** One encoded variant: the spec's metadata and value buffers. */
  public record Encoded(byte[] metadata, byte[] value) {}

  /**
   * The variant encoding of the JSON value {@code json} (one value, any JSON type).
   *
   * @throws IllegalArgumentException when {@code json} is not one well-formed JSON value; the
   *     message says what is wrong and where
   */
  public static Encoded fromJson(String json) {
    Object tree;
    TreeSet<String> names = new TreeSet<>(UTF8_ORDER);
    try (JsonParser parser = JSON.createParser(json)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        throw new IllegalArgumentException("empty text is not a JSON value");
      }
      tree = read(parser, first, names);
      if (parser.nextToken() != null) {
        throw new IllegalArgumentException("text after the JSON value at column "
            + parser.currentLocation().getColumnNr());
      }
    } catch (IOException e) {
      String message = e.getMessage();
      int newline = message == null ? -1 : message.indexOf('\n');
      throw new IllegalArgumentException(newline < 0 ? message : message.substring(0, newline), e);
    }
    return encode(tree, names);
  }

  /**
   * Checks that {@code metadata} and {@code value} are a well-formed variant: spec version 1, a
   * dictionary whose offsets stay inside the buffer, a value whose every nested object, array and
   * primitive decodes inside its buffer, object field ids inside the dictionary, and no bytes left
   * over in either buffer.
   *
   * @throws IllegalArgumentException naming the first problem found
   */
  public static void check(byte[] metadata, byte[] value) {
    if (metadata.length == 0) {
      throw new IllegalArgumentException("empty variant metadata");
    }
    if ((metadata[0] & 0x0F) != Variant.VARIANT_SPEC_VERSION) {
      throw new IllegalArgumentException("variant metadata version " + (metadata[0] & 0x0F)
          + " (expected " + Variant.VARIANT_SPEC_VERSION + ")");
    }
    if (value.length == 0) {
      throw new IllegalArgumentException("empty variant value");
    }
    int dictionarySize = checkMetadata(metadata);
    int size = checkValue(value, 0, value.length, dictionarySize);
    if (size != value.length) {
      throw new IllegalArgumentException("variant value has " + (value.length - size) + " bytes after its end");
    }
    try {
      VariantMetadata md = VariantMetadata.from(ByteBuffer.wrap(metadata).order(ByteOrder.LITTLE_ENDIAN));
      for (int i = 0; i < md.dictionarySize(); i++) {
        md.get(i);
      }
      if (md.sizeInBytes() != metadata.length) {
        throw new IllegalArgumentException("variant metadata has " + (metadata.length - md.sizeInBytes())
            + " bytes after its dictionary");
      }
      VariantValue v = VariantValue.from(md, ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN));
      walk(md, v);
      if (v.sizeInBytes() != value.length) {
        throw new IllegalArgumentException("variant value has " + (value.length - v.sizeInBytes())
            + " bytes after its end");
      }
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      // The decoders throw index, state and buffer errors on truncated or inconsistent input.
      throw new IllegalArgumentException("malformed variant: " + e, e);
    }
  }

  private static long readLE(byte[] b, int at, int size, int end, String what) {
    if (at < 0 || at + size > end) {
      throw new IllegalArgumentException("variant " + what + " runs past the end of its buffer");
    }
    long v = 0;
    for (int i = 0; i < size; i++) {
      v |= (b[at + i] & 0xFFL) << (8 * i);
    }
    return v;
  }

  /** Checks the metadata layout; returns its dictionary size. */
  private static int checkMetadata(byte[] m) {
    int offsetSize = ((m[0] >>> 6) & 3) + 1;
    long n = readLE(m, 1, offsetSize, m.length, "metadata");
    long stringsStart = 1 + offsetSize * (n + 2);
    if (stringsStart > m.length) {
      throw new IllegalArgumentException("variant metadata dictionary of " + n + " strings runs past its end");
    }
    long previous = 0;
    for (int i = 0; i <= n; i++) {
      long offset = readLE(m, (int) (1 + offsetSize * (i + 1)), offsetSize, m.length, "metadata");
      if (offset < previous) {
        throw new IllegalArgumentException("variant metadata offsets decrease");
      }
      previous = offset;
    }
    if (stringsStart + previous != m.length) {
      throw new IllegalArgumentException("variant metadata has " + (m.length - stringsStart - previous)
          + " bytes after its dictionary");
    }
    return (int) n;
  }

  /** Byte sizes of the fixed-size primitives by type id (-1: length-prefixed, 0: unknown). */
  private static final int[] PRIMITIVE_SIZES = {1, 1, 1, 2, 3, 5, 9, 9, 6, 10, 18, 5, 9, 9, 5, -1, -1, 9, 9, 9, 17};

  /**
   * Checks the value starting at {@code at}, which must end by {@code end}; returns its size.
   * Object field ids must be inside the dictionary, every offset inside its container.
   */
  private static int checkValue(byte[] v, int at, int end, int dictionarySize) {
    if (at >= end) {
      throw new IllegalArgumentException("variant value runs past the end of its buffer");
    }
    int header = v[at] & 0xFF;
    int basic = header & 3;
    int vh = header >>> 2;
    switch (basic) {
      case PRIMITIVE -> {
        int size = vh < PRIMITIVE_SIZES.length ? PRIMITIVE_SIZES[vh] : 0;
        if (size == 0) {
          throw new IllegalArgumentException("variant primitive type " + vh + " is unknown");
        }
        if (size < 0) {
          size = 5 + (int) readLE(v, at + 1, 4, end, "value");
        }
        if (size < 0 || at + size > end) {
          throw new IllegalArgumentException("variant value runs past the end of its buffer");
        }
        return size;
      }
      case SHORT_STRING -> {
        if (at + 1 + vh > end) {
          throw new IllegalArgumentException("variant value runs past the end of its buffer");
        }
        return 1 + vh;
      }
      case OBJECT -> {
        boolean large = ((vh >>> 4) & 1) == 1;
        int idSize = ((vh >>> 2) & 3) + 1;
        int offsetSize = (vh & 3) + 1;
        long n = readLE(v, at + 1, large ? 4 : 1, end, "object");
        long ids = at + 1 + (large ? 4 : 1);
        long offsets = ids + n * idSize;
        long data = offsets + (n + 1) * offsetSize;
        if (data > end) {
          throw new IllegalArgumentException("variant object header runs past the end of its buffer");
        }
        long dataSize = readLE(v, (int) (offsets + n * offsetSize), offsetSize, end, "object");
        if (data + dataSize > end) {
          throw new IllegalArgumentException("variant object runs past the end of its buffer");
        }
        for (int i = 0; i < n; i++) {
          long id = readLE(v, (int) (ids + (long) i * idSize), idSize, end, "object");
          if (id >= dictionarySize) {
            throw new IllegalArgumentException("variant object field id " + id + " is not in the metadata (of "
                + dictionarySize + " names)");
          }
          long offset = readLE(v, (int) (offsets + (long) i * offsetSize), offsetSize, end, "object");
          if (offset >= dataSize) {
            throw new IllegalArgumentException("variant object field offset " + offset + " is past its data");
          }
          checkValue(v, (int) (data + offset), (int) (data + dataSize), dictionarySize);
        }
        return (int) (data + dataSize - at);
      }
      default -> {
        boolean large = ((vh >>> 2) & 1) == 1;
        int offsetSize = (vh & 3) + 1;
        long n = readLE(v, at + 1, large ? 4 : 1, end, "array");
        long offsets = at + 1 + (large ? 4 : 1);
        long data = offsets + (n + 1) * offsetSize;
        if (data > end) {
          throw new IllegalArgumentException("variant array header runs past the end of its buffer");
        }
        long previous = readLE(v, (int) offsets, offsetSize, end, "array");
        if (previous != 0) {
          throw new IllegalArgumentException("variant array's first offset is " + previous + ", not 0");
        }
        for (int i = 0; i < n; i++) {
          long next = readLE(v, (int) (offsets + (long) (i + 1) * offsetSize), offsetSize, end, "array");
          if (next < previous || data + next > end) {
            throw new IllegalArgumentException("variant array element " + i + " runs past the end of its buffer");
          }
          int size = checkValue(v, (int) (data + previous), (int) (data + next), dictionarySize);
          if (size != next - previous) {
            throw new IllegalArgumentException("variant array element " + i + " has " + (next - previous - size)
                + " bytes after its end");
          }
          previous = next;
        }
        return (int) (data + previous - at);
      }
    }
  }

  private static void walk(VariantMetadata metadata, VariantValue value) {
    switch (value.type()) {
      case OBJECT -> {
        VariantObject object = value.asObject();
        for (String name : object.fieldNames()) {
          if (metadata.id(name) < 0) {
            throw new IllegalArgumentException("variant object field '" + name + "' is not in the metadata");
          }
          walk(metadata, object.get(name));
        }
      }
      case ARRAY -> {
        VariantArray array = value.asArray();
        for (int i = 0; i < array.numElements(); i++) {
          walk(metadata, array.get(i));
        }
      }
      default -> value.asPrimitive().get();
    }
  }

  private interface Writer {
    void write(ByteBuffer buffer);
  }

  private static byte[] bytes(int size, Writer writer) {
    ByteBuffer buffer = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    writer.write(buffer);
    return buffer.array();
  }

  /** Reads one JSON value into maps, lists and scalars, collecting the object keys. */
  private static Object read(JsonParser parser, JsonToken token, TreeSet<String> names) throws IOException {
    switch (token) {
      case START_OBJECT: {
        Map<String, Object> fields = new TreeMap<>(UTF8_ORDER);
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
          String name = parser.currentName();
          names.add(name);
          fields.put(name, read(parser, parser.nextToken(), names));
        }
        return fields;
      }
      case START_ARRAY: {
        List<Object> elements = new ArrayList<>();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
          elements.add(read(parser, t, names));
        }
        return elements;
      }
      case VALUE_STRING:
        return parser.getText();
      case VALUE_NUMBER_INT:
        return parser.getBigIntegerValue();
      case VALUE_NUMBER_FLOAT:
        return parser.getDoubleValue();
      case VALUE_TRUE:
        return Boolean.TRUE;
      case VALUE_FALSE:
        return Boolean.FALSE;
      case VALUE_NULL:
        return null;
      default:
        throw new IllegalArgumentException("unexpected JSON token " + token);
    }
  }

  /** The spec's encoding of {@code tree}; {@code names} holds every object key in it. */
  private static Encoded encode(Object tree, TreeSet<String> names) {
    // Metadata: a sorted dictionary (sorted_strings set), so readers may binary-search it.
    byte[][] keys = new byte[names.size()][];
    Map<String, Integer> ids = new java.util.HashMap<>(names.size() * 2);
    int total = 0;
    int i = 0;
    for (String name : names) {
      keys[i] = name.getBytes(StandardCharsets.UTF_8);
      total += keys[i].length;
      ids.put(name, i++);
    }
    int offsetSize = sizeFor(Math.max(total, keys.length));
    byte[] metadata = new byte[1 + offsetSize * (keys.length + 2) + total];
    metadata[0] = (byte) (Variant.VARIANT_SPEC_VERSION | (keys.length > 0 ? 0x10 : 0) | ((offsetSize - 1) << 6));
    writeLE(metadata, 1, keys.length, offsetSize);
    int at = 1 + offsetSize * (keys.length + 2);
    int offset = 0;
    for (int k = 0; k < keys.length; k++) {
      writeLE(metadata, 1 + offsetSize * (k + 1), offset, offsetSize);
      System.arraycopy(keys[k], 0, metadata, at + offset, keys[k].length);
      offset += keys[k].length;
    }
    writeLE(metadata, 1 + offsetSize * (keys.length + 1), offset, offsetSize);
    Buffer value = new Buffer();
    value(tree, ids, value);
    return new Encoded(metadata, value.toArray());
  }

  /** The fewest bytes (1 to 4) that hold unsigned {@code max}. */
  private static int sizeFor(int max) {
    return max < 0x100 ? 1 : max < 0x10000 ? 2 : max < 0x1000000 ? 3 : 4;
  }

  private static void writeLE(byte[] out, int at, long value, int size) {
    for (int b = 0; b < size; b++) {
      out[at + b] = (byte) (value >>> (8 * b));
    }
  }

  /** A growable little-endian byte buffer. */
  private static final class Buffer {
    private byte[] bytes = new byte[64];
    private int size;

    int size() {
      return size;
    }

    void ensure(int more) {
      if (size + more > bytes.length) {
        bytes = java.util.Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
      }
    }

    void put(int b) {
      ensure(1);
      bytes[size++] = (byte) b;
    }

    void putLE(long value, int width) {
      ensure(width);
      writeLE(bytes, size, value, width);
      size += width;
    }

    void put(byte[] b) {
      ensure(b.length);
      System.arraycopy(b, 0, bytes, size, b.length);
      size += b.length;
    }

    /** Makes room for {@code n} bytes at {@code at}, moving what follows. */
    void insert(int at, int n) {
      ensure(n);
      System.arraycopy(bytes, at, bytes, at + n, size - at);
      size += n;
    }

    void setLE(int at, long value, int width) {
      writeLE(bytes, at, value, width);
    }

    byte[] toArray() {
      return java.util.Arrays.copyOf(bytes, size);
    }
  }

  // Value header of the spec: basic type in the low 2 bits, then type-specific bits.
  private static final int PRIMITIVE = 0;
  private static final int SHORT_STRING = 1;
  private static final int OBJECT = 2;
  private static final int ARRAY = 3;

  private static void primitive(Buffer out, int typeId) {
    out.put((typeId << 2) | PRIMITIVE);
  }

  @SuppressWarnings("unchecked")
  private static void value(Object node, Map<String, Integer> ids, Buffer out) {
    if (node == null) {
      primitive(out, 0);
    } else if (node instanceof Boolean b) {
      primitive(out, b ? 1 : 2);
    } else if (node instanceof String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      if (utf8.length < 64) {
        out.put((utf8.length << 2) | SHORT_STRING);
      } else {
        primitive(out, 16);
        out.putLE(utf8.length, 4);
      }
      out.put(utf8);
    } else if (node instanceof Double d) {
      primitive(out, 7);
      out.putLE(Double.doubleToRawLongBits(d), 8);
    } else if (node instanceof BigInteger i) {
      integer(i, out);
    } else if (node instanceof Map<?, ?> map) {
      object((Map<String, Object>) map, ids, out);
    } else {
      array((List<Object>) node, ids, out);
    }
  }

  private static void integer(BigInteger i, Buffer out) {
    if (i.bitLength() < 64) {
      long l = i.longValue();
      int width = l == (byte) l ? 1 : l == (short) l ? 2 : l == (int) l ? 4 : 8;
      primitive(out, width == 1 ? 3 : width == 2 ? 4 : width == 4 ? 5 : 6);
      out.putLE(l, width);
      return;
    }
    if (i.abs().toString().length() <= 38) {
      // decimal16: a scale byte, then the 128-bit two's-complement unscaled value.
      primitive(out, 10);
      out.put(0);
      byte[] big = i.toByteArray();
      byte fill = (byte) (i.signum() < 0 ? 0xFF : 0);
      for (int b = 0; b < 16; b++) {
        int from = big.length - 1 - b;
        out.put(from >= 0 ? big[from] : fill);
      }
      return;
    }
    primitive(out, 7);
    out.putLE(Double.doubleToRawLongBits(i.doubleValue()), 8);
  }

  /** Fields in key order (the maps are sorted, and so is the dictionary), each offset into the values. */
  private static void object(Map<String, Object> fields, Map<String, Integer> ids, Buffer out) {
    int n = fields.size();
    int start = out.size();
    int[] fieldIds = new int[n];
    int[] offsets = new int[n + 1];
    int maxId = 0;
    int k = 0;
    for (Map.Entry<String, Object> e : fields.entrySet()) {
      fieldIds[k] = ids.get(e.getKey());
      maxId = Math.max(maxId, fieldIds[k]);
      offsets[k] = out.size() - start;
      value(e.getValue(), ids, out);
      k++;
    }
    offsets[n] = out.size() - start;
    boolean large = n > 0xFF;
    int idSize = sizeFor(maxId);
    int offsetSize = sizeFor(offsets[n]);
    int headerSize = 1 + (large ? 4 : 1) + n * idSize + (n + 1) * offsetSize;
    out.insert(start, headerSize);
    int at = start;
    out.setLE(at++, ((large ? 1 : 0) << 6 | (idSize - 1) << 4 | (offsetSize - 1) << 2) | OBJECT, 1);
    out.setLE(at, n, large ? 4 : 1);
    at += large ? 4 : 1;
    for (int f = 0; f < n; f++, at += idSize) {
      out.setLE(at, fieldIds[f], idSize);
    }
    for (int f = 0; f <= n; f++, at += offsetSize) {
      out.setLE(at, offsets[f], offsetSize);
    }
  }

  private static void array(List<Object> elements, Map<String, Integer> ids, Buffer out) {
    int n = elements.size();
    int start = out.size();
    int[] offsets = new int[n + 1];
    for (int e = 0; e < n; e++) {
      offsets[e] = out.size() - start;
      value(elements.get(e), ids, out);
    }
    offsets[n] = out.size() - start;
    boolean large = n > 0xFF;
    int offsetSize = sizeFor(offsets[n]);
    int headerSize = 1 + (large ? 4 : 1) + (n + 1) * offsetSize;
    out.insert(start, headerSize);
    int at = start;
    out.setLE(at++, ((large ? 1 : 0) << 4 | (offsetSize - 1) << 2) | ARRAY, 1);
    out.setLE(at, n, large ? 4 : 1);
    at += large ? 4 : 1;
    for (int e = 0; e <= n; e++, at += offsetSize) {
      out.setLE(at, offsets[e], offsetSize);
    }
  }
}

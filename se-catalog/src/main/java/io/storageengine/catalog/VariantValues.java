package io.storageengine.catalog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.variants.ShreddedObject;
import org.apache.iceberg.variants.ValueArray;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantArray;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantObject;
import org.apache.iceberg.variants.VariantValue;
import org.apache.iceberg.variants.Variants;

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
    TreeSet<String> names = new TreeSet<>();
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
    VariantMetadata metadata = Variants.metadata(names);
    VariantValue value = build(metadata, tree);
    return new Encoded(bytes(metadata.sizeInBytes(), b -> metadata.writeTo(b, 0)),
        bytes(value.sizeInBytes(), b -> value.writeTo(b, 0)));
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
        Map<String, Object> fields = new TreeMap<>();
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

  @SuppressWarnings("unchecked")
  private static VariantValue build(VariantMetadata metadata, Object node) {
    if (node == null) {
      return Variants.ofNull();
    }
    if (node instanceof Map<?, ?> map) {
      ShreddedObject object = Variants.object(metadata);
      for (Map.Entry<String, Object> e : ((Map<String, Object>) map).entrySet()) {
        object.put(e.getKey(), build(metadata, e.getValue()));
      }
      return object;
    }
    if (node instanceof List<?> list) {
      ValueArray array = Variants.array();
      for (Object element : list) {
        array.add(build(metadata, element));
      }
      return array;
    }
    if (node instanceof String s) {
      return Variants.of(s);
    }
    if (node instanceof Boolean b) {
      return Variants.of(b.booleanValue());
    }
    if (node instanceof Double d) {
      return Variants.of(d.doubleValue());
    }
    BigInteger i = (BigInteger) node;
    if (i.bitLength() < 64) {
      long l = i.longValue();
      if (l == (byte) l) {
        return Variants.of((byte) l);
      }
      if (l == (short) l) {
        return Variants.of((short) l);
      }
      if (l == (int) l) {
        return Variants.of((int) l);
      }
      return Variants.of(l);
    }
    BigDecimal decimal = new BigDecimal(i);
    return decimal.precision() <= 38 ? Variants.of(decimal) : Variants.of(i.doubleValue());
  }
}

package io.storageengine.kafka.connect;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.kafka.connect.data.Struct;

/**
 * Converts one Connect value (from a {@link Struct} with its schema, or from a schemaless JSON
 * map) to the plain Java value {@link BatchBuilder} writes into a column of the table's Arrow
 * type. The table's type drives the conversion; a value it cannot take is refused with a
 * {@link InvalidRecordException} naming the field.
 *
 * <p>Results by Arrow type: integers {@code Long} (range-checked), floating point {@code Double},
 * {@code Boolean}, {@code String}, binary {@code byte[]}, decimal {@code BigDecimal} at the
 * column's scale, date {@code Integer} days, time {@code Long} microseconds of the day,
 * timestamp {@code Long} in the column's unit since the epoch, struct {@code Map<String, Object>}
 * of the column's fields, list {@code List}, map {@code List<Object[]>} of key/value pairs.
 */
final class ValueConverter {
  private ValueConverter() {
  }

  /** {@code value} as a value of column {@code target}; {@code path} names it in messages. */
  static Object convert(Object value, Field target, String path) {
    if (value == null) {
      if (!target.isNullable()) {
        throw new InvalidRecordException("field `" + path + "`: null in a required column");
      }
      return null;
    }
    ArrowType type = target.getType();
    switch (type.getTypeID()) {
      case Int:
        return integer(value, (ArrowType.Int) type, path);
      case FloatingPoint:
        if (value instanceof Float || value instanceof Double || isIntegral(value)) {
          return ((Number) value).doubleValue();
        }
        throw mismatch(value, target, path);
      case Bool:
        if (value instanceof Boolean) {
          return value;
        }
        throw mismatch(value, target, path);
      case Utf8:
      case LargeUtf8:
        if (value instanceof String) {
          return value;
        }
        throw mismatch(value, target, path);
      case Binary:
      case LargeBinary:
        return bytes(value, target, path);
      case FixedSizeBinary: {
        byte[] bytes = bytes(value, target, path);
        int width = ((ArrowType.FixedSizeBinary) type).getByteWidth();
        if (bytes.length != width) {
          throw new InvalidRecordException("field `" + path + "`: " + bytes.length + " bytes for a fixed(" + width + ") column");
        }
        return bytes;
      }
      case Decimal:
        return decimal(value, (ArrowType.Decimal) type, target, path);
      case Date:
        if (value instanceof Date date) {
          return Math.toIntExact(Math.floorDiv(date.getTime(), 86_400_000L));
        }
        if (value instanceof String text) {
          return Math.toIntExact(parse(() -> LocalDate.parse(text).toEpochDay(), text, "an ISO-8601 date", path));
        }
        if (value instanceof Integer days) {
          return days;
        }
        throw mismatch(value, target, path);
      case Time:
        if (value instanceof Date time) {
          return Math.floorMod(time.getTime(), 86_400_000L) * 1000;
        }
        if (value instanceof String text) {
          return parse(() -> LocalTime.parse(text).toNanoOfDay() / 1000, text, "an ISO-8601 time", path);
        }
        throw mismatch(value, target, path);
      case Timestamp:
        return timestamp(value, (ArrowType.Timestamp) type, target, path);
      case Struct:
        return struct(value, target, path);
      case List:
        if (value instanceof List<?> list) {
          Field element = target.getChildren().get(0);
          List<Object> out = new ArrayList<>(list.size());
          for (int i = 0; i < list.size(); i++) {
            out.add(convert(list.get(i), element, path + "[" + i + "]"));
          }
          return out;
        }
        throw mismatch(value, target, path);
      case Map:
        if (value instanceof Map<?, ?> map) {
          Field entries = target.getChildren().get(0);
          Field key = entries.getChildren().get(0);
          Field item = entries.getChildren().get(1);
          List<Object[]> out = new ArrayList<>(map.size());
          for (Map.Entry<?, ?> entry : map.entrySet()) {
            Object k = convert(entry.getKey(), key, path + ".key");
            out.add(new Object[] {k, convert(entry.getValue(), item, path + "[" + entry.getKey() + "]")});
          }
          return out;
        }
        throw mismatch(value, target, path);
      default:
        throw new InvalidRecordException("field `" + path + "`: the column's type " + type + " cannot be written by the connector");
    }
  }

  private static Object integer(Object value, ArrowType.Int type, String path) {
    long v;
    if (isIntegral(value)) {
      v = ((Number) value).longValue();
    } else if (value instanceof BigInteger big && big.bitLength() < 64) {
      v = big.longValue();
    } else {
      throw new InvalidRecordException("field `" + path + "`: expected an integer for a column of type "
          + typeName(type) + ", got " + describe(value));
    }
    int bits = type.getBitWidth();
    if (bits < 64 && (v < -(1L << (bits - 1)) || v >= (1L << (bits - 1)))) {
      throw new InvalidRecordException("field `" + path + "`: " + v + " does not fit " + typeName(type));
    }
    return v;
  }

  private static Object decimal(Object value, ArrowType.Decimal type, Field target, String path) {
    BigDecimal decimal;
    if (value instanceof BigDecimal d) {
      decimal = d;
    } else if (isIntegral(value)) {
      decimal = BigDecimal.valueOf(((Number) value).longValue());
    } else if (value instanceof Double || value instanceof Float) {
      decimal = BigDecimal.valueOf(((Number) value).doubleValue());
    } else if (value instanceof String text) {
      decimal = parse(() -> new BigDecimal(text), text, "a decimal number", path);
    } else {
      throw mismatch(value, target, path);
    }
    BigDecimal scaled;
    try {
      scaled = decimal.setScale(type.getScale());
    } catch (ArithmeticException e) {
      throw new InvalidRecordException("field `" + path + "`: " + decimal + " has more than "
          + type.getScale() + " fraction digits (decimal(" + type.getPrecision() + "," + type.getScale() + "))");
    }
    if (scaled.precision() > type.getPrecision()) {
      throw new InvalidRecordException("field `" + path + "`: " + decimal + " does not fit decimal("
          + type.getPrecision() + "," + type.getScale() + ")");
    }
    return scaled;
  }

  private static Object timestamp(Object value, ArrowType.Timestamp type, Field target, String path) {
    long perSecond = type.getUnit() == TimeUnit.NANOSECOND ? 1_000_000_000L : type.getUnit() == TimeUnit.MICROSECOND
        ? 1_000_000L : type.getUnit() == TimeUnit.MILLISECOND ? 1000L : 1L;
    if (value instanceof Date date) {
      return Math.multiplyExact(date.getTime(), perSecond) / 1000;
    }
    if (isIntegral(value)) {
      // Schemaless JSON: epoch milliseconds, as Connect's Timestamp logical type counts.
      return Math.multiplyExact(((Number) value).longValue(), perSecond) / 1000;
    }
    if (value instanceof String text) {
      Instant instant = parse(() -> {
        try {
          return OffsetDateTime.parse(text.replace(' ', 'T')).toInstant();
        } catch (DateTimeParseException e) {
          return LocalDateTime.parse(text.replace(' ', 'T')).toInstant(ZoneOffset.UTC);
        }
      }, text, "an ISO-8601 timestamp", path);
      return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), perSecond),
          instant.getNano() / (1_000_000_000L / perSecond));
    }
    throw mismatch(value, target, path);
  }

  private static Map<String, Object> struct(Object value, Field target, String path) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (value instanceof Struct struct) {
      for (org.apache.kafka.connect.data.Field field : struct.schema().fields()) {
        if (target.getChildren().stream().noneMatch(c -> c.getName().equals(field.name()))) {
          throw new InvalidRecordException("field `" + path + "." + field.name() + "`: the column has no such field");
        }
      }
      for (Field child : target.getChildren()) {
        Object v = struct.schema().field(child.getName()) == null ? null : struct.get(child.getName());
        out.put(child.getName(), convert(v, child, path + "." + child.getName()));
      }
      return out;
    }
    if (value instanceof Map<?, ?> map) {
      for (Object key : map.keySet()) {
        if (target.getChildren().stream().noneMatch(c -> c.getName().equals(key))) {
          throw new InvalidRecordException("field `" + path + "." + key + "`: the column has no such field");
        }
      }
      for (Field child : target.getChildren()) {
        out.put(child.getName(), convert(map.get(child.getName()), child, path + "." + child.getName()));
      }
      return out;
    }
    throw mismatch(value, target, path);
  }

  private static byte[] bytes(Object value, Field target, String path) {
    if (value instanceof byte[] bytes) {
      return bytes;
    }
    if (value instanceof ByteBuffer buffer) {
      byte[] bytes = new byte[buffer.remaining()];
      buffer.duplicate().get(bytes);
      return bytes;
    }
    throw mismatch(value, target, path);
  }

  private static boolean isIntegral(Object value) {
    return value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte;
  }

  private interface Parse<T> {
    T get();
  }

  private static <T> T parse(Parse<T> parse, String text, String expected, String path) {
    try {
      return parse.get();
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new InvalidRecordException("field `" + path + "`: '" + text + "' is not " + expected);
    }
  }

  private static InvalidRecordException mismatch(Object value, Field target, String path) {
    return new InvalidRecordException("field `" + path + "`: " + describe(value)
        + " cannot be written to a column of type " + typeName(target.getType()));
  }

  private static String describe(Object value) {
    if (value instanceof Struct struct) {
      return "a Connect struct";
    }
    String kind = value instanceof String ? "STRING" : value instanceof Long ? "INT64" : value instanceof Integer ? "INT32"
        : value instanceof Short ? "INT16" : value instanceof Byte ? "INT8" : value instanceof Double ? "FLOAT64"
        : value instanceof Float ? "FLOAT32" : value instanceof Boolean ? "BOOLEAN" : value instanceof byte[] || value instanceof ByteBuffer
        ? "BYTES" : value instanceof List ? "ARRAY" : value instanceof Map ? "MAP" : value.getClass().getSimpleName();
    return "a " + kind + " value";
  }

  static String typeName(ArrowType type) {
    return switch (type.getTypeID()) {
      case Int -> ((ArrowType.Int) type).getBitWidth() == 64 ? "bigint" : ((ArrowType.Int) type).getBitWidth() == 32 ? "int"
          : "int" + ((ArrowType.Int) type).getBitWidth();
      case FloatingPoint -> ((ArrowType.FloatingPoint) type).getPrecision().name().equals("DOUBLE") ? "double" : "float";
      case Bool -> "boolean";
      case Utf8, LargeUtf8 -> "string";
      case Binary, LargeBinary -> "binary";
      case Decimal -> "decimal(" + ((ArrowType.Decimal) type).getPrecision() + "," + ((ArrowType.Decimal) type).getScale() + ")";
      case Date -> "date";
      case Time -> "time";
      case Timestamp -> ((ArrowType.Timestamp) type).getTimezone() == null ? "timestamp" : "timestamptz";
      default -> type.toString().toLowerCase(java.util.Locale.ROOT);
    };
  }
}

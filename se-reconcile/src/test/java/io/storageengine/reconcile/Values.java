package io.storageengine.reconcile;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/** Random Iceberg generic values and a normal form for comparing records value for value. */
final class Values {
  private Values() {}

  static Object random(Random rnd, Type type, boolean optional) {
    if (optional && rnd.nextInt(8) == 0) {
      return null;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> rnd.nextBoolean();
      case INTEGER -> rnd.nextInt(2000) - 1000;
      case LONG -> rnd.nextLong();
      case FLOAT -> rnd.nextFloat() * 1000 - 500;
      case DOUBLE -> rnd.nextDouble() * 1e6 - 5e5;
      case DECIMAL -> {
        Types.DecimalType d = (Types.DecimalType) type;
        yield new BigDecimal(BigInteger.valueOf(rnd.nextLong() % (long) Math.pow(10, Math.min(d.precision(), 18))), d.scale());
      }
      case DATE -> LocalDate.of(1990, 1, 1).plusDays(rnd.nextInt(20000));
      case TIME -> LocalTime.ofNanoOfDay((rnd.nextLong() & Long.MAX_VALUE) % 86_400_000_000L * 1000);
      case TIMESTAMP -> {
        LocalDateTime ts = LocalDateTime.of(1995, 1, 1, 0, 0).plusSeconds(rnd.nextInt(900_000_000))
            .plusNanos(rnd.nextInt(1_000_000) * 1000L);
        yield ((Types.TimestampType) type).shouldAdjustToUTC() ? ts.atOffset(ZoneOffset.UTC) : ts;
      }
      case STRING -> "s" + Integer.toString(rnd.nextInt(100000), 36) + (rnd.nextInt(4) == 0 ? "é✓" : "");
      case UUID -> new UUID(rnd.nextLong(), rnd.nextLong());
      case FIXED -> {
        byte[] b = new byte[((Types.FixedType) type).length()];
        rnd.nextBytes(b);
        yield b;
      }
      case BINARY -> {
        byte[] b = new byte[rnd.nextInt(10)];
        rnd.nextBytes(b);
        yield ByteBuffer.wrap(b);
      }
      case STRUCT -> {
        GenericRecord r = GenericRecord.create(type.asStructType());
        for (Types.NestedField f : type.asStructType().fields()) {
          r.setField(f.name(), random(rnd, f.type(), f.isOptional()));
        }
        yield r;
      }
      case LIST -> {
        List<Object> l = new ArrayList<>();
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
          l.add(random(rnd, type.asListType().elementType(), type.asListType().isElementOptional()));
        }
        yield l;
      }
      case MAP -> {
        Map<Object, Object> m = new HashMap<>();
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
          m.put(random(rnd, type.asMapType().keyType(), false),
              random(rnd, type.asMapType().valueType(), type.asMapType().isValueOptional()));
        }
        yield m;
      }
      default -> throw new IllegalArgumentException(type.toString());
    };
  }

  static Record randomRecord(Random rnd, Schema schema) {
    GenericRecord r = GenericRecord.create(schema);
    for (Types.NestedField f : schema.columns()) {
      r.setField(f.name(), random(rnd, f.type(), f.isOptional()));
    }
    return r;
  }

  /** Lists, maps and ByteBuffers with value equality, for any generic value. */
  static Object normal(Object v) {
    if (v instanceof Record r) {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < r.size(); i++) {
        out.add(normal(r.get(i, Object.class)));
      }
      return out;
    }
    if (v instanceof byte[] b) {
      return ByteBuffer.wrap(b);
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      for (Object o : l) {
        out.add(normal(o));
      }
      return out;
    }
    if (v instanceof Map<?, ?> m) {
      Map<Object, Object> out = new HashMap<>();
      m.forEach((k, val) -> out.put(normal(k), normal(val)));
      return out;
    }
    if (v instanceof OffsetDateTime odt) {
      return odt.toInstant();
    }
    return v;
  }
}

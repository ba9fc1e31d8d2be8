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
import org.apache.iceberg.variants.ShreddedObject;
import org.apache.iceberg.variants.ValueArray;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantArray;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantObject;
import org.apache.iceberg.variants.VariantValue;
import org.apache.iceberg.variants.Variants;

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
      case VARIANT -> randomVariant(rnd);
      case GEOMETRY, GEOGRAPHY -> ByteBuffer.wrap(io.storageengine.catalog.GeoValues.wktToWkb(randomWkt(rnd)));
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

  /**
   * A random variant: an object of a few fields holding each of the variant primitive types the
   * engine carries, a nested object and an array (every value may also be the variant null).
   */
  static String randomWkt(Random rnd) {
    String x = Integer.toString(rnd.nextInt(360) - 180);
    String y = Integer.toString(rnd.nextInt(180) - 90);
    return switch (rnd.nextInt(4)) {
      case 0 -> "POINT (" + x + " " + y + ")";
      case 1 -> "POINT Z (" + x + ".5 " + y + " " + rnd.nextInt(1000) + ")";
      case 2 -> "LINESTRING (" + x + " " + y + ", " + rnd.nextInt(90) + ".25 " + rnd.nextInt(45) + ")";
      default -> "POLYGON ((0 0, " + x + " 0, " + x + " " + y + ", 0 0))";
    };
  }

  static Variant randomVariant(Random rnd) {
    List<String> names = List.of("i8", "i16", "i32", "i64", "dbl", "dec", "str", "bool", "date", "ts", "tstz",
        "obj", "arr", "nul", "x");
    VariantMetadata metadata = Variants.metadata(names);
    ShreddedObject object = Variants.object(metadata);
    if (rnd.nextInt(10) == 0) {
      // A value that is not an object: a string or an array.
      if (rnd.nextBoolean()) {
        return Variant.of(Variants.emptyMetadata(), Variants.of("top" + rnd.nextInt(100)));
      }
      ValueArray array = Variants.array();
      array.add(Variants.of(rnd.nextInt(1000)));
      array.add(Variants.of("e" + rnd.nextInt(10)));
      return Variant.of(Variants.emptyMetadata(), array);
    }
    object.put("i8", Variants.of((byte) (rnd.nextInt(256) - 128)));
    object.put("i16", Variants.of((short) (rnd.nextInt(60000) - 30000)));
    object.put("i32", Variants.of(rnd.nextInt()));
    object.put("i64", Variants.of(rnd.nextLong()));
    object.put("dbl", Variants.of(rnd.nextDouble() * 1e6 - 5e5));
    object.put("dec", Variants.of(BigDecimal.valueOf(rnd.nextInt(1_000_000) - 500_000, 3)));
    object.put("str", Variants.of("v" + Integer.toString(rnd.nextInt(100000), 36) + (rnd.nextInt(4) == 0 ? "é✓" : "")));
    object.put("bool", Variants.of(rnd.nextBoolean()));
    object.put("date", Variants.ofDate(rnd.nextInt(20000)));
    object.put("ts", Variants.ofTimestampntz((rnd.nextLong() & Long.MAX_VALUE) % 2_000_000_000_000_000L));
    object.put("tstz", Variants.ofTimestamptz((rnd.nextLong() & Long.MAX_VALUE) % 2_000_000_000_000_000L));
    if (rnd.nextBoolean()) {
      ShreddedObject nested = Variants.object(metadata);
      nested.put("x", Variants.of(rnd.nextInt(100)));
      nested.put("str", Variants.of("n" + rnd.nextInt(100)));
      object.put("obj", nested);
    }
    ValueArray array = Variants.array();
    for (int i = rnd.nextInt(4); i > 0; i--) {
      array.add(Variants.of(rnd.nextInt(1000)));
    }
    object.put("arr", array);
    object.put("nul", Variants.ofNull());
    return Variant.of(metadata, object);
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
    if (v instanceof Variant variant) {
      return normal(variant.value());
    }
    if (v instanceof VariantValue value) {
      return normalVariant(value);
    }
    return v;
  }

  /** A variant value as maps, lists and (physical type, value) pairs. */
  static Object normalVariant(VariantValue value) {
    switch (value.type()) {
      case OBJECT -> {
        VariantObject object = value.asObject();
        Map<String, Object> out = new java.util.TreeMap<>();
        for (String name : object.fieldNames()) {
          out.put(name, normalVariant(object.get(name)));
        }
        return out;
      }
      case ARRAY -> {
        VariantArray array = value.asArray();
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < array.numElements(); i++) {
          out.add(normalVariant(array.get(i)));
        }
        return out;
      }
      default -> {
        return List.of(value.type(), String.valueOf(value.asPrimitive().get()));
      }
    }
  }
}

package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The one mapping between Iceberg schemas and Arrow schemas.
 *
 * <p>Iceberg to Arrow: every field, nested ones included, carries its Iceberg field id in the
 * Arrow field metadata under {@link #FIELD_ID_KEY}; timestamps are microseconds ({@code UTC}
 * zone for {@code timestamptz}), uuid is {@code fixed_size_binary(16)}, unknown is Arrow's null type, lists name their element
 * {@code element}, maps are {@code entries<key, value>}, geometry and geography are binary (their WKB), variant is Arrow's canonical extension
 * {@value #VARIANT_EXTENSION}: {@code struct<metadata: binary not null, value: binary not null>}
 * holding the Parquet variant spec's metadata and value encodings (the children carry no field
 * ids: a variant is one Iceberg field). Arrow to Iceberg (creating a table from
 * a client's Arrow schema) assigns fresh ids and maps every Arrow type that has a lossless
 * Iceberg counterpart; anything else is refused naming the column.
 */
public final class IcebergArrowSchemas {
  /** Arrow field metadata key holding the Iceberg field id (the Parquet/Arrow convention). */
  public static final String FIELD_ID_KEY = "PARQUET:field_id";
  /** Arrow field metadata key naming an extension type. */
  public static final String EXTENSION_NAME_KEY = "ARROW:extension:name";
  /** Arrow field metadata key holding an extension type's parameters. */
  public static final String EXTENSION_METADATA_KEY = "ARROW:extension:metadata";
  /** The Arrow canonical extension name of a Parquet variant (DuckDB reads and writes it too). */
  public static final String VARIANT_EXTENSION = "arrow.parquet.variant";
  /** The variant struct's child holding the metadata (string dictionary) encoding. */
  public static final String VARIANT_METADATA = "metadata";
  /** The variant struct's child holding the value encoding. */
  public static final String VARIANT_VALUE = "value";

  private IcebergArrowSchemas() {}

  public static org.apache.arrow.vector.types.pojo.Schema toArrow(Schema schema) {
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField f : schema.columns()) {
      fields.add(toArrow(f));
    }
    return new org.apache.arrow.vector.types.pojo.Schema(fields);
  }

  public static Field toArrow(Types.NestedField field) {
    return field(field.name(), field.fieldId(), field.isOptional(), field.type());
  }

  /** The field id stored in an Arrow field's metadata, or -1 when it has none. */
  public static int fieldId(Field field) {
    Map<String, String> md = field.getMetadata();
    String id = md == null ? null : md.get(FIELD_ID_KEY);
    return id == null ? -1 : Integer.parseInt(id);
  }

  /** Whether {@code field} is marked as the {@value #VARIANT_EXTENSION} extension type. */
  public static boolean isVariant(Field field) {
    Map<String, String> md = field.getMetadata();
    return md != null && VARIANT_EXTENSION.equals(md.get(EXTENSION_NAME_KEY));
  }

  private static Field field(String name, int id, boolean nullable, Type type) {
    Map<String, String> metadata = Map.of(FIELD_ID_KEY, Integer.toString(id));
    List<Field> children = new ArrayList<>();
    ArrowType arrowType;
    switch (type.typeId()) {
      case VARIANT -> {
        return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null,
            Map.of(FIELD_ID_KEY, Integer.toString(id), EXTENSION_NAME_KEY, VARIANT_EXTENSION,
                EXTENSION_METADATA_KEY, "")),
            List.of(Field.notNullable(VARIANT_METADATA, ArrowType.Binary.INSTANCE),
                Field.notNullable(VARIANT_VALUE, ArrowType.Binary.INSTANCE)));
      }
      case STRUCT -> {
        arrowType = ArrowType.Struct.INSTANCE;
        for (Types.NestedField child : type.asStructType().fields()) {
          children.add(toArrow(child));
        }
      }
      case LIST -> {
        Types.ListType list = type.asListType();
        arrowType = ArrowType.List.INSTANCE;
        children.add(field("element", list.elementId(), list.isElementOptional(), list.elementType()));
      }
      case MAP -> {
        Types.MapType map = type.asMapType();
        arrowType = new ArrowType.Map(false);
        Field key = field("key", map.keyId(), false, map.keyType());
        Field value = field("value", map.valueId(), map.isValueOptional(), map.valueType());
        children.add(new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(key, value)));
      }
      default -> arrowType = primitive(type);
    }
    return new Field(name, new FieldType(nullable, arrowType, null, metadata), children);
  }

  /** The Arrow type that represents an Iceberg primitive type. */
  public static ArrowType primitive(Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> ArrowType.Bool.INSTANCE;
      case INTEGER -> new ArrowType.Int(32, true);
      case LONG -> new ArrowType.Int(64, true);
      case FLOAT -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case DOUBLE -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case DECIMAL -> {
        Types.DecimalType d = (Types.DecimalType) type;
        yield new ArrowType.Decimal(d.precision(), d.scale(), 128);
      }
      case DATE -> new ArrowType.Date(DateUnit.DAY);
      case TIME -> new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case TIMESTAMP -> new ArrowType.Timestamp(TimeUnit.MICROSECOND,
          ((Types.TimestampType) type).shouldAdjustToUTC() ? "UTC" : null);
      case TIMESTAMP_NANO -> new ArrowType.Timestamp(TimeUnit.NANOSECOND,
          ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "UTC" : null);
      case STRING -> ArrowType.Utf8.INSTANCE;
      case UUID -> new ArrowType.FixedSizeBinary(16);
      case FIXED -> new ArrowType.FixedSizeBinary(((Types.FixedType) type).length());
      // Geometry and geography values are their WKB (the Iceberg spec's storage form).
      case BINARY, GEOMETRY, GEOGRAPHY -> ArrowType.Binary.INSTANCE;
      case UNKNOWN -> ArrowType.Null.INSTANCE;
      default -> throw SeException.invalid("Iceberg type %s has no Arrow mapping", type);
    };
  }

  /** An Iceberg schema for a client's Arrow schema, with fresh field ids from 1. */
  public static Schema fromArrow(org.apache.arrow.vector.types.pojo.Schema arrow) {
    AtomicInteger ids = new AtomicInteger(0);
    List<Types.NestedField> columns = new ArrayList<>();
    // Top-level ids first, as Iceberg does, then nested ids.
    int[] topIds = new int[arrow.getFields().size()];
    for (int i = 0; i < topIds.length; i++) {
      topIds[i] = ids.incrementAndGet();
    }
    for (int i = 0; i < topIds.length; i++) {
      Field f = arrow.getFields().get(i);
      columns.add(nested(f.getName(), topIds[i], f.isNullable(), icebergType(f, f.getName(), ids)));
    }
    return new Schema(columns);
  }

  private static Types.NestedField nested(String name, int id, boolean nullable, Type type) {
    return nullable ? Types.NestedField.optional(id, name, type) : Types.NestedField.required(id, name, type);
  }

  private static Type icebergType(Field f, String path, AtomicInteger ids) {
    ArrowType t = f.getDictionary() != null ? f.getType() : f.getType();
    return switch (t.getTypeID()) {
      case Bool -> Types.BooleanType.get();
      case Int -> {
        ArrowType.Int i = (ArrowType.Int) t;
        if (i.getIsSigned() ? i.getBitWidth() <= 32 : i.getBitWidth() <= 16) {
          yield Types.IntegerType.get();
        }
        if (i.getIsSigned() || i.getBitWidth() == 32) {
          yield Types.LongType.get();
        }
        throw SeException.invalid("column '%s': unsigned 64-bit integers have no Iceberg type", path);
      }
      case FloatingPoint -> ((ArrowType.FloatingPoint) t).getPrecision() == FloatingPointPrecision.DOUBLE
          ? Types.DoubleType.get() : Types.FloatType.get();
      case Decimal -> {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        if (d.getPrecision() > 38) {
          throw SeException.invalid("column '%s': decimal precision %d exceeds 38", path, d.getPrecision());
        }
        yield Types.DecimalType.of(d.getPrecision(), d.getScale());
      }
      case Date -> Types.DateType.get();
      case Time -> Types.TimeType.get();
      case Timestamp -> {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        boolean utc = ts.getTimezone() != null;
        if (ts.getUnit() == TimeUnit.NANOSECOND) {
          yield utc ? Types.TimestampNanoType.withZone() : Types.TimestampNanoType.withoutZone();
        }
        yield utc ? Types.TimestampType.withZone() : Types.TimestampType.withoutZone();
      }
      case Utf8, LargeUtf8, Utf8View -> Types.StringType.get();
      case Binary, LargeBinary, BinaryView -> Types.BinaryType.get();
      case FixedSizeBinary -> Types.FixedType.ofLength(((ArrowType.FixedSizeBinary) t).getByteWidth());
      case Struct -> {
        if (isVariant(f)) {
          yield Types.VariantType.get();
        }
        List<Types.NestedField> fields = new ArrayList<>();
        for (Field child : f.getChildren()) {
          int id = ids.incrementAndGet();
          fields.add(nested(child.getName(), id, child.isNullable(),
              icebergType(child, path + "." + child.getName(), ids)));
        }
        yield Types.StructType.of(fields);
      }
      case List, LargeList, FixedSizeList, ListView, LargeListView -> {
        Field element = f.getChildren().get(0);
        int id = ids.incrementAndGet();
        Type elementType = icebergType(element, path + ".element", ids);
        yield element.isNullable() ? Types.ListType.ofOptional(id, elementType)
            : Types.ListType.ofRequired(id, elementType);
      }
      case Map -> {
        Field entries = f.getChildren().get(0);
        Field key = entries.getChildren().get(0);
        Field value = entries.getChildren().get(1);
        int keyId = ids.incrementAndGet();
        int valueId = ids.incrementAndGet();
        Type keyType = icebergType(key, path + ".key", ids);
        Type valueType = icebergType(value, path + ".value", ids);
        yield value.isNullable() ? Types.MapType.ofOptional(keyId, valueId, keyType, valueType)
            : Types.MapType.ofRequired(keyId, valueId, keyType, valueType);
      }
      default -> throw SeException.invalid("column '%s': Arrow type %s has no Iceberg type", path, t);
    };
  }
}

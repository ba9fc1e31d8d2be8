package io.storageengine.ingest;

import java.util.Locale;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.iceberg.types.Type;

/** Short, stable type names for error messages ("expected decimal(10,2), got utf8"). */
final class ArrowTypeNames {
  private ArrowTypeNames() {}

  static String iceberg(Type type) {
    if (type.isNestedType()) {
      return type.typeId().name().toLowerCase(Locale.ROOT);
    }
    return type.toString().replace(", ", ",");
  }

  static String arrow(ArrowType type) {
    return switch (type.getTypeID()) {
      case Int -> {
        ArrowType.Int i = (ArrowType.Int) type;
        yield (i.getIsSigned() ? "int" : "uint") + i.getBitWidth();
      }
      case FloatingPoint -> {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) type).getPrecision();
        yield p == FloatingPointPrecision.HALF ? "float16"
            : p == FloatingPointPrecision.SINGLE ? "float32" : "float64";
      }
      case Bool -> "bool";
      case Null -> "null";
      case Utf8 -> "utf8";
      case LargeUtf8 -> "large_utf8";
      case Utf8View -> "utf8_view";
      case Binary -> "binary";
      case LargeBinary -> "large_binary";
      case BinaryView -> "binary_view";
      case FixedSizeBinary -> "fixed_size_binary(" + ((ArrowType.FixedSizeBinary) type).getByteWidth() + ")";
      case Decimal -> {
        ArrowType.Decimal d = (ArrowType.Decimal) type;
        yield (d.getBitWidth() == 256 ? "decimal256(" : "decimal(")
            + d.getPrecision() + "," + d.getScale() + ")";
      }
      case Date -> ((ArrowType.Date) type).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY
          ? "date32" : "date64";
      case Time -> {
        ArrowType.Time t = (ArrowType.Time) type;
        yield "time" + t.getBitWidth() + "[" + unit(t.getUnit()) + "]";
      }
      case Timestamp -> {
        ArrowType.Timestamp t = (ArrowType.Timestamp) type;
        yield "timestamp[" + unit(t.getUnit())
            + (t.getTimezone() == null ? "]" : ", tz=" + t.getTimezone() + "]");
      }
      case Struct -> "struct";
      case List -> "list";
      case LargeList -> "large_list";
      case FixedSizeList -> "fixed_size_list";
      case Map -> "map";
      default -> type.getTypeID().name().toLowerCase(Locale.ROOT);
    };
  }

  static String unit(TimeUnit unit) {
    return switch (unit) {
      case SECOND -> "s";
      case MILLISECOND -> "ms";
      case MICROSECOND -> "us";
      case NANOSECOND -> "ns";
    };
  }
}

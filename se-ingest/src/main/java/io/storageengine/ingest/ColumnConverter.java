package io.storageengine.ingest;

import io.storageengine.common.SeException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Converts one incoming column, or a field nested in one, to the Arrow layout of the table's
 * column (the types of {@link io.storageengine.catalog.IcebergArrowSchemas#toArrow}). Built once
 * per stream from the incoming field and the table's field, then applied to every batch.
 *
 * <p>An <em>identity</em> converter means the incoming buffers already have the table's layout
 * (field names, nullability, time zone spelling and metadata only live in the schema), so the
 * vector is written to the WAL as is. Other converters build a new vector: safe widenings copy
 * value by value; structs, lists and maps re-assemble converted children and keep the incoming
 * validity and offsets.
 */
abstract class ColumnConverter {
  final String path;
  final Field target;

  ColumnConverter(String path, Field target) {
    this.path = path;
    this.target = target;
  }

  /** True when the incoming buffers already have the table's layout. */
  abstract boolean identity();

  /**
   * The values of {@code source} in the table's layout: {@code source} itself when
   * {@link #identity()}, otherwise a new vector from {@code allocator} owned by the caller.
   * May move buffers out of {@code source}, which must not be read afterwards.
   */
  abstract FieldVector convert(FieldVector source, BufferAllocator allocator);

  /** Rejects nulls in required nested fields (struct fields, list elements, map keys, values). */
  void checkNested(ValueVector source) {}

  /** The converter for {@code source} into a column of Iceberg type {@code type}. */
  static ColumnConverter create(String path, Field source, Type type, Field target) {
    if (source.getDictionary() != null) {
      throw SeException.invalid("column `%s`: dictionary encoding is only supported on top-level "
          + "columns", path);
    }
    ArrowType t = source.getType();
    switch (type.typeId()) {
      case STRUCT:
        if (t instanceof ArrowType.Struct) {
          return StructConverter.byName(path, source, type.asStructType(), target);
        }
        break;
      case LIST:
        if (t instanceof ArrowType.List || t instanceof ArrowType.LargeList) {
          Types.ListType list = type.asListType();
          ColumnConverter element = create(path + ".element", source.getChildren().get(0),
              list.elementType(), target.getChildren().get(0));
          return new ListConverter(path, target, element, t instanceof ArrowType.LargeList);
        }
        break;
      case VARIANT: {
        ColumnConverter variant = VariantConverter.create(path, source, target);
        if (variant != null) {
          return variant;
        }
        break;
      }
      case GEOMETRY:
      case GEOGRAPHY: {
        ColumnConverter geometry = GeometryConverter.create(path, source, target,
            type.typeId() == Type.TypeID.GEOGRAPHY);
        if (geometry != null) {
          return geometry;
        }
        break;
      }
      case MAP:
        if (t instanceof ArrowType.Map) {
          ColumnConverter entries = StructConverter.mapEntries(path, source.getChildren().get(0),
              type.asMapType(), target.getChildren().get(0));
          return new ListConverter(path, target, entries, false);
        }
        break;
      default:
        ColumnConverter primitive = primitive(path, t, type, target);
        if (primitive != null) {
          return primitive;
        }
    }
    throw mismatch(path, type, t);
  }

  static SeException mismatch(String path, Type expected, ArrowType got) {
    String hint = "";
    if (got instanceof ArrowType.Timestamp ts
        && (expected instanceof Types.TimestampType || expected instanceof Types.TimestampNanoType)) {
      hint = ts.getTimezone() == null
          ? " (a timestamp without time zone cannot be stored in a timestamptz column)"
          : " (a timestamp with time zone cannot be stored in a timestamp column)";
    }
    return SeException.invalid("column `%s`: expected %s, got %s%s",
        path, ArrowTypeNames.iceberg(expected), ArrowTypeNames.arrow(got), hint);
  }

  private static ColumnConverter primitive(String path, ArrowType t, Type type, Field target) {
    switch (type.typeId()) {
      case BOOLEAN:
        return t instanceof ArrowType.Bool ? new Identity(path, target) : null;
      case INTEGER:
        if (t instanceof ArrowType.Int i) {
          if (i.getIsSigned() && i.getBitWidth() == 32) {
            return new Identity(path, target);
          }
          if (i.getBitWidth() < 32) {
            return new Widening(path, target, (s, d, row) ->
                ((IntVector) d).set(row, (int) ((BaseIntVector) s).getValueAsLong(row)));
          }
        }
        return null;
      case LONG:
        if (t instanceof ArrowType.Int i) {
          if (i.getIsSigned() && i.getBitWidth() == 64) {
            return new Identity(path, target);
          }
          if (i.getBitWidth() <= 32) {
            return new Widening(path, target, (s, d, row) ->
                ((BigIntVector) d).set(row, ((BaseIntVector) s).getValueAsLong(row)));
          }
        }
        return null;
      case FLOAT:
        return t instanceof ArrowType.FloatingPoint f
            && f.getPrecision() == FloatingPointPrecision.SINGLE ? new Identity(path, target) : null;
      case DOUBLE:
        if (t instanceof ArrowType.FloatingPoint f) {
          if (f.getPrecision() == FloatingPointPrecision.DOUBLE) {
            return new Identity(path, target);
          }
          if (f.getPrecision() == FloatingPointPrecision.SINGLE) {
            return new Widening(path, target,
                (s, d, row) -> ((Float8Vector) d).set(row, ((Float4Vector) s).get(row)));
          }
        }
        return null;
      case DECIMAL: {
        Types.DecimalType dt = (Types.DecimalType) type;
        // Same scale and no more digits: the 128-bit unscaled values are already right.
        return t instanceof ArrowType.Decimal d && d.getBitWidth() == 128
            && d.getScale() == dt.scale() && d.getPrecision() <= dt.precision()
            ? new Identity(path, target) : null;
      }
      case DATE:
        return t instanceof ArrowType.Date d && d.getUnit() == DateUnit.DAY
            ? new Identity(path, target) : null;
      case TIME:
        if (t instanceof ArrowType.Time tm) {
          return switch (tm.getUnit()) {
            case MICROSECOND -> new Identity(path, target);
            case MILLISECOND -> new Widening(path, target, (s, d, row) ->
                ((TimeMicroVector) d).set(row, ((TimeMilliVector) s).get(row) * 1_000L));
            case SECOND -> new Widening(path, target, (s, d, row) ->
                ((TimeMicroVector) d).set(row, ((TimeSecVector) s).get(row) * 1_000_000L));
            case NANOSECOND -> null;
          };
        }
        return null;
      case TIMESTAMP:
        return timestamp(path, t, ((Types.TimestampType) type).shouldAdjustToUTC(),
            TimeUnit.MICROSECOND, target);
      case TIMESTAMP_NANO:
        return timestamp(path, t, ((Types.TimestampNanoType) type).shouldAdjustToUTC(),
            TimeUnit.NANOSECOND, target);
      case STRING:
        if (t instanceof ArrowType.Utf8) {
          return new Identity(path, target);
        }
        return t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.Utf8View
            ? new Widening(path, target, ColumnConverter::copyBytes) : null;
      case BINARY:
        if (t instanceof ArrowType.Binary) {
          return new Identity(path, target);
        }
        return t instanceof ArrowType.LargeBinary || t instanceof ArrowType.BinaryView
            ? new Widening(path, target, ColumnConverter::copyBytes) : null;
      case FIXED:
        return t instanceof ArrowType.FixedSizeBinary f
            && f.getByteWidth() == ((Types.FixedType) type).length() ? new Identity(path, target) : null;
      case UUID:
        return t instanceof ArrowType.FixedSizeBinary f && f.getByteWidth() == 16
            ? new Identity(path, target) : null;
      default:
        return null;
    }
  }

  private static ColumnConverter timestamp(
      String path, ArrowType t, boolean withZone, TimeUnit targetUnit, Field target) {
    if (!(t instanceof ArrowType.Timestamp ts) || (ts.getTimezone() != null) != withZone) {
      return null;
    }
    long perSecond = unitsPerSecond(targetUnit);
    long sourcePerSecond = unitsPerSecond(ts.getUnit());
    if (sourcePerSecond == perSecond) {
      // Any zone name denotes the same UTC instants; only the schema spells it.
      return new Identity(path, target);
    }
    if (sourcePerSecond > perSecond) {
      return null; // would drop precision
    }
    long factor = perSecond / sourcePerSecond;
    return new Widening(path, target, (s, d, row) -> {
      long value = ((TimeStampVector) s).get(row);
      try {
        ((TimeStampVector) d).set(row, Math.multiplyExact(value, factor));
      } catch (ArithmeticException e) {
        throw SeException.invalid("column `%s`: timestamp %d at row %d is out of range", path,
            value, row);
      }
    });
  }

  private static long unitsPerSecond(TimeUnit unit) {
    return switch (unit) {
      case SECOND -> 1L;
      case MILLISECOND -> 1_000L;
      case MICROSECOND -> 1_000_000L;
      case NANOSECOND -> 1_000_000_000L;
    };
  }

  private static void copyBytes(FieldVector source, FieldVector target, int row) {
    ((VariableWidthFieldVector) target).setSafe(row, ((VariableWidthFieldVector) source).get(row));
  }

  /** Reports the first null of a required field among the rows where {@code parent} is valid. */
  static void requireNoNulls(String path, ValueVector parent, ValueVector child) {
    if (child.getNullCount() == 0) {
      return;
    }
    for (int row = 0; row < child.getValueCount(); row++) {
      if (child.isNull(row) && (parent == null || !parent.isNull(row))) {
        throw SeException.invalid("column `%s`: null at row %d in a required field", path, row);
      }
    }
  }

  /** The incoming buffers already have the table's layout. */
  static final class Identity extends ColumnConverter {
    Identity(String path, Field target) {
      super(path, target);
    }

    @Override
    boolean identity() {
      return true;
    }

    @Override
    FieldVector convert(FieldVector source, BufferAllocator allocator) {
      return source;
    }
  }

  /** Copies value by value into a vector of the table's type (numeric and temporal widening). */
  static final class Widening extends ColumnConverter {
    interface ValueCopier {
      /** Copies the non-null value at {@code row}. */
      void copy(FieldVector source, FieldVector target, int row);
    }

    private final ValueCopier copier;

    Widening(String path, Field target, ValueCopier copier) {
      super(path, target);
      this.copier = copier;
    }

    @Override
    boolean identity() {
      return false;
    }

    @Override
    FieldVector convert(FieldVector source, BufferAllocator allocator) {
      int rows = source.getValueCount();
      FieldVector out = target.createVector(allocator);
      try {
        out.setInitialCapacity(rows);
        out.allocateNew();
        for (int row = 0; row < rows; row++) {
          if (source.isNull(row)) {
            setNull(out, row);
          } else {
            copier.copy(source, out, row);
          }
        }
        out.setValueCount(rows);
        return out;
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }

    private static void setNull(FieldVector vector, int row) {
      if (vector instanceof BaseFixedWidthVector fixed) {
        fixed.setNull(row);
      } else {
        ((BaseVariableWidthVector) vector).setNull(row);
      }
    }
  }

  /** A struct: children matched by name (or by position for map entries), converted each. */
  static final class StructConverter extends ColumnConverter {
    /** Per target child, the converter of the incoming child, or null when it is absent. */
    private final ColumnConverter[] children;
    /** Per target child, the index of the incoming child, or -1. */
    private final int[] sourceIndex;
    private final boolean identity;

    private StructConverter(String path, Field target, ColumnConverter[] children,
        int[] sourceIndex, int sourceChildCount) {
      super(path, target);
      this.children = children;
      this.sourceIndex = sourceIndex;
      boolean same = sourceChildCount == children.length;
      for (int i = 0; i < children.length && same; i++) {
        same = sourceIndex[i] == i && children[i].identity();
      }
      this.identity = same;
    }

    static StructConverter byName(String path, Field source, Types.StructType type, Field target) {
      Map<String, Integer> byName = new HashMap<>();
      List<Field> sourceChildren = source.getChildren();
      for (int i = 0; i < sourceChildren.size(); i++) {
        if (byName.put(sourceChildren.get(i).getName(), i) != null) {
          throw SeException.invalid("column `%s.%s`: appears twice", path,
              sourceChildren.get(i).getName());
        }
      }
      List<Types.NestedField> fields = type.fields();
      ColumnConverter[] converters = new ColumnConverter[fields.size()];
      int[] index = new int[fields.size()];
      for (int i = 0; i < fields.size(); i++) {
        Types.NestedField f = fields.get(i);
        String childPath = path + "." + f.name();
        Integer at = byName.remove(f.name());
        index[i] = at == null ? -1 : at;
        if (at == null) {
          if (f.isRequired()) {
            throw SeException.invalid("column `%s`: required field missing", childPath);
          }
          continue;
        }
        converters[i] = create(childPath, sourceChildren.get(at), f.type(),
            target.getChildren().get(i));
      }
      if (!byName.isEmpty()) {
        throw SeException.invalid("column `%s.%s`: not a field of the table's struct", path,
            byName.keySet().iterator().next());
      }
      return new StructConverter(path, target, converters, index, sourceChildren.size());
    }

    /** Map entries: key and value by position, whatever the client named them. */
    static StructConverter mapEntries(String path, Field source, Types.MapType type, Field target) {
      if (source.getChildren().size() != 2) {
        throw SeException.invalid("column `%s`: map entries must have a key and a value", path);
      }
      ColumnConverter key = create(path + ".key", source.getChildren().get(0), type.keyType(),
          target.getChildren().get(0));
      ColumnConverter value = create(path + ".value", source.getChildren().get(1),
          type.valueType(), target.getChildren().get(1));
      return new StructConverter(path, target, new ColumnConverter[] {key, value},
          new int[] {0, 1}, 2);
    }

    @Override
    boolean identity() {
      return identity;
    }

    @Override
    void checkNested(ValueVector source) {
      StructVector struct = (StructVector) source;
      for (int i = 0; i < children.length; i++) {
        if (children[i] == null) {
          continue;
        }
        ValueVector child = struct.getChildByOrdinal(sourceIndex[i]);
        if (!children[i].target.isNullable()) {
          requireNoNulls(children[i].path, struct, child);
        }
        children[i].checkNested(child);
      }
    }

    @Override
    FieldVector convert(FieldVector source, BufferAllocator allocator) {
      if (identity) {
        return source;
      }
      StructVector in = (StructVector) source;
      int rows = in.getValueCount();
      StructVector out = (StructVector) target.createVector(allocator);
      try {
        List<FieldVector> outChildren = out.getChildrenFromFields();
        for (int i = 0; i < children.length; i++) {
          FieldVector outChild = outChildren.get(i);
          if (children[i] == null) {
            // An optional field the client did not send: all nulls.
            outChild.setInitialCapacity(rows);
            outChild.allocateNew();
            outChild.setValueCount(rows);
            continue;
          }
          FieldVector inChild = (FieldVector) in.getChildByOrdinal(sourceIndex[i]);
          FieldVector converted = children[i].convert(inChild, allocator);
          try {
            converted.makeTransferPair(outChild).transfer();
          } finally {
            if (converted != inChild) {
              converted.close();
            }
          }
        }
        for (int row = 0; row < rows; row++) {
          if (in.isNull(row)) {
            out.setNull(row);
          } else {
            out.setIndexDefined(row);
          }
        }
        out.setValueCount(rows);
        return out;
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }
  }

  /** List (from list or large list) and map: converted elements, the incoming offsets. */
  static final class ListConverter extends ColumnConverter {
    private final ColumnConverter element;
    private final boolean largeSource;

    ListConverter(String path, Field target, ColumnConverter element, boolean largeSource) {
      super(path, target);
      this.element = element;
      this.largeSource = largeSource;
    }

    @Override
    boolean identity() {
      return !largeSource && element.identity();
    }

    @Override
    void checkNested(ValueVector source) {
      ValueVector data = dataOf(source);
      if (!element.target.isNullable()) {
        requireNoNulls(element.path, null, data);
      }
      element.checkNested(data);
    }

    private ValueVector dataOf(ValueVector source) {
      return largeSource ? ((LargeListVector) source).getDataVector()
          : ((ListVector) source).getDataVector();
    }

    @Override
    FieldVector convert(FieldVector source, BufferAllocator allocator) {
      if (identity()) {
        return source;
      }
      int rows = source.getValueCount();
      long[] offsets = new long[rows + 1];
      ArrowBuf inOffsets = source.getOffsetBuffer();
      for (int i = 0; i <= rows && rows > 0; i++) {
        offsets[i] = largeSource ? inOffsets.getLong((long) i * 8) : inOffsets.getInt((long) i * 4);
        if (offsets[i] > Integer.MAX_VALUE) {
          throw SeException.invalid("column `%s`: list too large at row %d", path, i);
        }
      }
      boolean[] nulls = new boolean[rows];
      for (int row = 0; row < rows; row++) {
        nulls[row] = source.isNull(row);
      }
      FieldVector inData = (FieldVector) dataOf(source);
      ListVector out = (ListVector) target.createVector(allocator);
      try {
        out.setInitialCapacity(rows);
        out.allocateNew();
        FieldVector converted = element.convert(inData, allocator);
        try {
          converted.makeTransferPair(out.getDataVector()).transfer();
        } finally {
          if (converted != inData) {
            converted.close();
          }
        }
        ArrowBuf outOffsets = out.getOffsetBuffer();
        ArrowBuf validity = out.getValidityBuffer();
        for (int i = 0; i <= rows && rows > 0; i++) {
          outOffsets.setInt((long) i * 4, (int) offsets[i]);
        }
        for (int row = 0; row < rows; row++) {
          BitVectorHelper.setValidityBit(validity, row, nulls[row] ? 0 : 1);
        }
        // Without lastSet, setValueCount would "fill holes" and overwrite our offsets.
        out.setLastSet(rows - 1);
        out.setValueCount(rows);
        return out;
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }
  }
}

package io.storageengine.cli;

import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Casts the columns of batches read from a file to the Arrow types the table's columns need,
 * where the server would not accept the file's type as it is: text to {@code uuid} (the usual
 * 8-4-4-4-12 form), text to {@code fixed(n)} (exactly 2n hex digits) or binary of n bytes to
 * {@code fixed(n)}, text to {@code timestamp_ns} / {@code timestamptz_ns} (ISO-8601 with up to
 * nine fraction digits, {@code T} or a space, an optional offset; without one the time is UTC),
 * and 64-bit integers to {@code int} when the value fits. The same casts apply inside structs
 * (children by name), list elements and map keys and values. Every other column passes through
 * unchanged (the server widens what is safe and names what does not fit).
 *
 * <p>A value that cannot be cast fails the batch with an error naming the row (1-based, in file
 * order, header not counted) and the column path ({@code s.x}). Not thread-safe.
 */
final class TableCast {
  private static final DateTimeFormatter LOCAL = new DateTimeFormatterBuilder()
      .append(DateTimeFormatter.ISO_LOCAL_DATE)
      .optionalStart().appendLiteral('T').optionalEnd()
      .optionalStart().appendLiteral(' ').optionalEnd()
      .appendValue(ChronoField.HOUR_OF_DAY, 2).appendLiteral(':')
      .appendValue(ChronoField.MINUTE_OF_HOUR, 2)
      .optionalStart().appendLiteral(':').appendValue(ChronoField.SECOND_OF_MINUTE, 2)
      .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
      .optionalEnd()
      .optionalStart().appendOffset("+HH:MM:ss", "Z").optionalEnd()
      .optionalStart().appendOffset("+HHmm", "Z").optionalEnd()
      .optionalStart().appendOffset("+HH", "Z").optionalEnd()
      .toFormatter();

  /** One cast batch: the root to send and the vectors this cast allocated. */
  static final class Batch implements AutoCloseable {
    private final VectorSchemaRoot root;
    private final List<FieldVector> owned;

    private Batch(VectorSchemaRoot root, List<FieldVector> owned) {
      this.root = root;
      this.owned = owned;
    }

    /** The cast batch; same columns, in the same order, as the source. */
    VectorSchemaRoot root() {
      return root;
    }

    @Override
    public void close() {
      owned.forEach(FieldVector::close);
    }
  }

  private final Schema table;
  private final int dataColumns;
  private final BufferAllocator allocator;
  private long rowsBefore;

  /**
   * {@code dataColumns}: how many leading columns of each batch are file data (-1: all); the
   * others (presence flags) pass through.
   */
  TableCast(Schema table, int dataColumns, BufferAllocator allocator) {
    this(table, dataColumns, allocator, 0);
  }

  /** As above, for a file whose first {@code rowsBefore} rows were skipped (rows are numbered from the file's first). */
  TableCast(Schema table, int dataColumns, BufferAllocator allocator, long rowsBefore) {
    this.table = table;
    this.dataColumns = dataColumns;
    this.allocator = allocator;
    this.rowsBefore = rowsBefore;
  }

  /** {@code source} cast to the table's types; the result views the source's unchanged columns. */
  Batch apply(VectorSchemaRoot source) {
    int n = dataColumns < 0 ? source.getFieldVectors().size() : dataColumns;
    List<FieldVector> vectors = new ArrayList<>();
    List<FieldVector> owned = new ArrayList<>();
    long base = rowsBefore;
    try {
      for (int i = 0; i < source.getFieldVectors().size(); i++) {
        FieldVector v = source.getVector(i);
        Types.NestedField field = i < n ? table.caseInsensitiveFindField(v.getName()) : null;
        if (field == null || !needsCast(v.getField(), field.type())) {
          vectors.add(v);
          continue;
        }
        FieldVector cast = targetField(v.getField(), field.type()).createVector(allocator);
        owned.add(cast);
        fill(v, cast, field.type(), r -> r, field.name(), base);
        vectors.add(cast);
      }
    } catch (RuntimeException e) {
      owned.forEach(FieldVector::close);
      throw e;
    }
    rowsBefore += source.getRowCount();
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(source.getRowCount());
    return new Batch(root, owned);
  }

  /** Whether a column of Arrow field {@code f} must be cast to be a column of {@code type}. */
  static boolean needsCast(Field f, Type type) {
    ArrowType t = f.getType();
    return switch (type.typeId()) {
      case INTEGER -> t instanceof ArrowType.Int i && i.getBitWidth() == 64;
      case UUID -> t instanceof ArrowType.Utf8;
      case FIXED -> t instanceof ArrowType.Utf8 || t instanceof ArrowType.Binary;
      case TIMESTAMP_NANO -> t instanceof ArrowType.Utf8;
      case STRUCT -> t instanceof ArrowType.Struct && f.getChildren().stream().anyMatch(c -> {
        Types.NestedField child = type.asStructType().caseInsensitiveField(c.getName());
        return child != null && needsCast(c, child.type());
      });
      case LIST -> (t instanceof ArrowType.List) && needsCast(f.getChildren().get(0), type.asListType().elementType());
      case MAP -> t instanceof ArrowType.Map && entriesNeedCast(f.getChildren().get(0), type.asMapType());
      default -> false;
    };
  }

  private static boolean entriesNeedCast(Field entries, Types.MapType map) {
    return needsCast(entries.getChildren().get(0), map.keyType())
        || needsCast(entries.getChildren().get(1), map.valueType());
  }

  /** The Arrow field a column of {@code f} is cast to; {@code f} itself when no cast is needed. */
  private static Field targetField(Field f, Type type) {
    if (!needsCast(f, type)) {
      return f;
    }
    return switch (type.typeId()) {
      case INTEGER -> leaf(f, new ArrowType.Int(32, true));
      case UUID -> leaf(f, new ArrowType.FixedSizeBinary(16));
      case FIXED -> leaf(f, new ArrowType.FixedSizeBinary(((Types.FixedType) type).length()));
      case TIMESTAMP_NANO -> leaf(f, new ArrowType.Timestamp(TimeUnit.NANOSECOND,
          ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "UTC" : null));
      case STRUCT -> {
        List<Field> children = new ArrayList<>();
        for (Field c : f.getChildren()) {
          Types.NestedField child = type.asStructType().caseInsensitiveField(c.getName());
          children.add(child == null ? c : targetField(c, child.type()));
        }
        yield new Field(f.getName(), f.getFieldType(), children);
      }
      case LIST -> new Field(f.getName(), f.getFieldType(),
          List.of(targetField(f.getChildren().get(0), type.asListType().elementType())));
      case MAP -> {
        Field entries = f.getChildren().get(0);
        Types.MapType map = type.asMapType();
        yield new Field(f.getName(), f.getFieldType(), List.of(new Field(entries.getName(), entries.getFieldType(),
            List.of(targetField(entries.getChildren().get(0), map.keyType()),
                targetField(entries.getChildren().get(1), map.valueType())))));
      }
      default -> throw new IllegalStateException("no cast to " + type);
    };
  }

  private static Field leaf(Field f, ArrowType type) {
    return new Field(f.getName(), new FieldType(f.isNullable(), type, null), null);
  }

  /**
   * Fills {@code to} (empty, of {@link #targetField}) with the values of {@code from} cast to
   * {@code type}; {@code rowOf} maps an index of {@code from} to its row in the batch.
   */
  private static void fill(FieldVector from, FieldVector to, Type type, IntUnaryOperator rowOf, String path, long base) {
    int count = from.getValueCount();
    if (type == null || !needsCast(from.getField(), type)) {
      to.setInitialCapacity(count);
      to.allocateNew();
      for (int i = 0; i < count; i++) {
        to.copyFromSafe(i, i, from);
      }
      to.setValueCount(count);
      return;
    }
    switch (type.typeId()) {
      case INTEGER -> {
        BigIntVector src = (BigIntVector) from;
        IntVector dst = (IntVector) to;
        dst.allocateNew(count);
        for (int i = 0; i < count; i++) {
          if (src.isNull(i)) {
            dst.setNull(i);
            continue;
          }
          long value = src.get(i);
          if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
            throw bad(base, rowOf, i, path, "%d does not fit int (32-bit; the column would need bigint)", value);
          }
          dst.set(i, (int) value);
        }
      }
      case UUID -> {
        FixedSizeBinaryVector dst = (FixedSizeBinaryVector) to;
        dst.allocateNew(count);
        for (int i = 0; i < count; i++) {
          if (from.isNull(i)) {
            dst.setNull(i);
            continue;
          }
          String text = text(from, i).trim();
          UUID uuid;
          try {
            if (text.length() != 36) {
              throw new IllegalArgumentException();
            }
            uuid = UUID.fromString(text);
          } catch (IllegalArgumentException e) {
            throw bad(base, rowOf, i, path, "'%s' is not a uuid (expected 8-4-4-4-12 hex digits)", text);
          }
          dst.set(i, java.nio.ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits())
              .putLong(uuid.getLeastSignificantBits()).array());
        }
      }
      case FIXED -> {
        int length = ((Types.FixedType) type).length();
        FixedSizeBinaryVector dst = (FixedSizeBinaryVector) to;
        dst.allocateNew(count);
        for (int i = 0; i < count; i++) {
          if (from.isNull(i)) {
            dst.setNull(i);
            continue;
          }
          byte[] bytes;
          if (from instanceof VarBinaryVector b) {
            bytes = b.get(i);
            if (bytes.length != length) {
              throw bad(base, rowOf, i, path, "%d bytes, expected fixed(%d)", bytes.length, length);
            }
          } else {
            String text = text(from, i).trim();
            try {
              if (text.length() != 2 * length) {
                throw new IllegalArgumentException();
              }
              bytes = HexFormat.of().parseHex(text);
            } catch (IllegalArgumentException e) {
              throw bad(base, rowOf, i, path, "'%s' is not fixed(%d) as hex (expected %d hex digits)",
                  text, length, 2 * length);
            }
          }
          dst.set(i, bytes);
        }
      }
      case TIMESTAMP_NANO -> {
        TimeStampVector dst = (TimeStampVector) to;
        dst.allocateNew(count);
        for (int i = 0; i < count; i++) {
          if (from.isNull(i)) {
            dst.setNull(i);
            continue;
          }
          String text = text(from, i).trim();
          Instant instant;
          try {
            instant = parseTimestamp(text);
          } catch (DateTimeParseException e) {
            throw bad(base, rowOf, i, path, "'%s' is not a timestamp (expected ISO-8601 such as"
                + " 2026-01-02T03:04:05.123456789Z)", text);
          }
          try {
            dst.set(i, Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano()));
          } catch (ArithmeticException e) {
            throw bad(base, rowOf, i, path, "'%s' is out of the range of timestamp_ns (years 1677 to 2262)", text);
          }
        }
      }
      case STRUCT -> {
        StructVector src = (StructVector) from;
        StructVector dst = (StructVector) to;
        dst.setInitialCapacity(count);
        dst.allocateNew();
        for (int c = 0; c < src.getChildrenFromFields().size(); c++) {
          FieldVector child = src.getChildrenFromFields().get(c);
          Types.NestedField field = type.asStructType().caseInsensitiveField(child.getName());
          fill(child, dst.getChildrenFromFields().get(c), field == null ? null : field.type(), rowOf,
              path + "." + child.getName(), base);
        }
        for (int i = 0; i < count; i++) {
          if (src.isNull(i)) {
            dst.setNull(i);
          } else {
            dst.setIndexDefined(i);
          }
        }
      }
      case LIST, MAP -> {
        ListVector src = (ListVector) from;
        ListVector dst = (ListVector) to;
        dst.setInitialCapacity(count);
        dst.allocateNew();
        int[] parent = new int[src.getDataVector().getValueCount()];
        for (int i = 0; i < count; i++) {
          if (src.isNull(i)) {
            dst.setNull(i);
            continue;
          }
          int start = src.getElementStartIndex(i);
          int end = src.getElementEndIndex(i);
          for (int j = start; j < end; j++) {
            parent[j] = i;
          }
          dst.startNewValue(i);
          dst.endValue(i, end - start);
        }
        IntUnaryOperator childRow = j -> rowOf.applyAsInt(parent[j]);
        if (type.typeId() == Type.TypeID.LIST) {
          fill(src.getDataVector(), dst.getDataVector(), type.asListType().elementType(), childRow, path + ".element", base);
        } else {
          StructVector srcEntries = (StructVector) src.getDataVector();
          StructVector dstEntries = (StructVector) dst.getDataVector();
          Types.MapType map = type.asMapType();
          int entries = srcEntries.getValueCount();
          fill(srcEntries.getChildrenFromFields().get(0), dstEntries.getChildrenFromFields().get(0), map.keyType(),
              childRow, path + ".key", base);
          fill(srcEntries.getChildrenFromFields().get(1), dstEntries.getChildrenFromFields().get(1), map.valueType(),
              childRow, path + ".value", base);
          dstEntries.setInitialCapacity(entries);
          for (int j = 0; j < entries; j++) {
            dstEntries.setIndexDefined(j);
          }
          dstEntries.setValueCount(entries);
        }
      }
      default -> throw new IllegalStateException("no cast to " + type);
    }
    to.setValueCount(count);
  }

  /** ISO-8601 date-time; without an offset the time is UTC. */
  static Instant parseTimestamp(String text) {
    String full = text.length() == 10 ? text + "T00:00" : text; // a date alone is its midnight
    var parsed = LOCAL.parseBest(full, OffsetDateTime::from, LocalDateTime::from);
    if (parsed instanceof OffsetDateTime odt) {
      return odt.toInstant();
    }
    if (parsed instanceof LocalDateTime ldt) {
      return ldt.toInstant(ZoneOffset.UTC);
    }
    throw new DateTimeParseException("not a date-time", text, 0);
  }

  private static String text(FieldVector v, int i) {
    if (v instanceof VarCharVector s) {
      return new String(s.get(i), StandardCharsets.UTF_8);
    }
    return new String(((BaseVariableWidthVector) v).get(i), StandardCharsets.UTF_8);
  }

  private static SeException bad(long base, IntUnaryOperator rowOf, int index, String path, String fmt, Object... args) {
    return SeException.invalid("row %d, column `%s`: %s", base + rowOf.applyAsInt(index) + 1, path, String.format(fmt, args));
  }
}

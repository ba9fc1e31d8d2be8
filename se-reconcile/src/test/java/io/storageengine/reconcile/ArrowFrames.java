package io.storageengine.reconcile;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.variants.Variant;

/**
 * Builds WAL frames the way ingestion does: Iceberg generic values written into Arrow vectors
 * whose fields carry the Iceberg field ids, serialized as an Arrow IPC stream.
 */
final class ArrowFrames {
  private ArrowFrames() {}

  /** A frame holding {@code rows} (records of {@code schema}, which may be a projection). */
  static WalFrame frame(BufferAllocator allocator, WalOperation op, int schemaId, Schema schema,
      List<Record> rows) {
    org.apache.arrow.vector.types.pojo.Schema arrow = IcebergArrowSchemas.toArrow(schema);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow, allocator)) {
      root.allocateNew();
      List<Types.NestedField> columns = schema.columns();
      for (int c = 0; c < columns.size(); c++) {
        FieldVector v = root.getVector(c);
        for (int r = 0; r < rows.size(); r++) {
          set(v, r, columns.get(c).type(), rows.get(r).getField(columns.get(c).name()));
        }
        v.setValueCount(rows.size());
      }
      root.setRowCount(rows.size());
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      return new WalFrame(op, schemaId, new long[] {1}, rows.size(), out.toByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static void set(FieldVector vector, int index, Type type, Object value) {
    if (value == null) {
      while (vector.getValueCapacity() <= index) {
        vector.reAlloc();
      }
      vector.setNull(index);
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN -> ((BitVector) vector).setSafe(index, (Boolean) value ? 1 : 0);
      case INTEGER -> ((IntVector) vector).setSafe(index, (Integer) value);
      case LONG -> ((BigIntVector) vector).setSafe(index, (Long) value);
      case FLOAT -> ((Float4Vector) vector).setSafe(index, (Float) value);
      case DOUBLE -> ((Float8Vector) vector).setSafe(index, (Double) value);
      case DECIMAL -> ((DecimalVector) vector).setSafe(index, (BigDecimal) value);
      case DATE -> ((DateDayVector) vector).setSafe(index, (int) ((LocalDate) value).toEpochDay());
      case TIME -> ((TimeMicroVector) vector).setSafe(index, ((LocalTime) value).toNanoOfDay() / 1000);
      case TIMESTAMP -> {
        if (((Types.TimestampType) type).shouldAdjustToUTC()) {
          ((TimeStampMicroTZVector) vector).setSafe(index,
              ChronoUnit.MICROS.between(OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC), (OffsetDateTime) value));
        } else {
          ((TimeStampMicroVector) vector).setSafe(index,
              ChronoUnit.MICROS.between(LocalDateTime.of(1970, 1, 1, 0, 0), (LocalDateTime) value));
        }
      }
      case STRING -> ((VarCharVector) vector).setSafe(index, value.toString().getBytes(StandardCharsets.UTF_8));
      case UUID -> {
        UUID u = (UUID) value;
        ByteBuffer b = ByteBuffer.allocate(16);
        b.putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
        ((FixedSizeBinaryVector) vector).setSafe(index, b.array());
      }
      case FIXED -> ((FixedSizeBinaryVector) vector).setSafe(index, (byte[]) value);
      case BINARY, GEOMETRY, GEOGRAPHY -> {
        ByteBuffer b = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        ((VarBinaryVector) vector).setSafe(index, bytes);
      }
      case VARIANT -> {
        Variant variant = (Variant) value;
        StructVector s = (StructVector) vector;
        s.setIndexDefined(index);
        ByteBuffer metadata = ByteBuffer.allocate(variant.metadata().sizeInBytes()).order(ByteOrder.LITTLE_ENDIAN);
        variant.metadata().writeTo(metadata, 0);
        ByteBuffer encoded = ByteBuffer.allocate(variant.value().sizeInBytes()).order(ByteOrder.LITTLE_ENDIAN);
        variant.value().writeTo(encoded, 0);
        VarBinaryVector m = (VarBinaryVector) s.getChildByOrdinal(0);
        VarBinaryVector v = (VarBinaryVector) s.getChildByOrdinal(1);
        m.setSafe(index, metadata.array());
        v.setSafe(index, encoded.array());
        m.setValueCount(Math.max(m.getValueCount(), index + 1));
        v.setValueCount(Math.max(v.getValueCount(), index + 1));
      }
      case STRUCT -> {
        StructVector s = (StructVector) vector;
        Record r = (Record) value;
        s.setIndexDefined(index);
        List<Types.NestedField> fields = type.asStructType().fields();
        for (Types.NestedField f : fields) {
          FieldVector child = (FieldVector) s.getChild(f.name());
          set(child, index, f.type(), r.getField(f.name()));
          if (child.getValueCount() <= index) {
            child.setValueCount(index + 1);
          }
        }
      }
      case MAP -> {
        MapVector m = (MapVector) vector;
        Map<Object, Object> map = (Map<Object, Object>) value;
        StructVector entries = (StructVector) m.getDataVector();
        int start = m.startNewValue(index);
        int i = 0;
        Types.MapType mt = type.asMapType();
        for (Map.Entry<Object, Object> e : map.entrySet()) {
          entries.setIndexDefined(start + i);
          set((FieldVector) entries.getChildByOrdinal(0), start + i, mt.keyType(), e.getKey());
          set((FieldVector) entries.getChildByOrdinal(1), start + i, mt.valueType(), e.getValue());
          i++;
        }
        m.endValue(index, map.size());
        entries.setValueCount(start + map.size());
        ((FieldVector) entries.getChildByOrdinal(0)).setValueCount(start + map.size());
        ((FieldVector) entries.getChildByOrdinal(1)).setValueCount(start + map.size());
      }
      case LIST -> {
        ListVector l = (ListVector) vector;
        List<Object> list = (List<Object>) value;
        int start = l.startNewValue(index);
        for (int i = 0; i < list.size(); i++) {
          set(l.getDataVector(), start + i, type.asListType().elementType(), list.get(i));
        }
        l.endValue(index, list.size());
        l.getDataVector().setValueCount(start + list.size());
      }
      default -> throw new IllegalArgumentException("unsupported type " + type);
    }
  }
}

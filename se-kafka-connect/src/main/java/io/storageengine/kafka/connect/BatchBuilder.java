package io.storageengine.kafka.connect;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Rows of one column set written into an Arrow batch. Values come from {@link ValueConverter}
 * (already checked against the column types), so writing cannot fail on a value. Owns its
 * {@link VectorSchemaRoot}; {@link #close} frees it.
 */
final class BatchBuilder implements AutoCloseable {
  private final VectorSchemaRoot root;
  private int rows;

  BatchBuilder(Schema schema, BufferAllocator allocator) {
    this.root = VectorSchemaRoot.create(schema, allocator);
    root.allocateNew();
  }

  /** The schema of the columns {@code columns} of {@code table}, in that order. */
  static Schema schema(EngineTable table, List<String> columns) {
    return new Schema(columns.stream().map(table.columns()::get).toList());
  }

  void add(List<Object> values) {
    for (int c = 0; c < values.size(); c++) {
      write(root.getVector(c), rows, values.get(c));
    }
    rows++;
  }

  int rows() {
    return rows;
  }

  /** The batch of every row added (sets the value counts). */
  VectorSchemaRoot root() {
    root.setRowCount(rows);
    return root;
  }

  @SuppressWarnings("unchecked")
  private static void write(ValueVector vector, int index, Object value) {
    if (value == null) {
      if (vector instanceof StructVector struct) {
        struct.setNull(index);
      } else if (vector instanceof ListVector list) {
        list.setNull(index);
      } else if (vector instanceof BaseFixedWidthVector fixed) {
        fixed.setNull(index);
      } else if (vector instanceof org.apache.arrow.vector.BaseVariableWidthVector variable) {
        variable.setNull(index);
      } else {
        throw new IllegalStateException("cannot set null in " + vector.getField());
      }
      return;
    }
    if (vector instanceof BaseIntVector ints) {
      ints.setWithPossibleTruncate(index, (Long) value);
    } else if (vector instanceof Float8Vector doubles) {
      doubles.setSafe(index, (Double) value);
    } else if (vector instanceof Float4Vector floats) {
      floats.setSafe(index, ((Double) value).floatValue());
    } else if (vector instanceof BitVector bits) {
      bits.setSafe(index, (Boolean) value ? 1 : 0);
    } else if (vector instanceof VarCharVector strings) {
      strings.setSafe(index, ((String) value).getBytes(StandardCharsets.UTF_8));
    } else if (vector instanceof VarBinaryVector binary) {
      binary.setSafe(index, (byte[]) value);
    } else if (vector instanceof FixedSizeBinaryVector fixed) {
      fixed.setSafe(index, (byte[]) value);
    } else if (vector instanceof DecimalVector decimals) {
      decimals.setSafe(index, (BigDecimal) value);
    } else if (vector instanceof DateDayVector dates) {
      dates.setSafe(index, (Integer) value);
    } else if (vector instanceof TimeMicroVector times) {
      times.setSafe(index, (Long) value);
    } else if (vector instanceof TimeStampVector timestamps) {
      timestamps.setSafe(index, (Long) value);
    } else if (vector instanceof org.apache.arrow.vector.complex.MapVector map) {
      List<Object[]> entries = (List<Object[]>) value;
      int start = map.startNewValue(index);
      StructVector entry = (StructVector) map.getDataVector();
      for (int i = 0; i < entries.size(); i++) {
        entry.setIndexDefined(start + i);
        write(entry.getChildByOrdinal(0), start + i, entries.get(i)[0]);
        write(entry.getChildByOrdinal(1), start + i, entries.get(i)[1]);
      }
      map.endValue(index, entries.size());
    } else if (vector instanceof ListVector list) {
      List<Object> items = (List<Object>) value;
      int start = list.startNewValue(index);
      for (int i = 0; i < items.size(); i++) {
        write(list.getDataVector(), start + i, items.get(i));
      }
      list.endValue(index, items.size());
    } else if (vector instanceof StructVector struct) {
      Map<String, Object> fields = (Map<String, Object>) value;
      struct.setIndexDefined(index);
      for (FieldVector child : struct.getChildrenFromFields()) {
        write(child, index, fields.get(child.getName()));
      }
    } else {
      throw new IllegalStateException("no writer for " + vector.getField());
    }
  }

  @Override
  public void close() {
    root.close();
  }
}

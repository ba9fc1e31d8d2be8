package io.storageengine.reconcile;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Type;
import org.duckdb.DuckDBAppender;

/**
 * Computes each staged row's partition with Iceberg's own transforms (bucket's murmur3, day,
 * truncate ...), so partition values are exactly what Iceberg readers and writers compute.
 * Source values are read out of DuckDB as Arrow and converted to Iceberg's internal
 * representation; the result is the table {@code <staged>_parts(rid, pidx)} plus the list of
 * distinct partition tuples indexed by {@code pidx}.
 */
final class PartitionAssigner {
  private PartitionAssigner() {}

  /** Assigns partitions to the rows of {@code staged}; returns the tuples by index. */
  static List<StructLike> assign(DuckSession duck, Schema schema, PartitionSpec spec, String staged,
      String partsTable) {
    List<PartitionField> fields = spec.fields();
    List<String> selects = new ArrayList<>();
    List<Type> sourceTypes = new ArrayList<>();
    List<Function<Object, Object>> transforms = new ArrayList<>();
    for (PartitionField f : fields) {
      Type sourceType = schema.findType(f.sourceId());
      sourceTypes.add(sourceType);
      String column = DuckSql.columnPath(schema, f.sourceId());
      selects.add(sourceType.typeId() == Type.TypeID.UUID ? "CAST(" + column + " AS VARCHAR)" : column);
      @SuppressWarnings("unchecked")
      Transform<Object, Object> transform = (Transform<Object, Object>) f.transform();
      transforms.add(transform.bind(sourceType));
    }

    duck.execute("CREATE OR REPLACE TEMP TABLE " + partsTable + " (rid BIGINT, pidx INTEGER)");
    Map<List<Object>, Integer> index = new HashMap<>();
    List<StructLike> tuples = new ArrayList<>();
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", partsTable)) {
      duck.queryArrow("SELECT rowid, " + String.join(", ", selects) + " FROM " + staged, 64 * 1024,
          root -> appendBatch(root, sourceTypes, transforms, spec, index, tuples, appender));
    } catch (SQLException e) {
      throw io.storageengine.common.SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    return tuples;
  }

  private static void appendBatch(VectorSchemaRoot root, List<Type> sourceTypes,
      List<Function<Object, Object>> transforms, PartitionSpec spec, Map<List<Object>, Integer> index,
      List<StructLike> tuples, DuckDBAppender appender) {
    BigIntVector rid = (BigIntVector) root.getVector(0);
    int n = root.getRowCount();
    Object[] values = new Object[transforms.size()];
    try {
      for (int row = 0; row < n; row++) {
        for (int i = 0; i < values.length; i++) {
          Object source = internalValue(root.getVector(i + 1), row, sourceTypes.get(i));
          values[i] = transforms.get(i).apply(source);
        }
        List<Object> key = Arrays.asList(values.clone());
        Integer pidx = index.get(key);
        if (pidx == null) {
          pidx = tuples.size();
          index.put(key, pidx);
          GenericRecord tuple = GenericRecord.create(spec.partitionType());
          for (int i = 0; i < values.length; i++) {
            tuple.set(i, values[i]);
          }
          tuples.add(tuple);
        }
        appender.beginRow().append(rid.get(row)).append(pidx.intValue()).endRow();
      }
    } catch (SQLException e) {
      throw io.storageengine.common.SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
  }

  /** The Iceberg internal representation of a DuckDB-exported Arrow value. */
  static Object internalValue(FieldVector vector, int row, Type type) {
    if (vector.isNull(row)) {
      return null;
    }
    return switch (type.typeId()) {
      case TIMESTAMP, TIMESTAMP_NANO -> ((TimeStampVector) vector).get(row);
      case STRING -> vector.getObject(row).toString();
      case UUID -> UUID.fromString(vector.getObject(row).toString());
      case BINARY, FIXED -> ByteBuffer.wrap((byte[]) vector.getObject(row));
      case DECIMAL -> (BigDecimal) vector.getObject(row);
      case DATE -> ((Number) vector.getObject(row)).intValue();
      case TIME -> ((Number) vector.getObject(row)).longValue();
      default -> vector.getObject(row);
    };
  }
}

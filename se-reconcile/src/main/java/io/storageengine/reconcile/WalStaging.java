package io.storageengine.reconcile;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.SeException;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import io.storageengine.wal.WalSegment;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Loads WAL frames into the DuckDB table {@value #TABLE}, in arrival order, with the columns of
 * the table's <em>current</em> schema. Frame columns are matched by Iceberg field id, so a
 * column renamed since ingestion lands under its new name, a dropped one is discarded and a new
 * one is NULL. DuckDB preserves insertion order, so the table's {@code rowid} is the arrival
 * order (seq, frame index, row index).
 *
 * <p>Next to the data columns: {@code __op} (1 upsert, 2 delete), {@code __seq} (the segment's
 * seq) and one {@code __p<i>} flag per column telling whether the frame carried column i
 * (false = omitted by a partial upsert).
 */
final class WalStaging {
  static final String TABLE = "wal_ops";

  private WalStaging() {}

  static String presentFlag(int columnIndex) {
    return "__p" + columnIndex;
  }

  /** Creates the staging table and loads every frame; returns the number of rows loaded. */
  static long load(DuckSession duck, Schema schema, List<WalSegment> segments) {
    List<Types.NestedField> columns = schema.columns();
    List<String> defs = new ArrayList<>();
    for (Types.NestedField c : columns) {
      defs.add(DuckSql.quote(c.name()) + " " + DuckSql.type(c.type()));
    }
    for (int i = 0; i < columns.size(); i++) {
      defs.add(presentFlag(i) + " BOOLEAN");
    }
    defs.add("__op TINYINT");
    defs.add("__seq BIGINT");
    duck.execute("CREATE OR REPLACE TEMP TABLE " + TABLE + " (" + String.join(", ", defs) + ")");

    int frameNo = 0;
    for (WalSegment segment : segments) {
      for (WalFrame frame : segment.frames()) {
        if (frame.rowCount() == 0) {
          continue;
        }
        loadFrame(duck, columns, segment.seq(), frame, "wal_frame_" + frameNo++);
      }
    }
    return duck.queryLong("SELECT count(*) FROM " + TABLE);
  }

  private static void loadFrame(DuckSession duck, List<Types.NestedField> columns, long seq,
      WalFrame frame, String view) {
    try (ArrowStreamReader reader = new ArrowStreamReader(
        new ByteArrayInputStream(frame.arrowIpc()), duck.allocator())) {
      List<Field> frameFields = reader.getVectorSchemaRoot().getSchema().getFields();
      requireFieldIds(frameFields, seq);
      Map<Integer, Field> byId = DuckSql.childrenById(frameFields);
      List<String> values = new ArrayList<>();
      List<String> flags = new ArrayList<>();
      for (Types.NestedField c : columns) {
        Field f = byId.get(c.fieldId());
        if (f == null) {
          values.add("CAST(NULL AS " + DuckSql.type(c.type()) + ")");
          flags.add("FALSE");
        } else {
          values.add(DuckSql.conform(DuckSql.quote(f.getName()), f, c.type()));
          flags.add("TRUE");
        }
      }
      byte op = frame.operation() == WalOperation.DELETE ? (byte) 2 : (byte) 1;
      String sql = "INSERT INTO " + TABLE + " SELECT " + String.join(", ", values) + ", "
          + String.join(", ", flags) + ", " + op + ", " + seq + " FROM " + view;
      duck.withArrowStream(view, reader, () -> duck.execute(sql));
    } catch (IOException e) {
      throw SeException.internal("WAL segment " + seq + ": unreadable Arrow frame", e);
    }
  }

  /** Checks that every frame field carries a field id; frames without them cannot be mapped. */
  static void requireFieldIds(List<Field> fields, long seq) {
    for (Field f : fields) {
      if (IcebergArrowSchemas.fieldId(f) < 0) {
        throw SeException.invalid("WAL segment %d: column '%s' has no Iceberg field id", seq, f.getName());
      }
    }
  }
}

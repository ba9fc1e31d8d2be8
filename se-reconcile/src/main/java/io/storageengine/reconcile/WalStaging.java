package io.storageengine.reconcile;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import io.storageengine.wal.WalSegment;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Loads WAL frames into the DuckDB table {@value #TABLE}, in arrival order, with the columns of
 * the table's <em>current</em> schema. Frame columns are matched by Iceberg field id, so a
 * column renamed since ingestion lands under its new name, a dropped one is discarded, and one
 * the frame does not carry (new, or omitted by the writer) holds the column's
 * {@code write-default}, NULL without one; its presence flag says it was not carried. DuckDB preserves insertion order, so the table's {@code rowid} is the arrival
 * order (seq, frame index, row index).
 *
 * <p>Every frame is checked ({@link io.storageengine.wal.ArrowBatchCheck}) before DuckDB reads
 * it; a frame that fails stops the load with a {@link WalFrameRunReader.CorruptFrameException}
 * naming its segment, and DuckDB never sees its buffers.
 *
 * <p>Next to the data columns: {@code __op} (1 upsert, 2 delete), {@code __seq} (the segment's
 * seq) and one {@code __p<i>} flag per column telling whether the frame carried column i
 * (false = omitted by a partial upsert).
 */
final class WalStaging {
  static final String TABLE = "wal_ops";
  /**
   * Most bytes of Arrow frames one insert stages: a longer run of frames with one schema is
   * staged by several, so that no more than this of frames is held at once while segments are
   * read as they are staged (a query's fold of a long WAL tail reads them lazily).
   */
  static final long MAX_RUN_BYTES = 64L << 20;

  private WalStaging() {}

  static String presentFlag(int columnIndex) {
    return "__p" + columnIndex;
  }

  /** Creates the staging table and loads every frame; returns the number of rows loaded. */
  static long load(DuckSession duck, Schema schema, Iterable<WalSegment> segments) {
    return load(duck, schema, segments, UnaryOperator.identity());
  }

  /**
   * As {@link #load(DuckSession, Schema, List)}, keeping only the rows {@code keep} selects:
   * it wraps the query of a run's rows (a {@code SELECT} whose columns are the staging table's,
   * named as there) in a query of the same columns, e.g. a filter; rows it drops are never
   * stored. Returns the number of rows kept.
   */
  static long load(DuckSession duck, Schema schema, Iterable<WalSegment> segments, UnaryOperator<String> keep) {
    load(duck, schema, segments, "TEMP TABLE " + TABLE, TABLE, "wal_frames_", keep, MAX_RUN_BYTES);
    return duck.queryLong("SELECT count(*) FROM " + TABLE);
  }

  /**
   * Loads every frame as {@link #load(DuckSession, Schema, List)} does, into the table
   * {@code table} (a qualified name) created by {@code "CREATE OR REPLACE " + create}, scanning
   * the frames through Arrow views named {@code viewPrefix} and a number.
   */
  static void load(DuckSession duck, Schema schema, Iterable<WalSegment> segments, String create, String table,
      String viewPrefix) {
    load(duck, schema, segments, create, table, viewPrefix, UnaryOperator.identity(), MAX_RUN_BYTES);
  }

  /**
   * The loads above: {@code segments} is iterated once, in order, and a run of frames is staged
   * as soon as a frame of another schema comes or the next frame would take it past
   * {@code maxRunBytes}: a lazy {@code segments} is held at most {@code maxRunBytes} of frames
   * and the segment being read at a time.
   */
  static void load(DuckSession duck, Schema schema, Iterable<WalSegment> segments, String create, String table,
      String viewPrefix, UnaryOperator<String> keep, long maxRunBytes) {
    List<Types.NestedField> columns = schema.columns();
    List<String> defs = new ArrayList<>();
    for (Types.NestedField c : columns) {
      defs.add(SqlQuoting.identifier(c.name()) + " " + DuckSql.type(c.type()));
    }
    for (int i = 0; i < columns.size(); i++) {
      defs.add(presentFlag(i) + " BOOLEAN");
    }
    defs.add("__op TINYINT");
    defs.add("__seq BIGINT");
    duck.execute("CREATE OR REPLACE " + create + " (" + String.join(", ", defs) + ")");

    // Consecutive frames with one Arrow schema (the common case: one writer, one table
    // schema) are staged by one statement; a schema change starts a new run.
    List<WalFrameRunReader.Frame> run = new ArrayList<>();
    long runBytes = 0;
    org.apache.arrow.vector.types.pojo.Schema runSchema = null;
    int runNo = 0;
    for (WalSegment segment : segments) {
      for (WalFrame frame : segment.frames()) {
        if (frame.rowCount() == 0) {
          continue;
        }
        org.apache.arrow.vector.types.pojo.Schema frameSchema =
            WalFrameRunReader.schemaOf(duck.allocator(), frame.arrowIpc(), segment.seq());
        if (!run.isEmpty() && (!frameSchema.equals(runSchema) || runBytes + frame.arrowIpc().length > maxRunBytes)) {
          loadRun(duck, columns, runSchema, run, table, viewPrefix + runNo++, keep);
          run = new ArrayList<>();
          runBytes = 0;
        }
        if (run.isEmpty()) {
          requireFieldIds(frameSchema.getFields(), segment.seq());
          runSchema = frameSchema;
        }
        byte op = frame.operation() == WalOperation.DELETE ? (byte) 2 : (byte) 1;
        run.add(new WalFrameRunReader.Frame(frame.arrowIpc(), op, segment.seq()));
        runBytes += frame.arrowIpc().length;
      }
    }
    if (!run.isEmpty()) {
      loadRun(duck, columns, runSchema, run, table, viewPrefix + runNo, keep);
    }
  }

  /**
   * Inserts a run of frames with one Arrow schema. DuckDB's Arrow scan keeps batch order on
   * insert (insertion order is preserved), so rowid stays the arrival order.
   */
  private static void loadRun(DuckSession duck, List<Types.NestedField> columns,
      org.apache.arrow.vector.types.pojo.Schema frameSchema, List<WalFrameRunReader.Frame> run, String table,
      String view, UnaryOperator<String> keep) {
    Map<Integer, Field> byId = DuckSql.childrenById(frameSchema.getFields());
    List<String> values = new ArrayList<>();
    List<String> flags = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField c = columns.get(i);
      Field f = byId.get(c.fieldId());
      String name = " AS " + SqlQuoting.identifier(c.name());
      if (f == null) {
        values.add(DuckSql.writeDefault(c) + name);
        flags.add("FALSE AS " + presentFlag(i));
      } else {
        values.add(DuckSql.conform(SqlQuoting.identifier(f.getName()), f, c.type()) + name);
        flags.add("TRUE AS " + presentFlag(i));
      }
    }
    String sql = "INSERT INTO " + table + " " + keep.apply("SELECT " + String.join(", ", values) + ", "
        + String.join(", ", flags) + ", " + WalFrameRunReader.OP + ", " + WalFrameRunReader.SEQ
        + " FROM " + view);
    try (WalFrameRunReader reader = new WalFrameRunReader(duck.allocator(), frameSchema, run)) {
      try {
        duck.withArrowStream(view, reader, () -> duck.execute(sql));
      } catch (RuntimeException e) {
        if (reader.corrupt() != null) {
          throw reader.corrupt();
        }
        throw e;
      }
      if (reader.corrupt() != null) {
        throw reader.corrupt();
      }
    } catch (IOException e) {
      throw SeException.internal("WAL segments " + run.get(0).seq() + ".." + run.get(run.size() - 1).seq()
          + ": unreadable Arrow frame", e);
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

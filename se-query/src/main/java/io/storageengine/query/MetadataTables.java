package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.StatementAnalyzer.TableName;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.apache.iceberg.DataTask;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.MetadataTableUtils;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

/**
 * The metadata tables of a table, named as Trino names them: {@code "t$snapshots"},
 * {@code "t$history"}, {@code "t$files"}, {@code "t$manifests"}, {@code "t$partitions"},
 * {@code "t$refs"}, {@code "t$entries"} (Iceberg's metadata tables of those names, with their
 * columns and types: {@link MetadataTableType}) and {@code "t$properties"} (Trino's: {@code key},
 * {@code value}, the table's properties); and the engine's own {@code "t$wal"}: the table's
 * acknowledged WAL segments not yet reconciled ({@link PendingWal}), one row per segment (with
 * when the object store wrote it and its age when the query was planned), and
 * {@code "t$slices"}: the slices of a sliced entity table ({@link TableSlices}), one row per
 * slice with its hash range, WAL progress, data files and live rows (none for a table that is
 * not sliced).
 *
 * <p>A metadata table is read from the table's current metadata when the query is planned: its
 * rows are produced by Iceberg ({@code DataTask} rows of the metadata table's scan) and
 * materialized as a DuckDB table of the query's catalog under the name the statement uses, so it
 * joins and filters like any table. Columns of a type DuckDB cannot hold are left out. The table
 * is resolved like the table itself, so a metadata table is visible exactly to whoever may read
 * the table, in the tenant's catalog only.
 */
final class MetadataTables {
  /** The metadata table kinds, by the suffix after {@code $}. */
  static final List<String> KINDS = List.of("snapshots", "history", "files", "manifests", "partitions", "refs",
      "entries", "properties", "wal", "slices");
  /** Rows per INSERT statement. */
  private static final int BATCH_ROWS = 256;
  private static final Schema PROPERTIES = new Schema(
      Types.NestedField.required(1, "key", Types.StringType.get()),
      Types.NestedField.required(2, "value", Types.StringType.get()));
  private static final Schema WAL = new Schema(
      Types.NestedField.required(1, "seq", Types.LongType.get()),
      Types.NestedField.required(2, "writer_id", Types.StringType.get()),
      Types.NestedField.required(3, "writer_nonce", Types.StringType.get()),
      Types.NestedField.required(4, "frames", Types.IntegerType.get()),
      Types.NestedField.required(5, "rows", Types.LongType.get()),
      Types.NestedField.required(6, "bytes", Types.LongType.get()),
      Types.NestedField.required(7, "published_seq", Types.LongType.get()),
      Types.NestedField.optional(8, "written_at", Types.TimestampType.withZone()),
      Types.NestedField.optional(9, "age_ms", Types.LongType.get()));
  private static final Schema SLICES = new Schema(
      Types.NestedField.required(1, "slice_id", Types.IntegerType.get()),
      Types.NestedField.required(2, "hash_range", Types.StringType.get()),
      Types.NestedField.required(3, "hash_lo", Types.LongType.get()),
      Types.NestedField.required(4, "hash_hi", Types.LongType.get()),
      Types.NestedField.required(5, "wal_seq", Types.LongType.get()),
      Types.NestedField.required(6, "data_files", Types.IntegerType.get()),
      Types.NestedField.required(7, "rows", Types.LongType.get()));
  private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS", Locale.ROOT);
  private static final DateTimeFormatter TIMESTAMP_NANOS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSSSSS", Locale.ROOT);

  private MetadataTables() {}

  /** The kind of metadata table {@code table} names ({@code t$snapshots}: snapshots), or null. */
  static String kind(String table) {
    int dollar = table.lastIndexOf('$');
    if (dollar <= 0) {
      return null;
    }
    String suffix = table.substring(dollar + 1).toLowerCase(Locale.ROOT);
    return KINDS.contains(suffix) ? suffix : null;
  }

  /** The table a metadata table name belongs to ({@code t$snapshots}: {@code t}). */
  static String baseTable(String table) {
    return table.substring(0, table.lastIndexOf('$'));
  }

  /** The columns of metadata table {@code kind} of {@code table}, as they are materialized. */
  static Schema schema(Table table, String kind) {
    Schema schema = ownSchema(table, kind);
    List<Types.NestedField> columns = new ArrayList<>();
    for (Types.NestedField column : schema.columns()) {
      if (supported(column.type())) {
        columns.add(column);
      }
    }
    return new Schema(columns);
  }

  /**
   * Creates metadata table {@code kind} of {@code table} named {@code name} (and its schema, if
   * new) on {@code connection}, filled with its rows.
   */
  static void create(Connection connection, TableName name, Table table, String kind, String displayName,
      String catalogId, PendingWal wal) throws SQLException {
    Schema all = ownSchema(table, kind);
    Schema schema = schema(table, kind);
    String schemaName = SqlQuoting.identifier(name.schema());
    String target = schemaName + "." + SqlQuoting.identifier(name.table());
    StringJoiner columns = new StringJoiner(", ", "(", ")");
    for (Types.NestedField column : schema.columns()) {
      columns.add(SqlQuoting.identifier(column.name()) + " " + IcebergTypes.duckdbType(column.name(), column.type()));
    }
    execute(connection, "CREATE SCHEMA IF NOT EXISTS " + schemaName);
    execute(connection, "CREATE TABLE " + target + " " + columns);
    List<Integer> positions = new ArrayList<>();
    for (Types.NestedField column : schema.columns()) {
      positions.add(all.columns().indexOf(all.findField(column.fieldId())));
    }
    Inserter insert = new Inserter(connection, target);
    if (kind.equals("wal")) {
      List<PendingWal.Segment> pending = wal.pending(catalogId, table.uuid());
      Instant now = Instant.now();
      for (PendingWal.Segment segment : pending) {
        Instant written = segment.writtenAt();
        // The store's clock against ours: a segment never shows as written in the future.
        Long age = written == null ? null : Math.max(0, Duration.between(written, now).toMillis());
        insert.row(segment.seq() + ", " + SqlQuoting.literal(segment.writerId()) + ", "
            + SqlQuoting.literal(segment.writerNonce()) + ", " + segment.frames() + ", " + segment.rows() + ", "
            + segment.bytes() + ", " + segment.publishedSeq() + ", "
            + literal(WAL.findField("written_at").type(), written == null ? null : DateTimeUtil.microsFromInstant(written))
            + ", " + literal(WAL.findField("age_ms").type(), age));
      }
    } else if (kind.equals("slices")) {
      TableSettings settings = TableSettings.of(table);
      if (settings.entity() && settings.sliced()) {
        for (TableSlices.SliceStats s : TableSlices.stats(table, table.currentSnapshot(),
            wal.slices(catalogId, table))) {
          insert.row(s.slice().id() + ", " + SqlQuoting.literal(s.slice().range()) + ", " + s.slice().lo() + ", "
              + s.slice().hi() + ", " + s.walSeq() + ", " + s.dataFiles() + ", " + s.rows());
        }
      }
    } else if (kind.equals("properties")) {
      for (Map.Entry<String, String> property : new TreeMap<>(table.properties()).entrySet()) {
        insert.row(SqlQuoting.literal(property.getKey()) + ", " + SqlQuoting.literal(property.getValue()));
      }
    } else {
      try (CloseableIterable<FileScanTask> tasks = metadataTable(table, kind).newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          try (CloseableIterable<StructLike> rows = ((DataTask) task).rows()) {
            for (StructLike row : rows) {
              StringJoiner values = new StringJoiner(", ");
              for (int i = 0; i < positions.size(); i++) {
                Types.NestedField column = schema.columns().get(i);
                values.add(literal(column.type(), row.get(positions.get(i), Object.class)));
              }
              insert.row(values.toString());
            }
          }
        }
      } catch (IOException e) {
        throw SeException.unavailable("table " + displayName + ": cannot read its " + kind + " metadata", e);
      }
    }
    insert.flush();
  }

  private static Schema ownSchema(Table table, String kind) {
    switch (kind) {
      case "properties": return PROPERTIES;
      case "wal": return WAL;
      case "slices": return SLICES;
      default: return metadataTable(table, kind).schema();
    }
  }

  private static Table metadataTable(Table table, String kind) {
    return MetadataTableUtils.createMetadataTableInstance(table, MetadataTableType.from(kind));
  }

  /** Whether DuckDB can hold values of {@code type} as literals here (and every struct in it has fields). */
  private static boolean supported(Type type) {
    if (type.isVariantType() || type.typeId() == Type.TypeID.GEOMETRY || type.typeId() == Type.TypeID.GEOGRAPHY) {
      // A metadata column of type variant, geometry or geography (e.g. the readable bounds of
      // such a column, a geometry's being a bounding box corner rather than WKB) has no literal here.
      return false;
    }
    if (type.isStructType()) {
      if (type.asStructType().fields().isEmpty()) {
        return false;
      }
      return type.asStructType().fields().stream().allMatch(field -> supported(field.type()));
    }
    if (type.isListType()) {
      return supported(type.asListType().elementType());
    }
    if (type.isMapType()) {
      return supported(type.asMapType().keyType()) && supported(type.asMapType().valueType());
    }
    try {
      IcebergTypes.duckdbType("", type);
      return true;
    } catch (SeException e) {
      return false;
    }
  }

  /** A SQL expression of DuckDB's type for {@code type} whose value is {@code value} (Iceberg's in-memory form). */
  static String literal(Type type, Object value) {
    String duckdbType = IcebergTypes.duckdbType("", type);
    if (value == null) {
      return "CAST(NULL AS " + duckdbType + ")";
    }
    String expression;
    switch (type.typeId()) {
      case BOOLEAN:
        expression = ((Boolean) value) ? "true" : "false";
        break;
      case INTEGER:
      case LONG:
        expression = value.toString();
        break;
      case FLOAT:
      case DOUBLE:
      case DECIMAL:
        expression = SqlQuoting.literal(value instanceof BigDecimal decimal ? decimal.toPlainString()
            : value.toString());
        break;
      case DATE:
        expression = SqlQuoting.literal(LocalDate.ofEpochDay(((Number) value).longValue()).toString());
        break;
      case TIME:
        expression = SqlQuoting.literal(LocalTime.ofNanoOfDay(((Number) value).longValue() * 1000).toString());
        break;
      case TIMESTAMP: {
        long micros = ((Number) value).longValue();
        LocalDateTime time = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
            (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
        boolean zoned = ((Types.TimestampType) type).shouldAdjustToUTC();
        expression = SqlQuoting.literal(TIMESTAMP.format(time) + (zoned ? "+00" : ""));
        break;
      }
      case TIMESTAMP_NANO: {
        long nanos = ((Number) value).longValue();
        LocalDateTime time = LocalDateTime.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L),
            (int) Math.floorMod(nanos, 1_000_000_000L), ZoneOffset.UTC);
        boolean zoned = ((Types.TimestampNanoType) type).shouldAdjustToUTC();
        // Both are nanosecond types in DuckDB (TIMESTAMPTZ_NS, TIMESTAMP_NS).
        expression = SqlQuoting.literal(TIMESTAMP_NANOS.format(time) + (zoned ? "+00" : ""));
        break;
      }
      case STRING:
      case UUID:
        expression = SqlQuoting.literal(value.toString());
        break;
      case FIXED:
      case BINARY:
        expression = "from_hex('" + HexFormat.of().formatHex(bytes(value)) + "')";
        break;
      case STRUCT: {
        StructLike struct = (StructLike) value;
        StringJoiner fields = new StringJoiner(", ", "struct_pack(", ")");
        List<Types.NestedField> declared = type.asStructType().fields();
        for (int i = 0; i < declared.size(); i++) {
          Types.NestedField field = declared.get(i);
          fields.add(SqlQuoting.identifier(field.name()) + " := " + literal(field.type(), struct.get(i, Object.class)));
        }
        expression = fields.toString();
        break;
      }
      case LIST: {
        StringJoiner elements = new StringJoiner(", ", "[", "]");
        for (Object element : (List<?>) value) {
          elements.add(literal(type.asListType().elementType(), element));
        }
        expression = elements.toString();
        break;
      }
      case MAP: {
        StringJoiner entries = new StringJoiner(", ", "MAP {", "}");
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
          entries.add(literal(type.asMapType().keyType(), entry.getKey()) + ": "
              + literal(type.asMapType().valueType(), entry.getValue()));
        }
        expression = entries.toString();
        break;
      }
      default:
        throw SeException.internal("metadata value of type " + type + " cannot be shown", null);
    }
    return "CAST(" + expression + " AS " + duckdbType + ")";
  }

  private static byte[] bytes(Object value) {
    if (value instanceof byte[] array) {
      return array;
    }
    ByteBuffer buffer = ((ByteBuffer) value).duplicate();
    byte[] out = new byte[buffer.remaining()];
    buffer.get(out);
    return out;
  }

  /** Appends rows to a table in batches of {@link #BATCH_ROWS}. */
  private static final class Inserter {
    private final Connection connection;
    private final String target;
    private final List<String> rows = new ArrayList<>();

    Inserter(Connection connection, String target) {
      this.connection = connection;
      this.target = target;
    }

    void row(String values) throws SQLException {
      rows.add("(" + values + ")");
      if (rows.size() >= BATCH_ROWS) {
        flush();
      }
    }

    void flush() throws SQLException {
      if (!rows.isEmpty()) {
        execute(connection, "INSERT INTO " + target + " VALUES " + String.join(", ", rows));
        rows.clear();
      }
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}

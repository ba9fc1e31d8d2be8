package io.storageengine.cli;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBDriver;
import org.duckdb.DuckDBResultSet;

/**
 * Reads a CSV, JSON-lines, Parquet or Arrow IPC file as Arrow batches. CSV and JSON columns that
 * match a table column by name are cast by DuckDB to the type of {@link #duckType} (the table's
 * type, or one {@link TableCast} finishes), so text such as {@code 2026-01-01T10:00:00Z} arrives
 * as a timestamp, a JSON object as a struct or map and a JSON array as a list; a CSV cell of a
 * struct, list or map column holds JSON. A variant column takes any JSON value (from CSV, a
 * cell's JSON text), sent as text for the server to encode. Other columns pass through unchanged and the server
 * names any that do not fit. DuckDB reads the file as the batches are taken (a streamed result),
 * so a file is never held whole; a value that does not convert is named with its row, column and
 * text ({@link #next}).
 *
 * <p>With {@code perRowPresence} (CSV and JSON only), every batch also says, per row, which
 * columns the row carries: the reader's root holds the {@link #dataColumns()} data columns, then
 * one boolean presence column per data column (never null), then for JSON a BIGINT with the
 * number of keys on the line (to catch keys the column list lacks). A JSON key is present when
 * the line has it, even with the value {@code null}. A CSV cell is present unless it is empty and
 * unquoted; a quoted {@code ""} is the empty string; a cell equal to {@code nullString} is an
 * explicit null. Rows keep the file's order.
 */
final class FileBatches implements AutoCloseable {
  enum Format { CSV, JSON, PARQUET, ARROW }

  private final AutoCloseable[] owned;
  private final ArrowReader reader;
  private final int dataColumns;
  private final boolean perRowPresence;
  private final boolean keyCounts;
  /** Names the value a failed read stopped at (null: the file is read with no conversion). */
  private final Diagnosis diagnosis;
  /** Rows of the file skipped before the first batch ({@code --skip-rows}). */
  private final long skipped;

  private FileBatches(ArrowReader reader, int dataColumns, boolean perRowPresence, boolean keyCounts,
      Diagnosis diagnosis, long skipped, AutoCloseable... owned) {
    this.reader = reader;
    this.diagnosis = diagnosis;
    this.skipped = skipped;
    this.dataColumns = dataColumns;
    this.perRowPresence = perRowPresence;
    this.keyCounts = keyCounts;
    this.owned = owned;
  }

  /** The reader; its root is reused for every batch. */
  ArrowReader reader() {
    return reader;
  }

  /** How many of the root's leading columns are the file's data; -1 when all are. */
  int dataColumns() {
    return dataColumns;
  }

  /** Rows of the file before the first batch's first row (skipped): row numbers count from there. */
  long skipped() {
    return skipped;
  }

  /** Whether the root carries presence columns after the data columns. */
  boolean perRowPresence() {
    return perRowPresence;
  }

  /** Whether the root's last column counts the keys of each JSON line. */
  boolean keyCounts() {
    return keyCounts;
  }

  static Format detect(Path file, String explicit) {
    String name = explicit != null ? explicit : file.getFileName().toString();
    String lower = name.toLowerCase(Locale.ROOT);
    if (explicit != null) {
      lower = "." + lower;
    }
    if (lower.endsWith(".csv") || lower.endsWith(".tsv")) {
      return Format.CSV;
    }
    if (lower.endsWith(".json") || lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
      return Format.JSON;
    }
    if (lower.endsWith(".parquet")) {
      return Format.PARQUET;
    }
    if (lower.endsWith(".arrow") || lower.endsWith(".arrows") || lower.endsWith(".ipc") || lower.endsWith(".feather")) {
      return Format.ARROW;
    }
    throw SeException.invalid("%s: unknown file type; use --format csv|json|parquet|arrow", file);
  }

  /**
   * Opens {@code file}. {@code perRowPresence} is honoured for CSV and JSON (Parquet and Arrow
   * have one schema per file, and their nulls are explicit); {@code nullString} (CSV only, may be
   * null for none) is the cell text that means null.
   */
  static FileBatches open(Path file, Format format, Schema table, boolean perRowPresence, String nullString,
      BufferAllocator allocator, int batchRows) {
    return open(file, format, table, perRowPresence, nullString, allocator, batchRows, 0);
  }

  /**
   * As above, leaving out the file's first {@code skip} rows (data rows: a CSV header is not one);
   * rows are still numbered from the file's first in every error. Arrow IPC files cannot skip.
   */
  static FileBatches open(Path file, Format format, Schema table, boolean perRowPresence, String nullString,
      BufferAllocator allocator, int batchRows, long skip) {
    if (!Files.isReadable(file)) {
      throw SeException.invalid("%s: no such readable file", file);
    }
    if (skip < 0) {
      throw SeException.invalid("--skip-rows: expected 0 or more, got %d", skip);
    }
    try {
      if (format == Format.ARROW) {
        if (skip > 0) {
          throw SeException.invalid("%s: --skip-rows applies to CSV, JSON lines and Parquet files, not Arrow IPC", file);
        }
        return openArrow(file, allocator);
      }
      return openWithDuckDb(file, format, table, perRowPresence, nullString, allocator, batchRows, skip);
    } catch (IOException | SQLException e) {
      throw SeException.invalid("%s: cannot read as %s: %s", file, format.name().toLowerCase(Locale.ROOT), firstLine(e.getMessage()));
    }
  }

  private static FileBatches openArrow(Path file, BufferAllocator allocator) throws IOException {
    FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
    byte[] magic = new byte[6];
    channel.read(java.nio.ByteBuffer.wrap(magic));
    channel.position(0);
    ArrowReader reader = new String(magic, java.nio.charset.StandardCharsets.US_ASCII).equals("ARROW1")
        ? new ArrowFileReader(channel, allocator) : new ArrowStreamReader(channel, allocator);
    return new FileBatches(reader, -1, false, false, null, 0, channel);
  }

  private static FileBatches openWithDuckDb(Path file, Format format, Schema table, boolean perRowPresence,
      String nullString, BufferAllocator allocator, int batchRows, long skip) throws SQLException {
    boolean presence = perRowPresence && format != Format.PARQUET;
    // Streamed: the file is read as the batches are sent, never held whole.
    Properties streaming = new Properties();
    streaming.setProperty(DuckDBDriver.JDBC_STREAM_RESULTS, "true");
    Connection conn = DriverManager.getConnection("jdbc:duckdb:", streaming);
    try {
      try (Statement st = conn.createStatement()) {
        st.execute("SET TimeZone = 'UTC'");
        // Rows for one key must reach the server in file order.
        st.execute("SET preserve_insertion_order = true");
      }
      String path = SqlQuoting.literal(file.toAbsolutePath().toString());
      String source = switch (format) {
        // Unquoted empty cells read as SQL NULL (= absent); quoted "" stays the empty string.
        case CSV -> "read_csv(" + path + ", header = true, all_varchar = true, allow_quoted_nulls = false)";
        // The whole file is sampled so that a key first seen late is still a column.
        case JSON -> "read_json(" + path + ", format = 'newline_delimited'" + (presence ? ", sample_size = -1" : "") + ")";
        default -> "read_parquet(" + path + ")";
      };
      List<String> columns = new ArrayList<>();
      List<String> inferred = new ArrayList<>();
      try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM " + source)) {
        while (rs.next()) {
          columns.add(rs.getString(1));
          inferred.add(rs.getString(2));
        }
      }
      String nullLiteral = nullString == null ? null : SqlQuoting.literal(nullString);
      List<String> values = new ArrayList<>();
      List<String> present = new ArrayList<>();
      List<Conversion> conversions = new ArrayList<>();
      for (int i = 0; i < columns.size(); i++) {
        String c = columns.get(i);
        String quoted = SqlQuoting.identifier(c);
        Types.NestedField field = table == null ? null : table.caseInsensitiveFindField(c);
        String duckType = field == null || format == Format.PARQUET ? null
            // A CSV cell of a variant column is JSON text the server parses (naming a bad row).
            : format == Format.CSV && field.type().isVariantType() ? "VARCHAR" : duckType(field.type());
        String expr;
        if (format == Format.JSON) {
          String jsonPath = jsonPath(c);
          String type = duckType != null ? duckType : inferred.get(i);
          String value = isNested(type) ? "json -> " + jsonPath : "json ->> " + jsonPath;
          expr = field != null && field.type().isStructType() ? fromJson("(" + value + ")", field.type())
              : type.equals("JSON") ? value : "CAST(" + value + " AS " + type + ")";
          present.add("json_exists(json, " + jsonPath + ")");
          if (duckType != null && !type.equals("JSON")) {
            conversions.add(new Conversion(field, expr, "coalesce(json_type(json, " + jsonPath + ") <> 'NULL', FALSE)",
                "CAST(json -> " + jsonPath + " AS VARCHAR)"));
          }
        } else {
          String value = format == Format.CSV && nullLiteral != null
              ? "CASE WHEN " + quoted + " = " + nullLiteral + " THEN NULL ELSE " + quoted + " END" : quoted;
          expr = duckType == null && value.equals(quoted) ? quoted
              : "CAST(" + value + " AS " + (duckType == null ? "VARCHAR" : duckType) + ")";
          if (format == Format.CSV && duckType != null && isNested(duckType)) {
            // A struct, list or map cell holds JSON.
            expr = fromJson("CAST(" + value + " AS JSON)", field.type());
          }
          present.add(quoted + " IS NOT NULL");
          if (format == Format.CSV && duckType != null) {
            conversions.add(new Conversion(field, expr, "(" + value + ") IS NOT NULL",
                "CAST(to_json(" + quoted + ") AS VARCHAR)"));
          }
        }
        values.add(expr.equals(quoted) ? quoted : expr + " AS " + quoted);
      }
      StringBuilder select = new StringBuilder("SELECT ").append(String.join(", ", values));
      if (presence) {
        for (int i = 0; i < present.size(); i++) {
          select.append(", ").append(present.get(i)).append(" AS \"se_present_").append(i).append('"');
        }
      }
      boolean keyCounts = presence && format == Format.JSON;
      if (keyCounts) {
        select.append(", CAST(len(json_keys(json)) AS BIGINT) AS se_key_count");
      }
      String from = format == Format.JSON ? "read_ndjson_objects(" + path + ")" : source;
      // Rows left out before any value is converted (a skipped row is not read as the table's
      // types); insertion order is preserved, so these are the file's first rows.
      select.append(" FROM ").append(skip > 0 ? "(SELECT * FROM " + from + " OFFSET " + skip + ") AS skipped" : from);
      Diagnosis diagnosis = conversions.isEmpty() ? null : new Diagnosis(from, conversions, skip);
      Statement st = conn.createStatement();
      DuckDBResultSet rs;
      ArrowReader reader;
      try {
        rs = (DuckDBResultSet) st.executeQuery(select.toString());
        reader = (ArrowReader) rs.arrowExportStream(allocator, batchRows);
      } catch (SQLException e) {
        // A bad value in the first rows fails the query before any batch.
        SeException named = diagnosis == null ? null : diagnosis.firstBadValue(e);
        if (named != null) {
          throw named;
        }
        throw e;
      }
      return new FileBatches(reader, presence ? columns.size() : -1, presence, keyCounts, diagnosis, skip, rs, st,
          conn);
    } catch (SQLException | RuntimeException e) {
      conn.close();
      throw e;
    }
  }

  /**
   * Loads the next batch into {@link #reader()}'s root; false at the end of the file. A value
   * that does not convert to its column's type is refused naming its row (1-based, in file order),
   * column, table type and text; the batches before it were delivered.
   *
   * @throws SeException INVALID_ARGUMENT for a value that does not convert or a file that cannot be read
   */
  boolean next() throws IOException {
    try {
      return reader.loadNextBatch();
    } catch (IOException | RuntimeException e) {
      if (e instanceof SeException se) {
        throw se;
      }
      SeException named = diagnosis == null ? null : diagnosis.firstBadValue(e);
      if (named != null) {
        throw named;
      }
      throw SeException.invalid("cannot read the file: %s", firstLine(e.getMessage()));
    }
  }

  /**
   * A column whose file values DuckDB converts to the table's type: {@code expr} converts,
   * {@code present} is true where the value is there and not null (so the conversion must give a
   * value), {@code raw} is the value's text as the file has it.
   */
  private record Conversion(Types.NestedField field, String expr, String present, String raw) {}

  /**
   * Finds the value a failed read stopped at: the file's first row where a conversion fails, read
   * again by a DuckDB of its own on one thread (so rows come in file order), stopping there.
   */
  private record Diagnosis(String from, List<Conversion> conversions, long skip) {
    /** The first value that does not convert, named; null when none is found (another failure). */
    SeException firstBadValue(Exception failure) {
      List<String> failing = new ArrayList<>();
      List<String> raws = new ArrayList<>();
      for (int i = 0; i < conversions.size(); i++) {
        Conversion c = conversions.get(i);
        failing.add("CASE WHEN " + c.present() + " AND try(" + c.expr() + ") IS NULL THEN " + i + " END");
        raws.add("WHEN " + i + " THEN " + c.raw());
      }
      // The first column of the first row whose conversion fails, and its text.
      String sql = "SELECT ordinality, __bad, CASE __bad " + String.join(" ", raws) + " END FROM (SELECT *, coalesce("
          + String.join(", ", failing) + ") AS __bad FROM " + from + " WITH ORDINALITY) WHERE __bad IS NOT NULL AND ordinality > "
          + skip + " LIMIT 1";
      // Not streamed (LIMIT stops the read at the row anyway): a streamed result's error can
      // reach JDBC as "Invalid result set" alone.
      try (Connection conn = DriverManager.getConnection("jdbc:duckdb:");
          Statement st = conn.createStatement()) {
        st.execute("SET threads = 1");
        st.execute("SET TimeZone = 'UTC'");
        try (ResultSet rs = st.executeQuery(sql)) {
          if (!rs.next()) {
            return null;
          }
          long row = rs.getLong(1);
          Conversion c = conversions.get(rs.getInt(2));
          String text = rs.getString(3);
          return SeException.invalid("row %d, column `%s`: %s is not a valid %s (%s)", row, c.field().name(), text,
              c.field().type(), conversionError(st, c, row, failure));
        }
      } catch (SQLException | RuntimeException e) {
        return null; // the failure is reported as it came
      }
    }

    /**
     * DuckDB's own message for converting row {@code row} of {@code c} (the streamed read's
     * message can be DuckDB's "Invalid result set" alone), else {@code failure}'s.
     */
    private String conversionError(Statement st, Conversion c, long row, Exception failure) {
      try (ResultSet rs = st.executeQuery("SELECT " + c.expr() + " FROM " + from + " WITH ORDINALITY WHERE ordinality = "
          + row + " LIMIT 1")) {
        rs.next();
      } catch (SQLException e) {
        return firstLine(e.getMessage());
      }
      String message = firstLine(failure.getMessage());
      int inner = message.indexOf("message=");
      return inner < 0 ? message : message.substring(inner + "message=".length()).replaceFirst("}$", "");
    }
  }

  /** The JSON path of key {@code name} of an object: {@code $."name"}, quoted as a SQL literal. */
  private static String jsonPath(String name) {
    return SqlQuoting.literal("$.\"" + name.replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
  }

  /**
   * The expression that reads {@code json}, a JSON value (SQL NULL or JSON {@code null} for
   * null), as {@link #duckType} of {@code type}. A JSON object for a struct may leave out fields:
   * a field whose key is absent gets its Iceberg {@code write-default} (NULL without one), an
   * explicit {@code null} stays null, so a nested field is written as a top-level column is. An
   * object with a key the struct lacks, or a value that is not an object, is cast as it is, so
   * DuckDB names the problem ({@code Object {...} has unknown key "z"}). Lists and maps are cast
   * whole (their structs must name every field).
   */
  static String fromJson(String json, Type type) {
    switch (type.typeId()) {
      case STRUCT -> {
        List<String> names = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        for (Types.NestedField f : type.asStructType().fields()) {
          names.add(SqlQuoting.literal(f.name()));
          String path = jsonPath(f.name());
          String absent = f.writeDefault() == null ? "CAST(NULL AS " + duckType(f.type()) + ")"
              : "CAST(" + defaultLiteral(f) + " AS " + duckType(f.type()) + ")";
          parts.add(SqlQuoting.identifier(f.name()) + " := CASE WHEN json_exists(" + json + ", " + path + ") THEN "
              + fromJson("(" + json + " -> " + path + ")", f.type()) + " ELSE " + absent + " END");
        }
        return "CASE WHEN " + json + " IS NULL OR json_type(" + json + ") = 'NULL' THEN NULL"
            + " WHEN json_type(" + json + ") = 'OBJECT' AND list_has_all([" + String.join(", ", names)
            + "]::VARCHAR[], json_keys(" + json + ")) THEN struct_pack(" + String.join(", ", parts) + ")"
            + " ELSE CAST(" + json + " AS " + duckType(type) + ") END";
      }
      case VARIANT -> {
        return json;
      }
      case LIST, MAP -> {
        return "CAST(" + json + " AS " + duckType(type) + ")";
      }
      default -> {
        return "CAST(" + json + " ->> '$' AS " + duckType(type) + ")";
      }
    }
  }

  /** The write default of {@code f} as a DuckDB literal {@link TableCast} finishes as it does a file's value. */
  private static String defaultLiteral(Types.NestedField f) {
    if (f.type().typeId() == Type.TypeID.FIXED) {
      // fixed(n) is read as hex text.
      java.nio.ByteBuffer bytes = ((java.nio.ByteBuffer) f.writeDefault()).duplicate();
      byte[] out = new byte[bytes.remaining()];
      bytes.get(out);
      return SqlQuoting.literal(java.util.HexFormat.of().formatHex(out));
    }
    return io.storageengine.duckdb.DuckLiterals.of(f.type(), f.writeDefault());
  }

  /** Whether a DuckDB type is nested (read from JSON as JSON, then cast), not a scalar. */
  private static boolean isNested(String duckType) {
    String upper = duckType.toUpperCase(Locale.ROOT);
    return upper.equals("JSON") || upper.endsWith("]") || upper.startsWith("STRUCT") || upper.startsWith("MAP")
        || upper.startsWith("UNION");
  }

  /**
   * The DuckDB type a CSV or JSON value of an Iceberg column is read as: the column's own type
   * where DuckDB has it, else one {@link TableCast} turns into it: {@code int} as BIGINT (so an
   * out-of-range value is named with its row), {@code uuid}, {@code fixed(n)} and the
   * nanosecond timestamps as VARCHAR (DuckDB's TIMESTAMPTZ has microseconds), variant as JSON
   * (the value's text, which the server encodes), geometry and geography as VARCHAR (WKT, which
   * the server turns into WKB). Structs, lists
   * and maps are read as the same nesting of these types (JSON objects as structs or maps, JSON
   * arrays as lists).
   */
  static String duckType(Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> "BOOLEAN";
      case INTEGER, LONG -> "BIGINT";
      case FLOAT -> "FLOAT";
      case DOUBLE -> "DOUBLE";
      case DECIMAL -> "DECIMAL(" + ((Types.DecimalType) type).precision() + "," + ((Types.DecimalType) type).scale() + ")";
      case DATE -> "DATE";
      case TIME -> "TIME";
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP";
      case STRING, UUID, FIXED, TIMESTAMP_NANO -> "VARCHAR";
      case BINARY -> "BLOB";
      // Any JSON value, sent as its text: the server encodes it as a variant.
      case VARIANT -> "JSON";
      // WKT text: the server parses it into WKB (naming a bad row).
      case GEOMETRY, GEOGRAPHY -> "VARCHAR";
      case STRUCT -> {
        List<String> fields = new ArrayList<>();
        for (Types.NestedField f : type.asStructType().fields()) {
          fields.add(SqlQuoting.identifier(f.name()) + " " + duckType(f.type()));
        }
        yield "STRUCT(" + String.join(", ", fields) + ")";
      }
      case LIST -> duckType(type.asListType().elementType()) + "[]";
      case MAP -> "MAP(" + duckType(type.asMapType().keyType()) + ", " + duckType(type.asMapType().valueType()) + ")";
      default -> throw SeException.invalid("columns of type %s cannot be read from CSV or JSON", type);
    };
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  @Override
  public void close() throws Exception {
    reader.close();
    for (AutoCloseable c : owned) {
      c.close();
    }
  }
}

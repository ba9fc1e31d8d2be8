package io.storageengine.cli;

import io.storageengine.common.SeException;
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
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * Reads a CSV, JSON-lines, Parquet or Arrow IPC file as Arrow batches. CSV and JSON columns that
 * match a table column by name are cast to the table's type by DuckDB, so text such as
 * {@code 2026-01-01T10:00:00Z} arrives as a timestamp; other columns pass through unchanged
 * and the server names any that do not fit.
 */
final class FileBatches implements AutoCloseable {
  enum Format { CSV, JSON, PARQUET, ARROW }

  private final AutoCloseable[] owned;
  private final ArrowReader reader;

  private FileBatches(ArrowReader reader, AutoCloseable... owned) {
    this.reader = reader;
    this.owned = owned;
  }

  /** The reader; its root is reused for every batch. */
  ArrowReader reader() {
    return reader;
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

  static FileBatches open(Path file, Format format, Schema table, BufferAllocator allocator, int batchRows) {
    if (!Files.isReadable(file)) {
      throw SeException.invalid("%s: no such readable file", file);
    }
    try {
      if (format == Format.ARROW) {
        return openArrow(file, allocator);
      }
      return openWithDuckDb(file, format, table, allocator, batchRows);
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
    return new FileBatches(reader, channel);
  }

  private static FileBatches openWithDuckDb(Path file, Format format, Schema table, BufferAllocator allocator,
      int batchRows) throws SQLException {
    Connection conn = DriverManager.getConnection("jdbc:duckdb:");
    try {
      try (Statement st = conn.createStatement()) {
        st.execute("SET TimeZone = 'UTC'");
      }
      String path = "'" + file.toAbsolutePath().toString().replace("'", "''") + "'";
      String source = switch (format) {
        case CSV -> "read_csv(" + path + ", header = true, all_varchar = true)";
        case JSON -> "read_json(" + path + ", format = 'newline_delimited')";
        default -> "read_parquet(" + path + ")";
      };
      List<String> columns = new ArrayList<>();
      try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM " + source)) {
        while (rs.next()) {
          columns.add(rs.getString(1));
        }
      }
      StringBuilder select = new StringBuilder("SELECT ");
      for (int i = 0; i < columns.size(); i++) {
        String c = columns.get(i);
        String quoted = "\"" + c.replace("\"", "\"\"") + "\"";
        Types.NestedField field = table == null ? null : table.caseInsensitiveFindField(c);
        String duckType = field == null || format == Format.PARQUET ? null : duckType(field.type());
        select.append(i == 0 ? "" : ", ")
            .append(duckType == null ? quoted : "CAST(" + quoted + " AS " + duckType + ") AS " + quoted);
      }
      select.append(" FROM ").append(source);
      Statement st = conn.createStatement();
      DuckDBResultSet rs = (DuckDBResultSet) st.executeQuery(select.toString());
      ArrowReader reader = (ArrowReader) rs.arrowExportStream(allocator, batchRows);
      return new FileBatches(reader, rs, st, conn);
    } catch (SQLException | RuntimeException e) {
      conn.close();
      throw e;
    }
  }

  /** DuckDB's name for an Iceberg primitive type; null for nested types (passed through). */
  private static String duckType(Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> "BOOLEAN";
      case INTEGER -> "INTEGER";
      case LONG -> "BIGINT";
      case FLOAT -> "FLOAT";
      case DOUBLE -> "DOUBLE";
      case DECIMAL -> "DECIMAL(" + ((Types.DecimalType) type).precision() + "," + ((Types.DecimalType) type).scale() + ")";
      case DATE -> "DATE";
      case TIME -> "TIME";
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP";
      case STRING -> "VARCHAR";
      case BINARY -> "BLOB";
      default -> null;
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

package io.storageengine.query;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBResultSet;

/**
 * A statement ready to run in its own locked DuckDB database, with the tenant tables it reads
 * set up as views. Closing it closes the database and releases cached files.
 */
final class PreparedQuery implements AutoCloseable {
  private final Connection connection;
  private final String sql;
  private final Map<String, SnapshotPin> pins;
  private final List<DataFileCache.Lease> leases;
  private final Path spillDirectory;
  private final List<AutoCloseable> open = new ArrayList<>();

  PreparedQuery(Connection connection, String sql, Map<String, SnapshotPin> pins,
      List<DataFileCache.Lease> leases, Path spillDirectory) {
    this.connection = connection;
    this.sql = sql;
    this.pins = pins;
    this.leases = leases;
    this.spillDirectory = spillDirectory;
  }

  /** The table states this query reads, keyed by table key (see {@link StatementAnalyzer.TableName#key()}). */
  Map<String, SnapshotPin> pins() {
    return pins;
  }

  /**
   * The Arrow schema {@link #execute} produces, computed without reading data: types from the
   * statement wrapped in {@code LIMIT 0}, names from the bound statement (a subquery would
   * rename duplicate column names).
   */
  Schema schema(BufferAllocator allocator) {
    try (PreparedStatement bound = connection.prepareStatement(sql);
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT * FROM (" + sql + "\n) AS __se_query LIMIT 0");
        ArrowReader reader = (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, 1)) {
      ResultSetMetaData metadata = bound.getMetaData();
      List<Field> fields = new ArrayList<>();
      List<Field> typed = reader.getVectorSchemaRoot().getSchema().getFields();
      for (int i = 0; i < typed.size(); i++) {
        Field field = typed.get(i);
        String name = i < metadata.getColumnCount() ? metadata.getColumnName(i + 1) : field.getName();
        fields.add(new Field(name, field.getFieldType(), field.getChildren()));
      }
      return new Schema(fields);
    } catch (SQLException | IOException e) {
      throw DuckDbErrors.translate(e);
    }
  }

  /** Runs the statement; batches are produced as the reader is consumed. Close the reader first. */
  ArrowReader execute(BufferAllocator allocator, int batchRows) {
    try {
      Statement statement = connection.createStatement();
      open.add(statement);
      ResultSet rows = statement.executeQuery(sql);
      open.add(rows);
      return (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, batchRows);
    } catch (SQLException e) {
      throw DuckDbErrors.translate(e);
    }
  }

  @Override
  public void close() {
    for (int i = open.size() - 1; i >= 0; i--) {
      closeQuietly(open.get(i));
    }
    closeQuietly(connection);
    leases.forEach(DataFileCache.Lease::close);
    if (spillDirectory != null && Files.exists(spillDirectory)) {
      try (Stream<Path> files = Files.walk(spillDirectory)) {
        files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      } catch (IOException ignored) {
        // Spill files are scratch data; a failed cleanup only costs disk until restart.
      }
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Closing DuckDB resources after a failed query; the original error is what matters.
    }
  }
}

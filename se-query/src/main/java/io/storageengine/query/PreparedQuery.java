package io.storageengine.query;

import io.storageengine.common.SeException;
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
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBResultSet;

/**
 * A statement ready to run on its own connection to a locked DuckDB database, with the tenant
 * tables it reads set up as views. Closing it closes the connection, then the resources it holds
 * in order (leases on cached files, the database lease that resets and returns the database).
 *
 * <p>Local data files are read in place, so table maintenance may delete them between planning
 * and execution (or during it, for files DuckDB has not opened yet) when it expires the pinned
 * snapshot. DuckDB then fails with an I/O or permission error naming the path; such failures
 * are reported as {@link SnapshotExpiredException} instead. Cached copies of remote files are
 * leased by the query and never vanish.
 */
final class PreparedQuery implements AutoCloseable {
  private final Connection connection;
  private final String sql;
  private final Map<String, SnapshotPin> pins;
  private final List<TableRead> reads;
  private final List<? extends AutoCloseable> resources;
  private final List<AutoCloseable> open = new ArrayList<>();
  private boolean closed;

  /**
   * The files one table is read from, to tell a vanished snapshot from other failures.
   *
   * @param table the loaded table, refreshed to check whether the snapshot still exists
   * @param snapshotId the pinned snapshot
   * @param localFiles the paths DuckDB reads
   */
  record TableRead(String displayName, Table table, long snapshotId, List<String> localFiles) {}

  PreparedQuery(Connection connection, String sql, Map<String, SnapshotPin> pins, List<TableRead> reads,
      List<? extends AutoCloseable> resources) {
    this.connection = connection;
    this.sql = sql;
    this.pins = pins;
    this.reads = reads;
    this.resources = resources;
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
      throw translate(e);
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
      throw translate(e);
    }
  }

  /**
   * The error to report for a failure of this query in DuckDB (also while its reader is
   * consumed): {@link SnapshotExpiredException} when a file of a pinned snapshot no longer
   * exists, else {@link DuckDbErrors#translate}. Checked by looking at the files, not by parsing
   * DuckDB's message, which differs by version and by how the file went missing.
   */
  SeException translate(Exception e) {
    if (e instanceof SeException se) {
      return se;
    }
    for (TableRead read : reads) {
      for (String file : read.localFiles()) {
        if (!Files.exists(Path.of(file))) {
          return SnapshotExpiredException.missingFiles(read.displayName(), read.table(), read.snapshotId(), e);
        }
      }
    }
    return DuckDbErrors.translate(e);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int i = open.size() - 1; i >= 0; i--) {
      closeQuietly(open.get(i));
    }
    closeQuietly(connection);
    resources.forEach(PreparedQuery::closeQuietly);
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Closing DuckDB resources after a failed query; the original error is what matters.
    }
  }
}

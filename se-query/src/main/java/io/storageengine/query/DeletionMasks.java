package io.storageengine.query;

import io.storageengine.duckdb.PositionMask;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The deleted positions of one view's files, as DuckDB removes them: a table of
 * {@link QueryDatabasePool#META_SCHEMA} with one bitmap per file (bit {@code p} set: row
 * {@code p} of the file is deleted), joined to the rows of a {@code read_parquet} of those files
 * on DuckDB's {@code file_index} and filtered with {@code get_bit} on {@code file_row_number}.
 * One row per file instead of one per deleted position: filling it costs a bitmap copy per file,
 * and the join's build side has as many rows as the read has files. A read of {@code n} files
 * is one group; {@code file_index} counts within its {@code read_parquet} list.
 */
final class DeletionMasks {
  private static final String META_SCHEMA = QueryDatabasePool.META_SCHEMA;

  private final DuckDBConnection connection;
  private final String name;
  private int groups;

  private DeletionMasks(DuckDBConnection connection, String name) {
    this.connection = connection;
    this.name = name;
  }

  /** Creates the (empty) table of the view numbered {@code number} on {@code connection}. */
  static DeletionMasks create(Connection connection, int number) throws SQLException {
    String name = "deletes_" + number;
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE " + META_SCHEMA + "." + name + " (__se_dv_group INTEGER, __se_dv_file UBIGINT, "
          + "__se_dv_bits BIGINT, __se_dv_mask BLOB)");
    }
    return new DeletionMasks((DuckDBConnection) connection, name);
  }

  /**
   * Adds the bitmaps of {@code files} (each with deleted positions, in the order of their
   * {@code read_parquet} list) as a new group and returns what follows {@code read_parquet([files],
   * ..., file_row_number = true) AS data} to keep only the live rows: a join, then a
   * {@code WHERE} (a caller may add no other {@code WHERE}). Rows past a file's bitmap are live.
   */
  String keepLive(List<PlannedFile> files) throws SQLException {
    int group = groups++;
    try (DuckDBAppender appender = connection.createAppender(META_SCHEMA, name)) {
      for (int i = 0; i < files.size(); i++) {
        byte[] mask = PositionMask.of(files.get(i).deletedPositions());
        appender.beginRow().append(group).append((long) i).append(8L * mask.length).append(mask).endRow();
      }
    }
    return " JOIN (SELECT __se_dv_file, __se_dv_bits, CAST(__se_dv_mask AS BIT) AS __se_dv_mask FROM " + META_SCHEMA
        + "." + name + " WHERE __se_dv_group = " + group + ") AS dv ON dv.__se_dv_file = data.file_index"
        + " WHERE CASE WHEN data.file_row_number < dv.__se_dv_bits"
        + " THEN get_bit(dv.__se_dv_mask, CAST(data.file_row_number AS INTEGER)) ELSE 0 END = 0";
  }
}

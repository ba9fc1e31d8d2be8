package io.storageengine.query;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The column tree of one Parquet data file with the Iceberg field id of every node, read from its
 * footer. Files written before a schema change carry the names of their time; the ids tell which
 * table field a file column is.
 *
 * @param name the column's name in the file
 * @param fieldId the Iceberg field id, null when the file has none
 * @param children nested columns in file order (a list's repeated group, a map's key/value group)
 */
record ParquetFileLayout(String name, Integer fieldId, List<ParquetFileLayout> children) {

  /** The direct child with Iceberg field id {@code id}, or null. */
  ParquetFileLayout child(int id) {
    for (ParquetFileLayout child : children) {
      if (child.fieldId() != null && child.fieldId() == id) {
        return child;
      }
    }
    return null;
  }

  /**
   * The layout of the local Parquet file {@code path}, read from its footer by DuckDB's
   * {@code parquet_schema} on {@code connection} (which must be allowed to read the file). The
   * rows come in schema order, each group followed by its children.
   */
  static ParquetFileLayout read(Connection connection, String path) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    try (PreparedStatement statement = connection.prepareStatement("SELECT name, field_id, num_children FROM parquet_schema(?)")) {
      statement.setString(1, path);
      try (ResultSet result = statement.executeQuery()) {
        while (result.next()) {
          Object id = result.getObject(2);
          rows.add(new Object[] {result.getString(1), id == null ? null : ((Number) id).intValue(), result.getLong(3)});
        }
      }
    }
    if (rows.isEmpty()) {
      throw new SQLException("IO Error: no Parquet schema in a data file");
    }
    int[] next = {0};
    return node(rows, next);
  }

  private static ParquetFileLayout node(List<Object[]> rows, int[] next) throws SQLException {
    if (next[0] >= rows.size()) {
      throw new SQLException("IO Error: truncated Parquet schema in a data file");
    }
    Object[] row = rows.get(next[0]++);
    List<ParquetFileLayout> children = new ArrayList<>();
    for (long i = 0; i < (Long) row[2]; i++) {
      children.add(node(rows, next));
    }
    return new ParquetFileLayout((String) row[0], (Integer) row[1], List.copyOf(children));
  }
}

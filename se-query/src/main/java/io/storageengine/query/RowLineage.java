package io.storageengine.query;

import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Function;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The row lineage columns of Iceberg v3, {@code _row_id} and {@code _last_updated_sequence_number}
 * (both BIGINT), as hidden columns of a table's view: they are there only for a statement that
 * names one of them (see {@link StatementAnalyzer.Analysis#lineage}), after the schema's columns,
 * unless the schema has a column of that name (which then wins). In such a statement a plain
 * {@code *} over a table is followed by {@link #starExclusion}, so {@code SELECT *} never shows
 * them.
 *
 * <p>Values follow the spec: the value a data file holds (its column of the reserved field id),
 * or when that is null (or the file has no such column), for {@code _row_id} the file's
 * {@code first_row_id} plus the row's position in the file, for
 * {@code _last_updated_sequence_number} the data sequence number of the file's manifest entry. A
 * file without {@code first_row_id} (added before the table had row lineage) reads NULL
 * {@code _row_id}s. Files are read by field id, with their name ({@code filename}) and position
 * ({@code file_row_number}) joined to a table of {@link QueryDatabasePool#META_SCHEMA} holding each
 * file's {@code first_row_id} and sequence number.
 */
final class RowLineage {
  static final String ROW_ID = MetadataColumns.ROW_ID.name();
  static final String LAST_UPDATED_SEQUENCE_NUMBER = MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.name();
  /** The names the files' own lineage columns are read under (never a table column's). */
  private static final String FILE_ROW_ID = "__se_row_id";
  private static final String FILE_LAST_UPDATED = "__se_last_updated_sequence_number";
  private static final String META_SCHEMA = QueryDatabasePool.META_SCHEMA;

  private RowLineage() {}

  /** Whether {@code column} names a row lineage column (compared ignoring case, as DuckDB does). */
  static boolean isColumn(String column) {
    String lower = column.toLowerCase(Locale.ROOT);
    return lower.equals(ROW_ID) || lower.equals(LAST_UPDATED_SEQUENCE_NUMBER);
  }

  /**
   * The query of a view over {@code clean} and {@code withDeletes} files (read by field id with
   * {@code projection}, deleted positions removed with {@code deletes}) with the schema's columns and
   * the lineage columns. Creates the table of the files' lineage, named after {@code number}.
   */
  static String viewSql(Connection connection, Schema schema, List<PlannedFile> clean, List<PlannedFile> withDeletes,
      DeletionMasks deletes, Function<PlannedFile, FieldIdProjection> projection, int number) throws SQLException {
    List<String> hidden = hiddenColumns(schema);
    String fileEntries = MetadataColumns.ROW_ID.fieldId() + ": {name: " + SqlQuoting.literal(FILE_ROW_ID)
        + ", type: 'BIGINT', default_value: NULL}, " + MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.fieldId()
        + ": {name: " + SqlQuoting.literal(FILE_LAST_UPDATED) + ", type: 'BIGINT', default_value: NULL}";
    List<PlannedFile> all = new ArrayList<>(clean);
    all.addAll(withDeletes);
    List<String> parts = new ArrayList<>();
    if (!all.isEmpty()) {
      String lineage = META_SCHEMA + ".lineage_" + number;
      execute(connection, "CREATE TABLE " + lineage + " (__se_lineage_file VARCHAR, __se_first_row_id BIGINT, "
          + "__se_data_sequence_number BIGINT)");
      try (DuckDBAppender appender = ((DuckDBConnection) connection).createAppender(META_SCHEMA, "lineage_" + number)) {
        for (PlannedFile file : all) {
          appender.beginRow().append(file.localPath());
          if (file.firstRowId() == null) {
            appender.appendNull();
          } else {
            appender.append(file.firstRowId().longValue());
          }
          if (file.dataSequenceNumber() == null) {
            appender.appendNull();
          } else {
            appender.append(file.dataSequenceNumber().longValue());
          }
          appender.endRow();
        }
      }
      StringJoiner lineageColumns = new StringJoiner("");
      if (hidden.contains(ROW_ID)) {
        lineageColumns.add(", coalesce(data." + FILE_ROW_ID + ", l.__se_first_row_id + data.file_row_number) AS "
            + SqlQuoting.identifier(ROW_ID));
      }
      if (hidden.contains(LAST_UPDATED_SEQUENCE_NUMBER)) {
        lineageColumns.add(", coalesce(data." + FILE_LAST_UPDATED + ", l.__se_data_sequence_number) AS "
            + SqlQuoting.identifier(LAST_UPDATED_SEQUENCE_NUMBER));
      }
      for (boolean deleted : new boolean[] {false, true}) {
        for (Map.Entry<FieldIdProjection, List<PlannedFile>> group : byProjection(deleted ? withDeletes : clean,
            projection).entrySet()) {
          FieldIdProjection read = group.getKey().withFields(fileEntries);
          StringJoiner files = new StringJoiner(", ", "[", "]");
          group.getValue().forEach(file -> files.add(SqlQuoting.literal(file.localPath())));
          parts.add("SELECT " + read.selectList() + lineageColumns + " FROM read_parquet(" + files + read.readOptions()
              + ", filename = '__se_file', file_row_number = true) AS data JOIN " + lineage
              + " AS l ON l.__se_lineage_file = data.__se_file"
              + (deleted ? deletes.keepLive(group.getValue()) : ""));
        }
      }
    }
    if (parts.isEmpty()) {
      StringJoiner empty = new StringJoiner(", ");
      for (Types.NestedField field : schema.columns()) {
        empty.add("CAST(NULL AS " + IcebergTypes.duckdbType(field.name(), field.type()) + ") AS "
            + SqlQuoting.identifier(field.name()));
      }
      hidden.forEach(column -> empty.add("CAST(NULL AS BIGINT) AS " + SqlQuoting.identifier(column)));
      parts.add("SELECT " + empty + " WHERE false");
    }
    return String.join(" UNION ALL ", parts);
  }

  /**
   * What follows a plain {@code *} of a statement whose views carry the lineage columns, so that
   * they stay hidden from it: {@code EXCLUDE} of both. Right only when every view carries both
   * ({@link #hidesBoth}).
   */
  static String starExclusion() {
    return " EXCLUDE (" + SqlQuoting.identifier(ROW_ID) + ", " + SqlQuoting.identifier(LAST_UPDATED_SEQUENCE_NUMBER) + ")";
  }

  /** Whether a view of a table of {@code schema} adds both lineage columns (it has neither name). */
  static boolean hidesBoth(Schema schema) {
    return hiddenColumns(schema).size() == 2;
  }

  /** The lineage columns the view adds: those the schema has no column of that name for. */
  private static List<String> hiddenColumns(Schema schema) {
    List<String> out = new ArrayList<>();
    for (String column : List.of(ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)) {
      if (schema.caseInsensitiveFindField(column) == null) {
        out.add(column);
      }
    }
    return out;
  }

  private static Map<FieldIdProjection, List<PlannedFile>> byProjection(List<PlannedFile> files,
      Function<PlannedFile, FieldIdProjection> projection) {
    Map<FieldIdProjection, List<PlannedFile>> groups = new LinkedHashMap<>();
    for (PlannedFile file : files) {
      groups.computeIfAbsent(projection.apply(file), k -> new ArrayList<>()).add(file);
    }
    return groups;
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}

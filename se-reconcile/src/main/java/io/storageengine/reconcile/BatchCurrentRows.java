package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Loads the current rows of an entity batch's keys into the temp table {@value #TABLE}: every
 * schema column, {@code __file} and {@code __pos} (the row's local data file path and position)
 * and {@code __rid} (its v3 {@code _row_id}), at most one row per key (the table's invariant).
 *
 * <p>The read is narrow: key, version and row id of the matching rows of the candidate files;
 * the other columns are NULL unless a staged upsert of the key omits a column (a partial upsert
 * keeps the current value), and then they are read for just those keys. Rows deleted by their
 * file's deletion vector are not current and are dropped.
 */
final class BatchCurrentRows {
  static final String TABLE = "existing";

  private BatchCurrentRows() {}

  /**
   * @param keysTable temp table with one row per key of the batch (key columns)
   * @param files the candidate files
   */
  static void load(DuckSession duck, EntityColumns columns, String keysTable, CurrentRows files) {
    create(duck, columns);
    if (files.byLocalPath().isEmpty()) {
      return;
    }
    Schema schema = columns.schema();
    List<Types.NestedField> narrow = narrow(columns);
    files.insertInto(TABLE,
        fileSchema -> columnsRead(schema, fileSchema, narrow) + ", r.filename, r.file_row_number, "
            + CurrentRows.rowId(fileSchema),
        fileSchema -> " JOIN " + keysTable + " b ON " + columns.fileKeyJoin(fileSchema) + CurrentRows.JOIN_FILES);
    complete(duck, columns, files);
  }

  /** Creates {@value #TABLE}, empty. */
  static void create(DuckSession duck, EntityColumns columns) {
    List<String> defs = new ArrayList<>();
    for (Types.NestedField c : columns.schema().columns()) {
      defs.add(SqlQuoting.identifier(c.name()) + " " + DuckSql.type(c.type()));
    }
    defs.add("__file VARCHAR");
    defs.add("__pos BIGINT");
    defs.add("__rid BIGINT");
    duck.execute("CREATE OR REPLACE TEMP TABLE " + TABLE + " (" + String.join(", ", defs) + ")");
  }

  /** The columns a narrow read fills: the key columns and the version column. */
  private static List<Types.NestedField> narrow(EntityColumns columns) {
    List<Types.NestedField> narrow = new ArrayList<>(columns.keys());
    Types.NestedField version = columns.version();
    if (version != null && !columns.schema().identifierFieldIds().contains(version.fieldId())) {
      narrow.add(version);
    }
    return narrow;
  }

  /**
   * Completes the narrow rows in {@value #TABLE} (read from {@code files}): the other columns of
   * keys that a staged upsert omits a column of, then drops the rows deleted by their file's
   * position deletes.
   */
  static void complete(DuckSession duck, EntityColumns columns, CurrentRows files) {
    Schema schema = columns.schema();
    List<Types.NestedField> narrow = narrow(columns);
    String partial = partialUpsertCondition(schema);
    if (partial != null && duck.queryLong("SELECT count(*) FROM " + WalStaging.TABLE + " WHERE " + partial) > 0) {
      duck.execute("CREATE OR REPLACE TEMP TABLE partial_keys AS SELECT DISTINCT " + columns.keyList("") + " FROM "
          + WalStaging.TABLE + " WHERE " + partial);
      duck.execute("CREATE OR REPLACE TEMP TABLE existing_full AS SELECT * FROM " + TABLE + " LIMIT 0");
      List<Types.NestedField> all = new ArrayList<>(schema.columns());
      all.add(MetadataColumns.ROW_ID);
      files.insertInto("existing_full",
          fileSchema -> columnsRead(schema, fileSchema, all) + ", r.filename, r.file_row_number, NULL",
          fileSchema -> " JOIN partial_keys b ON " + columns.fileKeyJoin(fileSchema));
      List<String> sets = new ArrayList<>();
      for (Types.NestedField c : schema.columns()) {
        if (!narrow.contains(c)) {
          sets.add(SqlQuoting.identifier(c.name()) + " = x." + SqlQuoting.identifier(c.name()));
        }
      }
      if (!sets.isEmpty()) {
        duck.execute("UPDATE " + TABLE + " SET " + String.join(", ", sets) + " FROM existing_full x"
            + " WHERE " + TABLE + ".__file = x.__file AND " + TABLE + ".__pos = x.__pos");
      }
    }
    files.removeDeleted(TABLE);
  }

  /**
   * The schema's columns as read from files of {@code fileSchema}; columns not in {@code read}
   * (or absent from the file) are NULL.
   */
  private static String columnsRead(Schema schema, Schema fileSchema, List<Types.NestedField> read) {
    List<String> exprs = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      boolean wanted = read.stream().anyMatch(r -> r.fieldId() == c.fieldId());
      exprs.add(wanted ? CurrentRows.column(fileSchema, c) : "CAST(NULL AS " + DuckSql.type(c.type()) + ")");
    }
    return String.join(", ", exprs);
  }

  /** SQL condition true for staged upserts that omit a non-key column, or null if none can. */
  private static String partialUpsertCondition(Schema schema) {
    List<String> omitted = new ArrayList<>();
    List<Types.NestedField> columns = schema.columns();
    for (int i = 0; i < columns.size(); i++) {
      if (!schema.identifierFieldIds().contains(columns.get(i).fieldId())) {
        omitted.add("NOT " + WalStaging.presentFlag(i));
      }
    }
    return omitted.isEmpty() ? null : "__op = 1 AND (" + String.join(" OR ", omitted) + ")";
  }
}

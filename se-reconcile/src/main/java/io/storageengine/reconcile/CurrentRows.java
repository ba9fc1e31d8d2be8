package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the current rows of a set of Iceberg data files with DuckDB, for the entity materializer
 * (the rows of a batch's keys) and the compactor (every row of the rewritten files):
 *
 * <ul>
 *   <li>a file's columns are read by the names it was written with, found by field id in its
 *       footer, one {@code read_parquet} per distinct file schema (so renamed columns read right;
 *       DuckDB's field-id schema map would too, but it disables the join filter pushdown that
 *       makes key lookups fast);</li>
 *   <li>the temp table {@value #FILES} lists every file's local path ({@code filename}) with its
 *       {@code first_row_id} and {@code data_seq}, so rows without explicit v3 lineage values
 *       inherit them ({@link #rowId}, {@link #lastUpdatedSequence});</li>
 *   <li>a row is identified by its file's local path and its position in the file; positions
 *       that the files' deletion vectors (or other position deletes) mark deleted are not
 *       current, and {@link #removeDeleted} / {@link #removeAllDeleted} drop them.</li>
 * </ul>
 *
 * <p>One instance per DuckDB session and set of files; it caches each file's delete index, which
 * a new deletion vector for the file is merged with ({@link #deletes}).
 *
 * <p>Internal to se-reconcile; public only for its {@code maintenance} package.
 */
public final class CurrentRows {
  private static final Logger LOG = LoggerFactory.getLogger(CurrentRows.class);

  /** The temp table of the files: {@code filename}, {@code first_row_id}, {@code data_seq}. */
  public static final String FILES = "current_files";
  /** Joins the file alias {@code r} to {@value #FILES} as {@code f}. */
  public static final String JOIN_FILES = " JOIN " + FILES + " f ON r.filename = f.filename";

  private final DuckSession duck;
  private final Table table;
  private final Map<String, FileScanTask> byLocalPath = new LinkedHashMap<>();
  /** Quoted local paths per file schema (its struct's text), and the schemas. */
  private final Map<String, List<String>> groups = new LinkedHashMap<>();
  private final Map<String, Schema> groupSchemas = new HashMap<>();
  private final Map<String, PositionDeleteIndex> deletes = new HashMap<>();
  private BaseDeleteLoader deleteLoader;

  /** Makes local copies of the files readable, reads their footers and fills {@value #FILES}. */
  public CurrentRows(DuckSession duck, Table table, Collection<FileScanTask> tasks) {
    this.duck = duck;
    this.table = table;
    for (FileScanTask task : tasks) {
      byLocalPath.put(duck.readable(table, task.file().location()), task);
    }
    if (byLocalPath.isEmpty()) {
      return;
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE " + FILES + " (filename VARCHAR, first_row_id BIGINT, data_seq BIGINT)");
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", FILES)) {
      for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
        DataFile file = e.getValue().file();
        appender.beginRow().append(e.getKey()).append(file.firstRowId()).append(file.dataSequenceNumber()).endRow();
      }
    } catch (SQLException e) {
      throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
      Schema fileSchema = duck.fileSchema(e.getValue().file().location(), e.getKey());
      String group = fileSchema.asStruct().toString();
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(SqlQuoting.literal(e.getKey()));
      groupSchemas.put(group, fileSchema);
    }
  }

  /** The files' scan tasks by the local path DuckDB reads them at (and rows name them by). */
  public Map<String, FileScanTask> byLocalPath() {
    return byLocalPath;
  }

  /**
   * Once per file schema: {@code INSERT INTO target SELECT <select> FROM read_parquet(files,
   * filename = true, file_row_number = true) r <joins>}, where {@code select} and {@code joins}
   * are given the file schema (use {@link #column} for the file's columns).
   */
  public void insertInto(String target, Function<Schema, String> select, Function<Schema, String> joins) {
    for (Map.Entry<String, List<String>> group : groups.entrySet()) {
      Schema fileSchema = groupSchemas.get(group.getKey());
      duck.execute("INSERT INTO " + target + " SELECT " + select.apply(fileSchema)
          + " FROM read_parquet([" + String.join(", ", group.getValue())
          + "], filename = true, file_row_number = true) r" + joins.apply(fileSchema));
    }
  }

  /** Column {@code c} as read from alias {@code r} of a file written with {@code fileSchema}. */
  public static String column(Schema fileSchema, Types.NestedField c) {
    return DuckSql.fileColumn(fileSchema, c, "r");
  }

  /** The row's v3 {@code _row_id}: written explicitly, else inherited (needs {@link #JOIN_FILES}). */
  public static String rowId(Schema fileSchema) {
    return "coalesce(" + column(fileSchema, MetadataColumns.ROW_ID) + ", f.first_row_id + r.file_row_number)";
  }

  /** The row's v3 {@code _last_updated_sequence_number}: written, else inherited (needs {@link #JOIN_FILES}). */
  public static String lastUpdatedSequence(Schema fileSchema) {
    return "coalesce(" + column(fileSchema, MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER) + ", f.data_seq)";
  }

  /**
   * Drops from {@code target} (local path column {@code __file}, position {@code __pos}) the rows
   * deleted by their file's position deletes, looking up just the positions {@code target} holds:
   * for a selective read. The deleted rows are found in Java and deleted by their DuckDB
   * {@code rowid} (handed over as one Arrow vector, a semi join on it), not by file and position.
   */
  public void removeDeleted(String target) {
    List<String> withDeletes = new ArrayList<>();
    for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
      if (!e.getValue().deletes().isEmpty()) {
        withDeletes.add(SqlQuoting.literal(e.getKey()));
      }
    }
    if (withDeletes.isEmpty()) {
      return;
    }
    Map<String, long[][]> matched = duck.listsByFile("SELECT __file, __pos, rowid AS __r FROM " + target
        + " WHERE __file IN (" + String.join(", ", withDeletes) + ")", "__file", "__pos", "__r");
    long started = System.nanoTime();
    long[] dead = new long[1024];
    int n = 0;
    long looked = 0;
    for (Map.Entry<String, long[][]> e : matched.entrySet()) {
      FileScanTask task = byLocalPath.get(e.getKey());
      if (task.deletes().isEmpty()) {
        continue;
      }
      PositionDeleteIndex index = deletes(task);
      long[] positions = e.getValue()[0];
      long[] rowIds = e.getValue()[1];
      looked += positions.length;
      for (int i = 0; i < positions.length; i++) {
        if (index.isDeleted(positions[i])) {
          if (n == dead.length) {
            dead = Arrays.copyOf(dead, 2 * n);
          }
          dead[n++] = rowIds[i];
        }
      }
    }
    if (LOG.isTraceEnabled()) {
      LOG.trace("{} files with deletes, {} deleted rows of {} matched found in {} ms", matched.size(), n, looked,
          (System.nanoTime() - started) / 1_000_000);
    }
    if (n > 0) {
      duck.withLongs("__se_dead_rows", "r", dead, n,
          () -> duck.execute("DELETE FROM " + target + " WHERE rowid IN (SELECT r FROM __se_dead_rows)"));
    }
  }

  /**
   * Drops from {@code target} (as {@link #removeDeleted}) the rows deleted by their file's
   * position deletes, listing every deleted position: for a read of whole files.
   */
  public void removeAllDeleted(String target) {
    duck.execute("CREATE OR REPLACE TEMP TABLE dead (f VARCHAR, p BIGINT)");
    long dead = 0;
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", "dead")) {
      for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
        FileScanTask task = e.getValue();
        if (task.deletes().isEmpty()) {
          continue;
        }
        long[] count = {0};
        deletes(task).forEach(pos -> {
          try {
            appender.beginRow().append(e.getKey()).append(pos).endRow();
            count[0]++;
          } catch (SQLException ex) {
            throw SeException.internal("DuckDB append failed: " + ex.getMessage(), ex);
          }
        });
        dead += count[0];
      }
    } catch (SQLException e) {
      throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    if (dead > 0) {
      duck.execute("DELETE FROM " + target + " USING dead WHERE " + target + ".__file = dead.f AND "
          + target + ".__pos = dead.p");
    }
  }

  /** The positions deleted in {@code task}'s file by its delete files (loaded once). */
  public PositionDeleteIndex deletes(FileScanTask task) {
    if (deleteLoader == null) {
      deleteLoader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location(), f.fileSizeInBytes()));
    }
    return deletes.computeIfAbsent(task.file().location(),
        location -> deleteLoader.loadPositionDeletes(task.deletes(), location));
  }
}

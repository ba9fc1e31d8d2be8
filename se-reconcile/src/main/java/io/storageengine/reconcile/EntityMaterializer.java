package io.storageengine.reconcile;

import io.storageengine.catalog.TableSettings;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;

/**
 * Entity tables: folds the staged WAL operations per primary key with the current rows of those
 * keys, following the normative semantics (ARCHITECTURE.md 5):
 *
 * <ul>
 *   <li>per key, operations apply in (version, arrival) order; the current row counts as the
 *       first arrival, so an operation of equal version replaces it;</li>
 *   <li>an operation whose version is below the current row's or the key's tombstone's is
 *       ignored; since surviving operations are applied in ascending version, that is the only
 *       place a version comparison is needed;</li>
 *   <li>a column's final value is the one from the last applied operation that carried it, after
 *       the key's last delete; with no delete, the current row's value survives omitted columns;
 *       after a delete, omitted columns are NULL;</li>
 *   <li>a key whose last applied operation is a delete ends without a row and with a tombstone.</li>
 * </ul>
 *
 * <p>Current rows are read with DuckDB from the data files whose key bounds overlap the batch
 * (Iceberg scan planning prunes by column bounds), minus positions already deleted by deletion
 * vectors. Replaced and deleted rows become positions in new deletion vectors (a file's previous
 * vector is merged in); winning rows become new data files. A row that replaces an existing one
 * keeps its v3 {@code _row_id}, written explicitly into the new file.
 */
final class EntityMaterializer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EntityMaterializer.class);
  private static final String SEP = "chr(31)";
  /** Above this many keys a pass reads every tombstone bucket instead of the keys' buckets. */
  private static final long KEYS_FOR_BUCKETED_TOMBSTONE_READ = 20_000;

  private final DuckSession duck;
  private final Table table;
  private final Snapshot base;
  private final long highWaterMark;
  private final ReconcileOptions options;
  private final TombstoneStore tombstones;
  private final Schema schema;
  private final List<Types.NestedField> keys = new ArrayList<>();
  private final Types.NestedField version;

  EntityMaterializer(DuckSession duck, Table table, Snapshot base, long highWaterMark,
      ReconcileOptions options, TombstoneStore tombstones) {
    this.duck = duck;
    this.table = table;
    this.base = base;
    this.highWaterMark = highWaterMark;
    this.options = options;
    this.tombstones = tombstones;
    this.schema = table.schema();
    TableSettings settings = TableSettings.of(table);
    if (!settings.entity()) {
      throw SeException.invalid("table %s is not an entity table", table.name());
    }
    keys.addAll(settings.primaryKey());
    this.version = settings.versionColumn().orElse(null);
  }

  TableChanges materialize(long fromSeq, long toSeq) {
    DataFileWriter writer = new DataFileWriter(duck, table, options);
    List<String> written = new ArrayList<>();
    try {
      TableChanges changes = run(writer, written, fromSeq, toSeq);
      return changes;
    } catch (RuntimeException e) {
      written.addAll(writer.writtenLocations());
      Cleanup.deleteQuietly(table.io(), written);
      throw e;
    }
  }

  private TableChanges run(DataFileWriter writer, List<String> written, long fromSeq, long toSeq) {
    String keyList = keyList("");
    duck.execute("CREATE OR REPLACE TEMP TABLE batch_keys AS SELECT DISTINCT " + keyList + " FROM "
        + WalStaging.TABLE);
    long t0 = System.nanoTime();
    Expression keyFilter = keyRangeFilter();
    Map<String, FileScanTask> candidates = loadExistingRows(keyFilter);
    long t1 = System.nanoTime();
    loadTombstones();
    long tTombs = System.nanoTime();
    fold();
    long t2 = System.nanoTime();

    duck.execute("CREATE OR REPLACE TEMP TABLE new_rows AS SELECT " + columnList()
        + ", CASE WHEN __ld IS NULL THEN __rid END AS " + SqlQuoting.identifier(MetadataColumns.ROW_ID.name())
        + " FROM folded WHERE __max_ord > 0 AND __last_op = 1");
    List<DataFile> dataFiles = writer.write("new_rows", true, keyList);
    long rowsWritten = dataFiles.stream().mapToLong(DataFile::recordCount).sum();
    long tFiles = System.nanoTime();

    DeleteWriteResult dvs = writeDeletionVectors(candidates);
    long tVectors = System.nanoTime();
    for (DeleteFile dv : dvs.deleteFiles()) {
      written.add(dv.location());
    }
    long removed = dvs.deleteFiles().isEmpty() ? 0
        : duck.queryLong("SELECT count(*) FROM folded WHERE __max_ord > 0 AND __file IS NOT NULL");
    writeTombstones(fromSeq, toSeq);
    long t3 = System.nanoTime();
    LOG.debug("{}: current rows of {} candidate files in {} ms, tombstones read in {} ms, fold in {} ms, "
        + "data files in {} ms, deletion vectors in {} ms, tombstones written in {} ms", table.name(),
        candidates.size(), ms(t1 - t0), ms(tTombs - t1), ms(t2 - tTombs), ms(tFiles - t2), ms(tVectors - tFiles),
        ms(t3 - tVectors));

    Set<String> referenced = new HashSet<>();
    dvs.referencedDataFiles().forEach(cs -> referenced.add(cs.toString()));
    List<String> all = new ArrayList<>(writer.writtenLocations());
    all.addAll(written);
    return new TableChanges(dataFiles, dvs.deleteFiles(), dvs.rewrittenDeleteFiles(), referenced,
        keyFilter, rowsWritten, removed, all);
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }

  private String keyList(String alias) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField k : keys) {
      names.add(alias + SqlQuoting.identifier(k.name()));
    }
    return String.join(", ", names);
  }

  private String keyJoin(String left, String right) {
    List<String> terms = new ArrayList<>();
    for (Types.NestedField k : keys) {
      terms.add(left + "." + SqlQuoting.identifier(k.name()) + " = " + right + "." + SqlQuoting.identifier(k.name()));
    }
    return String.join(" AND ", terms);
  }

  /** Canonical key text: the key columns as VARCHAR joined by U+001F. */
  private String keyText(String alias) {
    List<String> parts = new ArrayList<>();
    for (Types.NestedField k : keys) {
      parts.add("CAST(" + alias + SqlQuoting.identifier(k.name()) + " AS VARCHAR)");
    }
    return parts.size() == 1 ? parts.get(0) : "concat_ws(" + SEP + ", " + String.join(", ", parts) + ")";
  }

  private String columnList() {
    List<String> names = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      names.add(SqlQuoting.identifier(c.name()));
    }
    return String.join(", ", names);
  }

  private String versionExpr(String alias) {
    return version == null ? "CAST(0 AS BIGINT)" : alias + SqlQuoting.identifier(version.name());
  }

  private String versionType() {
    return version == null ? "BIGINT" : DuckSql.type(version.type());
  }

  /** Bounds of the batch's keys per key column: prunes data files by their column bounds. */
  private Expression keyRangeFilter() {
    Expression filter = Expressions.alwaysTrue();
    for (Types.NestedField k : keys) {
      String col = SqlQuoting.identifier(k.name());
      String sql = switch (k.type().typeId()) {
        case INTEGER, LONG -> "SELECT CAST(min(" + col + ") AS VARCHAR), CAST(max(" + col + ") AS VARCHAR) FROM batch_keys";
        case DATE -> "SELECT CAST(min(" + col + ") - DATE '1970-01-01' AS VARCHAR), CAST(max(" + col
            + ") - DATE '1970-01-01' AS VARCHAR) FROM batch_keys";
        case TIMESTAMP -> "SELECT CAST(epoch_us(min(" + col + ")) AS VARCHAR), CAST(epoch_us(max(" + col
            + ")) AS VARCHAR) FROM batch_keys";
        case STRING, UUID, DECIMAL -> "SELECT CAST(min(" + col + ") AS VARCHAR), CAST(max(" + col
            + ") AS VARCHAR) FROM batch_keys";
        default -> null;
      };
      if (sql == null) {
        continue;
      }
      String[] bounds = new String[2];
      duck.query(sql, rs -> {
        bounds[0] = rs.getString(1);
        bounds[1] = rs.getString(2);
      });
      if (bounds[0] == null) {
        continue;
      }
      Object lo = boundValue(k.type(), bounds[0]);
      Object hi = boundValue(k.type(), bounds[1]);
      filter = Expressions.and(filter, Expressions.and(
          Expressions.greaterThanOrEqual(k.name(), lo), Expressions.lessThanOrEqual(k.name(), hi)));
    }
    return filter;
  }

  private static Object boundValue(Type type, String text) {
    return switch (type.typeId()) {
      case INTEGER, DATE -> Integer.parseInt(text);
      case LONG, TIMESTAMP -> Long.parseLong(text);
      case UUID -> UUID.fromString(text);
      case DECIMAL -> new BigDecimal(text);
      default -> text;
    };
  }

  /**
   * Loads into {@code existing} the live current rows of the batch's keys, with their file,
   * position and row id; returns the candidate scan tasks by local file path.
   */
  private Map<String, FileScanTask> loadExistingRows(Expression keyFilter) {
    Map<String, FileScanTask> byLocalPath = new LinkedHashMap<>();
    if (base != null) {
      try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(base.snapshotId())
          .filter(keyFilter).ignoreResiduals().planFiles()) {
        for (FileScanTask task : tasks) {
          byLocalPath.put(duck.readable(table, task.file().location()), task);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    List<String> defs = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      defs.add(SqlQuoting.identifier(c.name()) + " " + DuckSql.type(c.type()));
    }
    defs.add("__file VARCHAR");
    defs.add("__pos BIGINT");
    defs.add("__rid BIGINT");
    duck.execute("CREATE OR REPLACE TEMP TABLE existing (" + String.join(", ", defs) + ")");
    if (byLocalPath.isEmpty()) {
      return byLocalPath;
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE cand_files (filename VARCHAR, first_row_id BIGINT)");
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", "cand_files")) {
      for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
        Long first = e.getValue().file().firstRowId();
        appender.beginRow().append(e.getKey()).append(first).endRow();
      }
    } catch (SQLException e) {
      throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    // Files are read by the column names they were written with, found by field id in their
    // footers: DuckDB's field-id schema map is correct too, but it disables the join filter
    // pushdown that makes this lookup fast. Files are grouped by those names.
    List<Types.NestedField> readColumns = new ArrayList<>(schema.columns());
    readColumns.add(MetadataColumns.ROW_ID);
    Map<String, List<String>> groups = new LinkedHashMap<>();
    Map<String, Schema> groupSchemas = new HashMap<>();
    for (String path : byLocalPath.keySet()) {
      Schema fileSchema = duck.fileSchema(byLocalPath.get(path).file().location(), path);
      String group = fileSchema.asStruct().toString();
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(SqlQuoting.literal(path));
      groupSchemas.put(group, fileSchema);
    }
    // Narrow read: key, version and row id of every current row of the batch's keys. Other
    // columns are only needed when a partial upsert keeps them, so they are read (below) just
    // for the keys that have one.
    List<Types.NestedField> narrow = new ArrayList<>(keys);
    if (version != null && !schema.identifierFieldIds().contains(version.fieldId())) {
      narrow.add(version);
    }
    for (Map.Entry<String, List<String>> group : groups.entrySet()) {
      Schema fileSchema = groupSchemas.get(group.getKey());
      duck.execute("INSERT INTO existing SELECT " + existingColumns(fileSchema, narrow)
          + ", r.filename, r.file_row_number, "
          + "coalesce(" + fileColumn(fileSchema, MetadataColumns.ROW_ID) + ", f.first_row_id + r.file_row_number)"
          + " FROM read_parquet([" + String.join(", ", group.getValue())
          + "], filename = true, file_row_number = true) r"
          + " JOIN batch_keys b ON " + fileKeyJoin(fileSchema)
          + " JOIN cand_files f ON r.filename = f.filename");
    }
    String partial = partialUpsertCondition();
    if (partial != null && duck.queryLong("SELECT count(*) FROM " + WalStaging.TABLE + " WHERE " + partial) > 0) {
      duck.execute("CREATE OR REPLACE TEMP TABLE partial_keys AS SELECT DISTINCT " + keyList("") + " FROM "
          + WalStaging.TABLE + " WHERE " + partial);
      duck.execute("CREATE OR REPLACE TEMP TABLE existing_full AS SELECT * FROM existing LIMIT 0");
      for (Map.Entry<String, List<String>> group : groups.entrySet()) {
        Schema fileSchema = groupSchemas.get(group.getKey());
        duck.execute("INSERT INTO existing_full SELECT " + existingColumns(fileSchema, readColumns)
            + ", r.filename, r.file_row_number, NULL"
            + " FROM read_parquet([" + String.join(", ", group.getValue())
            + "], filename = true, file_row_number = true) r"
            + " JOIN partial_keys b ON " + fileKeyJoin(fileSchema));
      }
      List<String> sets = new ArrayList<>();
      for (Types.NestedField c : schema.columns()) {
        if (!narrow.contains(c)) {
          sets.add(SqlQuoting.identifier(c.name()) + " = x." + SqlQuoting.identifier(c.name()));
        }
      }
      if (!sets.isEmpty()) {
        duck.execute("UPDATE existing SET " + String.join(", ", sets) + " FROM existing_full x"
            + " WHERE existing.__file = x.__file AND existing.__pos = x.__pos");
      }
    }
    removeDeletedPositions(byLocalPath);
    return byLocalPath;
  }

  /**
   * The current columns as read from files of {@code fileSchema}; columns not in {@code read}
   * (or absent from the file) are NULL.
   */
  private String existingColumns(Schema fileSchema, List<Types.NestedField> read) {
    List<String> exprs = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      boolean wanted = read.stream().anyMatch(r -> r.fieldId() == c.fieldId());
      exprs.add(wanted ? fileColumn(fileSchema, c) : "CAST(NULL AS " + DuckSql.type(c.type()) + ")");
    }
    return String.join(", ", exprs);
  }

  private static String fileColumn(Schema fileSchema, Types.NestedField c) {
    return DuckSql.fileColumn(fileSchema, c, "r");
  }

  private String fileKeyJoin(Schema fileSchema) {
    List<String> terms = new ArrayList<>();
    for (Types.NestedField k : keys) {
      terms.add(fileColumn(fileSchema, k) + " = b." + SqlQuoting.identifier(k.name()));
    }
    return String.join(" AND ", terms);
  }

  /** SQL condition true for staged upserts that omit a non-key column, or null if none can. */
  private String partialUpsertCondition() {
    List<String> omitted = new ArrayList<>();
    List<Types.NestedField> columns = schema.columns();
    for (int i = 0; i < columns.size(); i++) {
      if (!schema.identifierFieldIds().contains(columns.get(i).fieldId())) {
        omitted.add("NOT " + WalStaging.presentFlag(i));
      }
    }
    return omitted.isEmpty() ? null : "__op = 1 AND (" + String.join(" OR ", omitted) + ")";
  }

  private String columnList(String alias) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      names.add(alias + SqlQuoting.identifier(c.name()));
    }
    return String.join(", ", names);
  }

  private final Map<String, PositionDeleteIndex> previousDeletes = new HashMap<>();
  private BaseDeleteLoader deleteLoader;

  private BaseDeleteLoader deleteLoader() {
    if (deleteLoader == null) {
      deleteLoader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location(), f.fileSizeInBytes()));
    }
    return deleteLoader;
  }

  /** Drops from {@code existing} the rows already deleted by the files' deletion vectors. */
  private void removeDeletedPositions(Map<String, FileScanTask> byLocalPath) {
    duck.execute("CREATE OR REPLACE TEMP TABLE dead (f VARCHAR, p BIGINT)");
    List<String> withDeletes = new ArrayList<>();
    for (Map.Entry<String, FileScanTask> e : byLocalPath.entrySet()) {
      if (!e.getValue().deletes().isEmpty()) {
        withDeletes.add(SqlQuoting.literal(e.getKey()));
      }
    }
    if (withDeletes.isEmpty()) {
      return;
    }
    Map<String, List<Long>> matched = new HashMap<>();
    duck.query("SELECT __file, __pos FROM existing WHERE __file IN (" + String.join(", ", withDeletes) + ")",
        rs -> matched.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2)));
    int dead = 0;
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", "dead")) {
      for (Map.Entry<String, List<Long>> e : matched.entrySet()) {
        FileScanTask task = byLocalPath.get(e.getKey());
        if (task.deletes().isEmpty()) {
          continue;
        }
        PositionDeleteIndex index = previousIndex(task);
        for (long pos : e.getValue()) {
          if (index.isDeleted(pos)) {
            appender.beginRow().append(e.getKey()).append(pos).endRow();
            dead++;
          }
        }
      }
    } catch (SQLException e) {
      throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    if (dead > 0) {
      duck.execute("DELETE FROM existing USING dead WHERE existing.__file = dead.f AND existing.__pos = dead.p");
    }
  }

  private PositionDeleteIndex previousIndex(FileScanTask task) {
    String location = task.file().location();
    return previousDeletes.computeIfAbsent(location,
        l -> deleteLoader().loadPositionDeletes(task.deletes(), l));
  }

  /** Loads into {@code tombs} the committed, unexpired tombstones of the batch's keys. */
  private void loadTombstones() {
    duck.execute("CREATE OR REPLACE TEMP TABLE tomb_text (__k VARCHAR, __v VARCHAR)");
    if (version != null && !tombstones.isEmpty()) {
      Map<String, TombstoneStore.Tombstone> found;
      if (duck.queryLong("SELECT count(*) FROM batch_keys") <= KEYS_FOR_BUCKETED_TOMBSTONE_READ) {
        List<String> keyTexts = new ArrayList<>();
        duck.query("SELECT " + keyText("") + " FROM batch_keys", rs -> keyTexts.add(rs.getString(1)));
        found = tombstones.load(keyTexts, highWaterMark, options.clock().instant(), retention());
      } else {
        // The join below keeps only the batch's keys.
        found = tombstones.loadAll(highWaterMark, options.clock().instant(), retention());
      }
      try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", "tomb_text")) {
        for (TombstoneStore.Tombstone t : found.values()) {
          appender.beginRow().append(t.key()).append(t.version()).endRow();
        }
      } catch (SQLException e) {
        throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
      }
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE tombs AS SELECT " + keyList("b.") + ", CAST(t.__v AS "
        + versionType() + ") AS __tv FROM tomb_text t JOIN batch_keys b ON t.__k = " + keyText("b."));
  }

  Duration retention() {
    return TombstoneStore.retention(table, options.defaultTombstoneRetention());
  }

  /**
   * Builds {@code folded}: one row per key that has a surviving operation, with its final state.
   * Keys with a single surviving operation (bulk inserts, plain updates) take a join-only path;
   * keys with several go through the ordered fold.
   */
  private void fold() {
    List<Types.NestedField> columns = schema.columns();
    Set<Integer> keyIds = schema.identifierFieldIds();
    String keyCols = keyList("");
    String survives = "";
    String init = "";
    if (version != null) {
      duck.execute("CREATE OR REPLACE TEMP TABLE init AS SELECT " + keyCols + ", max(__v) AS __init FROM ("
          + "SELECT " + keyCols + ", " + versionExpr("") + " AS __v FROM existing UNION ALL SELECT "
          + keyCols + ", __tv FROM tombs) GROUP BY " + keyCols);
      init = " LEFT JOIN init i ON " + keyJoin("o", "i");
      survives = " WHERE i.__init IS NULL OR " + versionExpr("o.") + " >= i.__init";
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE live_ops AS SELECT o.*, o.rowid + 1 AS __ord, "
        + versionExpr("o.") + " AS __ver FROM " + WalStaging.TABLE + " o" + init + survives);
    duck.execute("CREATE OR REPLACE TEMP TABLE op_counts AS SELECT " + keyCols + ", count(*) AS __n FROM live_ops"
        + " GROUP BY " + keyCols);

    // Single operation per key: the operation over the current row, if any.
    List<String> single = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField c = columns.get(i);
      if (keyIds.contains(c.fieldId())) {
        continue;
      }
      String col = SqlQuoting.identifier(c.name());
      single.add("CASE WHEN o." + WalStaging.presentFlag(i) + " THEN o." + col + " ELSE e." + col + " END AS " + col);
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE folded AS SELECT " + keyList("o.")
        + ", o.__op AS __last_op, o.__seq AS __last_seq, o.__ver AS __last_ver, o.__ord AS __max_ord, "
        + "CASE WHEN o.__op = 2 THEN o.__ord END AS __ld, e.__file, e.__pos, e.__rid"
        + (single.isEmpty() ? "" : ", " + String.join(", ", single))
        + " FROM live_ops o JOIN op_counts n ON " + keyJoin("o", "n")
        + " LEFT JOIN existing e ON " + keyJoin("o", "e") + " WHERE n.__n = 1");

    if (duck.queryLong("SELECT count(*) FROM op_counts WHERE __n > 1") == 0) {
      return;
    }
    List<String> existingFlags = new ArrayList<>();
    List<String> opFlags = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      existingFlags.add("TRUE AS " + WalStaging.presentFlag(i));
      opFlags.add("o." + WalStaging.presentFlag(i));
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE multi_keys AS SELECT " + keyCols + " FROM op_counts WHERE __n > 1");
    duck.execute("CREATE OR REPLACE TEMP TABLE events AS "
        + "SELECT " + columnList("e.") + ", " + String.join(", ", existingFlags) + ", CAST(1 AS TINYINT) AS __op, "
        + "CAST(NULL AS BIGINT) AS __seq, CAST(0 AS BIGINT) AS __ord, e.__file, e.__pos, e.__rid, "
        + versionExpr("e.") + " AS __ver FROM existing e JOIN multi_keys m ON " + keyJoin("e", "m")
        + " UNION ALL SELECT " + columnList("o.") + ", " + String.join(", ", opFlags) + ", o.__op, o.__seq, "
        + "o.__ord, CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), o.__ver"
        + " FROM live_ops o JOIN multi_keys m ON " + keyJoin("o", "m"));

    List<String> aggregates = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField c = columns.get(i);
      if (keyIds.contains(c.fieldId())) {
        continue;
      }
      aggregates.add("arg_max_null(" + SqlQuoting.identifier(c.name()) + ", CASE WHEN " + WalStaging.presentFlag(i)
          + " AND __rk > coalesce(__ld, 0) THEN __rk END) AS " + SqlQuoting.identifier(c.name()));
    }
    duck.execute("INSERT INTO folded "
        + "WITH r AS (SELECT *, row_number() OVER (PARTITION BY " + keyCols
        + " ORDER BY __ver ASC NULLS FIRST, __ord) AS __rk FROM events), "
        + "d AS (SELECT *, max(CASE WHEN __op = 2 THEN __rk END) OVER (PARTITION BY " + keyCols + ") AS __ld FROM r) "
        + "SELECT " + keyCols + ", arg_max(__op, __rk) AS __last_op, arg_max(__seq, __rk) AS __last_seq, "
        + "arg_max_null(__ver, __rk) AS __last_ver, max(__ord) AS __max_ord, max(__ld) AS __ld, "
        + "max(__file) AS __file, max(__pos) AS __pos, max(__rid) AS __rid"
        + (aggregates.isEmpty() ? "" : ", " + String.join(", ", aggregates))
        + " FROM d GROUP BY " + keyCols);
  }

  /** One deletion vector per touched data file, merged with the file's previous vector. */
  private DeleteWriteResult writeDeletionVectors(Map<String, FileScanTask> candidates) {
    Map<String, List<Long>> positions = new LinkedHashMap<>();
    duck.query("SELECT __file, __pos FROM folded WHERE __max_ord > 0 AND __file IS NOT NULL ORDER BY __file, __pos",
        rs -> positions.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2)));
    if (positions.isEmpty()) {
      return new DeleteWriteResult(List.of());
    }
    Map<String, FileScanTask> byLocation = new HashMap<>();
    for (FileScanTask task : candidates.values()) {
      byLocation.put(task.file().location(), task);
    }
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, System.nanoTime())
        .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, location -> {
      FileScanTask task = byLocation.get(location);
      return task == null || task.deletes().isEmpty() ? null : previousIndex(task);
    });
    try (writer) {
      for (Map.Entry<String, List<Long>> e : positions.entrySet()) {
        FileScanTask task = candidates.get(e.getKey());
        DataFile file = task.file();
        for (long pos : e.getValue()) {
          writer.delete(file.location(), pos, table.specs().get(file.specId()), file.partition());
        }
      }
    } catch (IOException e) {
      throw SeException.unavailable("cannot write deletion vectors for " + table.name() + ": " + e.getMessage(), e);
    }
    return writer.result();
  }

  private void writeTombstones(long fromSeq, long toSeq) {
    if (version == null) {
      return;
    }
    List<TombstoneStore.Tombstone> result = new ArrayList<>();
    long now = options.clock().millis();
    duck.query("SELECT " + keyText("") + ", CAST(__last_ver AS VARCHAR), __last_seq FROM folded "
        + "WHERE __max_ord > 0 AND __last_op = 2",
        rs -> result.add(new TombstoneStore.Tombstone(rs.getString(1), rs.getString(2), rs.getLong(3), now)));
    if (!result.isEmpty()) {
      tombstones.write(fromSeq, toSeq, result);
    }
  }
}

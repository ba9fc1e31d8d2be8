package io.storageengine.query;

import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.ParquetFooters;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Builds the DuckDB view of one planned table snapshot on a query's connection: a view
 * {@code schema.table} (as the statement names it, see {@link TableName}) whose rows are exactly
 * the snapshot's live rows and whose columns are the snapshot schema's top-level columns, with
 * their names and DuckDB types ({@link IcebergTypes#duckdbType}), in order.
 *
 * <p>Files are read one of two ways. <b>By name</b>, for a table that never changed its schema:
 * DuckDB then knows row counts and column statistics; whether DuckDB sees the Iceberg columns
 * that way is checked once per snapshot plan (the first query compares the view's columns with
 * the schema) and remembered in {@link SnapshotPlanCache.Plan#readsByName}, and per snapshot,
 * schema and list of files read, so the plans of other pruning filters that read the same files
 * (every literal of a point query on a small table) reuse the answer. <b>By field id</b>
 * otherwise, or when that check failed: right for files of any schema version (renamed, added,
 * dropped, reordered columns; struct columns read per file layout, see
 * {@link FieldIdProjection}). Deleted positions are removed by a bitmap per file with deletes
 * ({@link DeletionMasks}, a table of {@link QueryDatabasePool#META_SCHEMA}); files without
 * deletes are read as they are. A snapshot without files gives an empty view with the schema's
 * columns.
 */
final class TableViews {
  private static final String META_SCHEMA = QueryDatabasePool.META_SCHEMA;

  /** Answers of the by-name check remembered per snapshot, schema and files read ({@link #byNameKey}). */
  static final int MAX_REMEMBERED_CHECKS = 4_096;

  private final ParquetFooters footers;
  private final Map<String, Boolean> checkedByName = new LruMap<>(MAX_REMEMBERED_CHECKS);
  /** By-name checks run so far (for tests). */
  private final AtomicLong byNameChecks = new AtomicLong();

  /** @param footers reads the schema a data file was written with (by field id, per file layout) */
  TableViews(ParquetFooters footers) {
    this.footers = footers;
  }

  /**
   * The directories the views of {@code tables} read from, each ending in {@code /}: the prefixes
   * of the very paths handed to DuckDB, so DuckDB's check of allowed directories sees the same
   * strings.
   */
  static Set<String> directories(Iterable<PlannedTable> tables) {
    Set<String> directories = new TreeSet<>();
    for (PlannedTable table : tables) {
      for (PlannedFile file : table.files()) {
        String path = file.localPath();
        int slash = path.lastIndexOf('/');
        directories.add(slash > 0 ? path.substring(0, slash + 1)
            : Path.of(path).toAbsolutePath().getParent().toString() + "/");
      }
    }
    return directories;
  }

  /**
   * The views of one query, created on its connection: their statements are run together
   * ({@link #run}), in order and each as DuckDB runs it alone, in one call (a query over five
   * tables ran ten statements one by one, about 8 ms of its planning). A statement that fails
   * fails the call with its {@link SQLException}, naming what failed as it would alone.
   */
  static final class Batch {
    private final Connection connection;
    private final Set<String> schemas = new java.util.HashSet<>();
    private final List<String> pending = new ArrayList<>();

    Batch(Connection connection) {
      this.connection = connection;
    }

    /** Creates {@code schema} (quoted) with the next statements, unless this batch made it before. */
    private void schema(String schema) {
      if (schemas.add(schema)) {
        pending.add("CREATE SCHEMA IF NOT EXISTS " + schema);
      }
    }

    private void add(String statement) {
      pending.add(statement);
    }

    /** Runs the statements added since the last run. */
    void run() throws SQLException {
      if (pending.isEmpty()) {
        return;
      }
      String statements = String.join(";\n", pending);
      pending.clear();
      execute(connection, statements);
    }
  }

  /**
   * Creates the view of {@code table} named {@code name} (and its schema, if new) on
   * {@code connection}. {@code number} is unique among the views of the query (it names the
   * view's table of deleted positions). Creating a view binds it: a file gone since planning
   * fails here with an {@link SQLException} (see {@link PreparedQuery#translate}); a footer that
   * cannot be read is UNAVAILABLE, or {@link SnapshotExpiredException} when its file is gone.
   */
  void create(Connection connection, TableName name, PlannedTable table, int number) throws SQLException {
    Batch batch = new Batch(connection);
    create(batch, name, table, number, false);
    batch.run();
  }

  /**
   * Adds the view of {@code table} to {@code batch} as {@link #create(Connection, TableName,
   * PlannedTable, int)} creates it, with the row lineage columns after the schema's when
   * {@code lineage} (see {@link RowLineage}; the files are then read by field id). The view exists
   * once the batch has run; its table of deleted positions is made at once, and the first view
   * of a snapshot plan runs the batch to check how DuckDB reads its files.
   */
  void create(Batch batch, TableName name, PlannedTable table, int number, boolean lineage)
      throws SQLException {
    Connection connection = batch.connection;
    Schema schema = table.schema();
    String schemaName = SqlQuoting.identifier(name.schema());
    String viewName = schemaName + "." + SqlQuoting.identifier(name.table());
    batch.schema(schemaName);
    List<PlannedFile> clean = new ArrayList<>();
    List<PlannedFile> withDeletes = new ArrayList<>();
    for (PlannedFile file : table.files()) {
      (file.deletedPositions().length == 0 ? clean : withDeletes).add(file);
    }
    DeletionMasks deletes = withDeletes.isEmpty() ? null : DeletionMasks.create(connection, number);
    SnapshotPlanCache.Plan plan = table.plan();
    boolean byName = !lineage && plan != null && !table.evolved() && !Boolean.FALSE.equals(plan.readsByName);
    String key = byName && plan.readsByName == null ? byNameKey(table) : null;
    if (key != null) {
      plan.readsByName = checkedByName(key);
      byName = !Boolean.FALSE.equals(plan.readsByName);
    }
    if (byName && plan.readsByName == null) {
      byNameChecks.incrementAndGet();
      // First use of this snapshot's plan: check that DuckDB sees the Iceberg columns and types
      // when reading by name, and remember the answer for every later query on the snapshot.
      batch.run();
      boolean matches;
      try {
        FieldIdProjection names = FieldIdProjection.byName(schema);
        execute(connection, "CREATE VIEW " + viewName + " AS " + viewSql(schema, clean, withDeletes, deletes,
            file -> names, table.tailTables()));
        matches = viewColumnsMatch(connection, name, schema);
        if (!matches) {
          execute(connection, "DROP VIEW " + viewName);
        }
      } catch (SQLException e) {
        matches = false;
      }
      plan.readsByName = matches;
      rememberByName(key, matches);
      if (matches) {
        return;
      }
      byName = false;
    }
    Function<PlannedFile, FieldIdProjection> projection;
    if (byName) {
      FieldIdProjection names = FieldIdProjection.byName(schema);
      projection = file -> names;
    } else if (plan == null || !FieldIdProjection.needsFileLayout(schema)) {
      FieldIdProjection ids = FieldIdProjection.byFieldId(schema, null);
      projection = file -> ids;
    } else {
      Map<PlannedFile, FieldIdProjection> projections = new IdentityHashMap<>();
      for (PlannedFile file : table.files()) {
        projections.put(file, FieldIdProjection.byFieldId(schema, fileSchema(table, file)));
      }
      projection = projections::get;
    }
    if (lineage && !table.tailTables().isEmpty()) {
      throw new IllegalStateException("row lineage views read the WAL tail from staged files only");
    }
    batch.add("CREATE VIEW " + viewName + " AS " + (lineage
        ? RowLineage.viewSql(connection, schema, clean, withDeletes, deletes, projection, number)
        : viewSql(schema, clean, withDeletes, deletes, projection, table.tailTables())));
  }

  /**
   * What the by-name check's answer depends on: the snapshot, the read schema and the files the
   * view reads (files never change once written), as a digest; null when there is no snapshot.
   */
  private static String byNameKey(PlannedTable table) {
    if (table.snapshotId() == null) {
      return null;
    }
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      digest.update((table.snapshotId() + "\n" + table.schema().asStruct() + "\n").getBytes(StandardCharsets.UTF_8));
      for (PlannedFile file : table.files()) {
        digest.update(file.location().getBytes(StandardCharsets.UTF_8));
        digest.update((byte) (file.deletedPositions().length == 0 ? 0 : 1));
        digest.update((byte) '\n');
      }
      digest.update((byte) (table.tailTables().isEmpty() ? 0 : 1));
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private synchronized Boolean checkedByName(String key) {
    return checkedByName.get(key);
  }

  private synchronized void rememberByName(String key, boolean matches) {
    if (key != null) {
      checkedByName.put(key, matches);
    }
  }

  /** How many by-name checks views ran so far (for tests). */
  long byNameChecks() {
    return byNameChecks.get();
  }

  /** The schema {@code file} was written with, read from its footer once per location. */
  private Schema fileSchema(PlannedTable table, PlannedFile file) {
    try {
      return footers.schema(file.location(), Path.of(file.localPath()));
    } catch (SeException e) {
      if (!Files.exists(Path.of(file.localPath()))) {
        // Expiry deleted the pinned snapshot's file after it was planned.
        throw SnapshotExpiredException.missingFiles(table.displayName(), table.table(), table.snapshotId(), e);
      }
      // The footer reader's message names server paths; the client learns which table failed.
      throw SeException.unavailable("table " + table.displayName() + ": cannot read the footer of a data file", e);
    }
  }

  /**
   * The view's query. Read by field id ({@code schema} map) the files of any schema version read
   * right, but DuckDB then knows neither row counts nor column statistics and plans joins
   * blindly; so files of a table that never changed its schema are read by name, which is the
   * same thing for them. Files are grouped by {@code projection} (one group unless a struct
   * column must be read per file layout, see {@link FieldIdProjection}). Deleted positions are
   * removed only from files that have some, by their bitmaps ({@link DeletionMasks}).
   */
  private static String viewSql(Schema schema, List<PlannedFile> clean, List<PlannedFile> withDeletes,
      DeletionMasks deletes, Function<PlannedFile, FieldIdProjection> projection, List<String> tailTables)
      throws SQLException {
    List<String> parts = new ArrayList<>();
    for (Map.Entry<FieldIdProjection, List<PlannedFile>> group : byProjection(clean, projection).entrySet()) {
      FieldIdProjection read = group.getKey();
      parts.add("SELECT " + read.selectList() + " FROM read_parquet(" + fileList(group.getValue()) + read.readOptions() + ")");
    }
    for (Map.Entry<FieldIdProjection, List<PlannedFile>> group : byProjection(withDeletes, projection).entrySet()) {
      FieldIdProjection read = group.getKey();
      parts.add("SELECT " + read.selectList() + " FROM read_parquet(" + fileList(group.getValue()) + read.readOptions()
          + ", file_row_number = true) AS data" + deletes.keepLive(group.getValue()));
    }
    if (!tailTables.isEmpty()) {
      // WAL tail rows read inline: their tables' first columns are the schema's, by name.
      StringJoiner columns = new StringJoiner(", ");
      for (Types.NestedField field : schema.columns()) {
        String column = SqlQuoting.identifier(field.name());
        columns.add("CAST(" + column + " AS " + IcebergTypes.duckdbType(field.name(), field.type()) + ") AS " + column);
      }
      for (String tailTable : tailTables) {
        parts.add("SELECT " + columns + " FROM " + tailTable);
      }
    }
    if (parts.isEmpty()) {
      StringJoiner empty = new StringJoiner(", ");
      for (Types.NestedField field : schema.columns()) {
        empty.add("CAST(NULL AS " + IcebergTypes.duckdbType(field.name(), field.type()) + ") AS " + SqlQuoting.identifier(field.name()));
      }
      parts.add("SELECT " + empty + " WHERE false");
    }
    return String.join(" UNION ALL ", parts);
  }

  /** Whether the view has exactly the schema's column names and DuckDB types, in order. */
  private static boolean viewColumnsMatch(Connection connection, TableName name, Schema schema) throws SQLException {
    List<String> expected = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      expected.add(field.name() + " " + IcebergTypes.duckdbType(field.name(), field.type()));
    }
    List<String> actual = new ArrayList<>();
    try (PreparedStatement columns = connection.prepareStatement("SELECT column_name, data_type FROM duckdb_columns() "
        + "WHERE database_name = 'default' AND schema_name = ? AND table_name = ? ORDER BY column_index")) {
      columns.setString(1, name.schema());
      columns.setString(2, name.table());
      try (ResultSet rows = columns.executeQuery()) {
        while (rows.next()) {
          actual.add(rows.getString(1) + " " + rows.getString(2));
        }
      }
    }
    return actual.equals(expected);
  }

  /** Files grouped by how they are read, in plan order. */
  private static Map<FieldIdProjection, List<PlannedFile>> byProjection(List<PlannedFile> files,
      Function<PlannedFile, FieldIdProjection> projection) {
    Map<FieldIdProjection, List<PlannedFile>> groups = new LinkedHashMap<>();
    for (PlannedFile file : files) {
      groups.computeIfAbsent(projection.apply(file), k -> new ArrayList<>()).add(file);
    }
    return groups;
  }

  private static String fileList(List<PlannedFile> files) {
    StringJoiner list = new StringJoiner(", ", "[", "]");
    files.forEach(file -> list.add(SqlQuoting.literal(file.localPath())));
    return list.toString();
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}

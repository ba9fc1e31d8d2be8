package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.ParquetFooters;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Views over real Parquet files (written by DuckDB with Iceberg field ids) on a real locked query
 * database: by name when the files carry the schema's names, by field id otherwise, deleted
 * positions removed, an empty snapshot still typed.
 */
class TableViewsTest {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.IntegerType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));
  private static final TableName NAME = new TableName("ns", "t");

  @TempDir
  static Path dir;
  static DuckRuntime duckdb;
  static QueryDatabasePool pool;
  static TableViews views;

  @BeforeAll
  static void start() {
    duckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    pool = duckdb.queryDatabases("256MB", 1);
    views = new TableViews(new ParquetFooters(16));
  }

  @AfterAll
  static void stop() {
    duckdb.close();
  }

  /** Writes {@code select} to a Parquet file with {@code fieldIds} (a DuckDB FIELD_IDS struct). */
  private static PlannedFile file(String name, String select, String fieldIds, long... deleted) throws SQLException {
    String path = dir.resolve(name).toAbsolutePath().toString();
    try (Connection writer = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = writer.createStatement()) {
      statement.execute("COPY (" + select + ") TO '" + path + "' (FORMAT parquet, FIELD_IDS " + fieldIds + ")");
    }
    return new PlannedFile("s3://bucket/t/" + name, path, deleted);
  }

  private static PlannedTable table(Schema schema, boolean evolved, SnapshotPlanCache.Plan plan, PlannedFile... files) {
    return new PlannedTable("default.ns.t", null, files.length == 0 && plan == null ? null : 1L, schema, List.of(files),
        evolved, plan);
  }

  /** The view's columns, its SQL and its rows ordered by id, read on a fresh query database. */
  private static List<String> view(PlannedTable table) throws SQLException {
    try (QueryDatabasePool.Lease lease = pool.acquire("tenant", TableViews.directories(List.of(table)))) {
      Connection connection = lease.connection();
      views.create(connection, NAME, table, 0);
      List<String> out = new ArrayList<>();
      out.add(String.join("|", rows(connection, "SELECT column_name || ' ' || data_type FROM duckdb_columns() "
          + "WHERE schema_name = 'ns' AND table_name = 't' ORDER BY column_index")));
      String sql = rows(connection, "SELECT sql FROM duckdb_views() WHERE view_name = 't'").get(0);
      // DuckDB keeps the view's SQL normalized: read_parquet(..., ("schema" = "map"(...))).
      out.add(sql.contains("(\"schema\" = \"map\"(") ? "by field id" : "by name");
      out.addAll(rows(connection, "SELECT * FROM ns.t ORDER BY 1"));
      return out;
    }
  }

  private static List<String> rows(Connection connection, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      int columns = rows.getMetaData().getColumnCount();
      while (rows.next()) {
        StringJoiner row = new StringJoiner("|");
        for (int i = 1; i <= columns; i++) {
          row.add(String.valueOf(rows.getString(i)));
        }
        out.add(row.toString());
      }
    }
    return out;
  }

  @Test
  void filesWithTheSchemasNamesAreReadByNameOnceChecked() throws SQLException {
    PlannedFile first = file("by-name-1.parquet", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(id, name)", "{id: 1, name: 2}");
    PlannedFile second = file("by-name-2.parquet", "SELECT 3 AS id, 'c' AS name", "{id: 1, name: 2}");
    SnapshotPlanCache.Plan plan = new SnapshotPlanCache.Plan(List.of());
    PlannedTable table = table(SCHEMA, false, plan, first, second);
    assertThat(view(table)).containsExactly("id INTEGER|name VARCHAR", "by name", "1|a", "2|b", "3|c");
    assertThat(plan.readsByName).isTrue();
    // Later queries on the snapshot trust the answer.
    assertThat(view(table)).containsExactly("id INTEGER|name VARCHAR", "by name", "1|a", "2|b", "3|c");
  }

  /**
   * The plans of other pruning filters of a snapshot that read the same files reuse the check's
   * answer (true or false); other files are checked again.
   */
  @Test
  void theCheckIsRememberedPerSnapshotAndFilesAcrossPlans() throws SQLException {
    PlannedFile file = file("per-files.parquet", "SELECT 4 AS id, 'd' AS name", "{id: 1, name: 2}");
    PlannedFile renamed = file("per-files-renamed.parquet", "SELECT 5 AS ident, 'e' AS label", "{ident: 1, label: 2}");
    long before = views.byNameChecks();
    SnapshotPlanCache.Plan first = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, first, file))).containsExactly("id INTEGER|name VARCHAR", "by name", "4|d");
    SnapshotPlanCache.Plan otherFilter = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, otherFilter, file))).containsExactly("id INTEGER|name VARCHAR", "by name",
        "4|d");
    assertThat(otherFilter.readsByName).isTrue();
    assertThat(views.byNameChecks() - before).as("one check for both plans").isEqualTo(1);

    SnapshotPlanCache.Plan renamedPlan = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, renamedPlan, renamed))).containsExactly("id INTEGER|name VARCHAR",
        "by field id", "5|e");
    SnapshotPlanCache.Plan renamedOther = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, renamedOther, renamed))).as("the remembered false reads by field id")
        .containsExactly("id INTEGER|name VARCHAR", "by field id", "5|e");
    assertThat(renamedOther.readsByName).isFalse();
    assertThat(views.byNameChecks() - before).as("other files: checked again, once").isEqualTo(2);
  }

  @Test
  void filesWithOtherNamesOrTypesFallBackToFieldIdsAndTheAnswerIsRemembered() throws SQLException {
    PlannedFile renamed = file("other-names.parquet", "SELECT 1 AS ident, 'a' AS label", "{ident: 1, label: 2}");
    SnapshotPlanCache.Plan plan = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, plan, renamed))).containsExactly("id INTEGER|name VARCHAR", "by field id", "1|a");
    assertThat(plan.readsByName).isFalse();
    assertThat(view(table(SCHEMA, false, plan, renamed))).containsExactly("id INTEGER|name VARCHAR", "by field id", "1|a");

    PlannedFile wider = file("other-types.parquet", "SELECT 2::BIGINT AS id, 'b' AS name", "{id: 1, name: 2}");
    SnapshotPlanCache.Plan widerPlan = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(SCHEMA, false, widerPlan, wider))).containsExactly("id INTEGER|name VARCHAR", "by field id", "2|b");
    assertThat(widerPlan.readsByName).isFalse();
  }

  @Test
  void anEvolvedTableIsReadByFieldIdWithoutCheck() throws SQLException {
    // Written before column 2 was renamed and column 3 added.
    PlannedFile old = file("evolved-old.parquet", "SELECT 1 AS id, 'a' AS full_name", "{id: 1, full_name: 2}");
    PlannedFile current = file("evolved-new.parquet", "SELECT 2 AS id, 'b' AS name, 7 AS extra", "{id: 1, name: 2, extra: 3}");
    Schema evolved = new Schema(SCHEMA.columns().get(0), SCHEMA.columns().get(1),
        Types.NestedField.optional(3, "extra", Types.IntegerType.get()));
    SnapshotPlanCache.Plan plan = new SnapshotPlanCache.Plan(List.of());
    assertThat(view(table(evolved, true, plan, old, current)))
        .containsExactly("id INTEGER|name VARCHAR|extra INTEGER", "by field id", "1|a|null", "2|b|7");
    assertThat(plan.readsByName).isNull();
  }

  @Test
  void structsAreReadPerFileLayout() throws SQLException {
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get()),
        Types.NestedField.optional(2, "st", Types.StructType.of(Types.NestedField.optional(3, "a", Types.IntegerType.get()),
            Types.NestedField.optional(4, "b", Types.StringType.get()))));
    PlannedFile old = file("struct-old.parquet", "SELECT 1 AS id, {'a': 5, 'old_b': 'x'} AS st",
        "{id: 1, st: {__duckdb_field_id: 2, a: 3, old_b: 4}}");
    PlannedFile current = file("struct-new.parquet", "SELECT 2 AS id, {'a': 6, 'b': 'y'} AS st",
        "{id: 1, st: {__duckdb_field_id: 2, a: 3, b: 4}}");
    assertThat(view(table(schema, true, new SnapshotPlanCache.Plan(List.of()), old, current))).containsExactly(
        "id INTEGER|st STRUCT(a INTEGER, b VARCHAR)", "by field id", "1|{'a': 5, 'b': x}", "2|{'a': 6, 'b': y}");
  }

  @Test
  void deletedPositionsAreRemoved() throws SQLException {
    PlannedFile clean = file("clean.parquet", "SELECT 1 AS id, 'a' AS name", "{id: 1, name: 2}");
    PlannedFile withDeletes = file("deletes.parquet", "SELECT * FROM (VALUES (2, 'b'), (3, 'c'), (4, 'd')) v(id, name)",
        "{id: 1, name: 2}", 0, 2);
    assertThat(view(table(SCHEMA, false, new SnapshotPlanCache.Plan(List.of()), clean, withDeletes)))
        .containsExactly("id INTEGER|name VARCHAR", "by name", "1|a", "3|c");
    assertThat(view(table(SCHEMA, true, new SnapshotPlanCache.Plan(List.of()), clean, withDeletes)))
        .containsExactly("id INTEGER|name VARCHAR", "by field id", "1|a", "3|c");
  }

  @Test
  void deletedPositionsAreRemovedPerFileOfOneRead() throws SQLException {
    // Positions on both sides of a byte of the bitmap; the rows after the last deleted one are
    // past the first file's bitmap (16 bits) and stay.
    PlannedFile first = file("many-deletes-1.parquet", "SELECT i::INTEGER AS id, 'f' || i AS name FROM range(0, 20) t(i)",
        "{id: 1, name: 2}", 0, 7, 8, 15);
    PlannedFile second = file("many-deletes-2.parquet", "SELECT i::INTEGER AS id, 'g' || i AS name FROM range(100, 110) t(i)",
        "{id: 1, name: 2}", 9);
    PlannedFile clean = file("many-deletes-clean.parquet", "SELECT 50 AS id, 'c' AS name", "{id: 1, name: 2}");
    List<String> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      if (i != 0 && i != 7 && i != 8 && i != 15) {
        rows.add(i + "|f" + i);
      }
    }
    rows.add("50|c");
    for (int i = 100; i < 109; i++) {
      rows.add(i + "|g" + i);
    }
    for (boolean evolved : new boolean[] {false, true}) {
      List<String> view = view(table(SCHEMA, evolved, new SnapshotPlanCache.Plan(List.of()), second, clean, first));
      assertThat(view.subList(0, 2)).containsExactly("id INTEGER|name VARCHAR", evolved ? "by field id" : "by name");
      assertThat(view.subList(2, view.size())).containsExactlyElementsOf(rows);
    }
  }

  @Test
  void aSnapshotWithoutFilesHasTheSchemasColumns() throws SQLException {
    assertThat(view(table(SCHEMA, false, null))).containsExactly("id INTEGER|name VARCHAR", "by name");
    assertThat(view(table(SCHEMA, true, new SnapshotPlanCache.Plan(List.of())))).containsExactly("id INTEGER|name VARCHAR", "by name");
  }

  @Test
  void directoriesAreThePrefixesOfTheFilePaths() {
    PlannedTable table = table(SCHEMA, false, null, new PlannedFile("a", "/data/x/1.parquet", new long[0]),
        new PlannedFile("b", "/data/x/2.parquet", new long[0]), new PlannedFile("c", "/data/y/3.parquet", new long[0]));
    assertThat(TableViews.directories(List.of(table, table(SCHEMA, false, null)))).containsExactly("/data/x/", "/data/y/");
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.QueryDatabasePool;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DESCRIBE, SHOW TABLES and information_schema answered from an Iceberg catalog, and the
 * information_schema references of real statements (as DuckDB's parser locates them) pointed at
 * the emulated views.
 */
class MetadataStatementsTest {
  private static final Schema ORDERS = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "région", Types.StringType.get()),
      Types.NestedField.optional(3, "amount", Types.DecimalType.of(10, 2)),
      Types.NestedField.optional(4, "tags", Types.ListType.ofOptional(5, Types.StringType.get()))), Set.of(1));
  private static final Schema PAGE_VIEWS = new Schema(
      Types.NestedField.optional(1, "user_name", Types.StringType.get()));

  static InMemoryCatalog catalog;
  Connection duckdb;

  @BeforeAll
  static void catalog() {
    catalog = new InMemoryCatalog();
    catalog.initialize("test", Map.of());
    catalog.createNamespace(Namespace.of("sales"));
    catalog.createNamespace(Namespace.of("analytics"));
    catalog.createNamespace(Namespace.of("analytics", "events"));
    catalog.createTable(TableIdentifier.of("sales", "orders"), ORDERS, PartitionSpec.unpartitioned());
    catalog.createTable(TableIdentifier.of(Namespace.of("analytics", "events"), "page_views"), PAGE_VIEWS,
        PartitionSpec.unpartitioned());
  }

  @BeforeEach
  void open() throws SQLException {
    duckdb = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE SCHEMA " + QueryDatabasePool.META_SCHEMA);
    }
  }

  @AfterEach
  void close() throws SQLException {
    duckdb.close();
  }

  private List<String> rows(String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement statement = duckdb.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
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

  /** {@code sql} as the engine rewrites it for the catalog, run on the test's database. */
  private String pointed(String sql) throws SQLException {
    String statement = SqlText.rewrite(SqlText.statements(sql).get(0));
    StatementAnalyzer.Analysis analysis = StatementAnalyzer.analyze(StatementParser.parse(duckdb, statement));
    return MetadataStatements.informationSchema(duckdb, catalog, statement, analysis.informationSchema());
  }

  @Test
  void describeListsTopLevelColumnsWithNullabilityAndKey() throws SQLException {
    assertThat(rows(MetadataStatements.describe(duckdb, ORDERS))).containsExactly(
        "id|BIGINT|NO|PRI|null|null",
        "région|VARCHAR|YES|null|null|null",
        "amount|DECIMAL(10,2)|YES|null|null|null",
        "tags|VARCHAR[]|YES|null|null|null");
  }

  @Test
  void showTablesListsEveryNamespaceSorted() throws SQLException {
    assertThat(rows(MetadataStatements.showTables(duckdb, catalog)))
        .containsExactly("default|analytics.events|page_views", "default|sales|orders");
  }

  @Test
  void schemataListsEveryNamespace() throws SQLException {
    assertThat(rows(pointed("SELECT schema_name FROM information_schema.schemata ORDER BY 1")))
        .containsExactly("analytics", "analytics.events", "sales");
  }

  @Test
  void tablesListsEveryTable() throws SQLException {
    assertThat(rows(pointed("SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY 1")))
        .containsExactly("analytics.events|page_views|BASE TABLE", "sales|orders|BASE TABLE");
  }

  @Test
  void onlyTheReferencedViewsAreMaterialized() throws SQLException {
    pointed("SELECT count(*) FROM information_schema.tables");
    assertThat(rows("SELECT table_name FROM duckdb_tables() WHERE schema_name = '" + MetadataStatements.INFO_SCHEMA + "'"))
        .containsExactly("tables");
  }

  @Test
  void columnsJoinTablesAndKeepTheStatementAroundTheReferences() throws SQLException {
    String sql = "SELECT /* information_schema.tables */ c.column_name, 'héllo ☃ information_schema.tables' AS s, "
        + "c.ordinal_position, c.is_nullable, c.data_type\n"
        + "FROM \"information_schema\".\"columns\" AS c -- information_schema.schemata\n"
        + "JOIN INFORMATION_SCHEMA.TABLES t ON t.table_name = c.table_name AND t.table_schema = c.table_schema\n"
        + "WHERE c.table_name = 'orders' ORDER BY c.ordinal_position";
    String pointed = pointed(sql);
    assertThat(pointed).isEqualTo("SELECT /* information_schema.tables */ c.column_name, "
        + "'héllo ☃ information_schema.tables' AS s, c.ordinal_position, c.is_nullable, c.data_type\n"
        + "FROM __se_information_schema.columns AS c -- information_schema.schemata\n"
        + "JOIN __se_information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema\n"
        + "WHERE c.table_name = 'orders' ORDER BY c.ordinal_position");
    String s = "héllo ☃ information_schema.tables";
    assertThat(rows(pointed)).containsExactly("id|" + s + "|1|NO|BIGINT", "région|" + s + "|2|YES|VARCHAR",
        "amount|" + s + "|3|YES|DECIMAL(10,2)", "tags|" + s + "|4|YES|VARCHAR[]");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "SELECT * FROM information_schema.tables|SELECT * FROM __se_information_schema.tables",
      "SELECT * FROM default.information_schema.tables|SELECT * FROM __se_information_schema.tables",
      "SELECT * FROM \"default\".\"information_schema\".\"tables\" x|SELECT * FROM __se_information_schema.tables x",
      "SELECT x.a FROM information_schema.tables AS x(a, b)|SELECT x.a FROM __se_information_schema.tables AS x(a, b)",
      "SELECT * FROM information_schema . /* c */ tables USING SAMPLE 1 ROWS|"
          + "SELECT * FROM __se_information_schema.tables USING SAMPLE 1 ROWS",
      "SELECT * FROM information_schema.tables TABLESAMPLE 100%|SELECT * FROM __se_information_schema.tables TABLESAMPLE 100%",
      "SELECT '😀', * FROM information_schema.Tables|SELECT '😀', * FROM __se_information_schema.tables",
      "SELECT \"ü\".* FROM (SELECT 1) \"ü\", information_schema.schemata|"
          + "SELECT \"ü\".* FROM (SELECT 1) \"ü\", __se_information_schema.schemata",
      "WITH x AS (SELECT * FROM information_schema.tables) SELECT * FROM x, x AS y|"
          + "WITH x AS (SELECT * FROM __se_information_schema.tables) SELECT * FROM x, x AS y",
      "SELECT * FROM information_schema.tables;  -- done|SELECT * FROM __se_information_schema.tables"})
  void referencesAreFoundHoweverTheyAreWritten(String sql, String expected) throws SQLException {
    assertThat(pointed(sql)).isEqualTo(expected);
    rows(expected);
  }

  @Test
  void unknownViewsAndSeveralStatementsAreRefused() throws SQLException {
    assertThatThrownBy(() -> pointed("SELECT * FROM information_schema.views"))
        .isInstanceOf(SeException.class)
        .hasMessage("information_schema.views does not exist: available are " + String.join(", ",
            StatementAnalyzer.INFORMATION_SCHEMA_VIEWS))
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThatThrownBy(() -> StatementParser.parse(duckdb,
        "SELECT * FROM information_schema.tables; SELECT * FROM information_schema.columns"))
        .isInstanceOf(SeException.class)
        .hasMessage("multiple statements are not allowed (found 2): send one query per call");
  }
}

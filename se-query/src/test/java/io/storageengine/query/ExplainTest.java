package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** EXPLAIN and EXPLAIN ANALYZE through the JDBC driver: files pruned and kept, deletion vectors, DuckDB's plan. */
class ExplainTest {
  /** The key of the row of the table (the name as the engine shows it in messages). */
  static final String ORDERS = "table default.\"sales\".\"orders\"";
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static TestQueryServer server;

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-explain");
    allocator = new RootAllocator();
    warehouse = new TestWarehouse();
    Catalog main = warehouse.localCatalog("warehouse", dir.resolve("warehouse"));
    Schema schema = new Schema(List.of(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.required(2, "day", Types.StringType.get())));
    Table orders = TestWarehouse.createTable(main, "sales", "orders", schema,
        PartitionSpec.builderFor(schema).identity("day").build());
    // Three partitions, one file each; a second file in the first partition with other ids.
    TestWarehouse.append(orders, List.of(TestWarehouse.record(schema, 1L, "2024-01-01"),
        TestWarehouse.record(schema, 2L, "2024-01-01"), TestWarehouse.record(schema, 3L, "2024-01-02"),
        TestWarehouse.record(schema, 4L, "2024-01-03")));
    List<DataFile> later = TestWarehouse.append(orders, List.of(TestWarehouse.record(schema, 10L, "2024-01-01"),
        TestWarehouse.record(schema, 11L, "2024-01-01")));
    TestWarehouse.deletePositions(orders, later.get(0), 0);
    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
  }

  @AfterAll
  static void tearDown() throws Exception {
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static Connection jdbc() throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("useEncryption", "false");
    properties.setProperty(QueryMetadataInterceptor.HEADER_NAME, "{\"catalog_id\":\"warehouse\"}");
    return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.port(), properties);
  }

  private static Map<String, String> rows(ResultSet result) throws SQLException {
    assertThat(result.getMetaData().getColumnName(1)).isEqualTo("explain_key");
    assertThat(result.getMetaData().getColumnName(2)).isEqualTo("explain_value");
    Map<String, String> out = new LinkedHashMap<>();
    while (result.next()) {
      out.put(result.getString(1), result.getString(2));
    }
    return out;
  }

  private static Map<String, String> explain(String sql) throws SQLException {
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement();
        ResultSet result = statement.executeQuery(sql)) {
      return rows(result);
    }
  }

  @Test
  void explainShowsFilesPrunedByPartitionAndStatsAndTheDeletionVectorsApplied() throws Exception {
    Map<String, String> rows = explain("EXPLAIN SELECT id FROM sales.orders WHERE day = '2024-01-01' AND id >= 10");
    assertThat(rows.keySet()).containsExactly(ORDERS, "physical_plan");
    String table = rows.get(ORDERS);
    assertThat(table).contains("(current)", "data files in snapshot: 4\n", "data files pruned by partition: 2\n",
        "data files pruned by column stats: 1\n", "data files read: 1\n", "deletion vectors applied: 1\n",
        "deletion vectors pruned: 0\n", "rows deleted in files read: 1\n", "wal tail: not read");
    assertThat(rows.get("physical_plan")).isNotBlank();
    // No server-local directory of the data file copies or spill space.
    rows.values().forEach(value -> assertThat(value).doesNotContain(dir.resolve("local").toString()));
  }

  @Test
  void anInListPrunesAsItsValuesDo() throws Exception {
    assertThat(explain("EXPLAIN SELECT count(*) FROM sales.orders WHERE day IN ('2024-01-02')").get(ORDERS))
        .contains("pushed filter: ref(name=\"day\") in", "data files pruned by partition: 3\n", "data files read: 1\n");
    // A value of another kind than the column's: nothing is pushed, no file dropped.
    assertThat(explain("EXPLAIN SELECT count(*) FROM sales.orders WHERE day IN ('2024-01-03', 5)")
        .get(ORDERS)).contains("pushed filter: true", "data files pruned by partition: 0\n");
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement()) {
      long[] counts = new long[2];
      String[] wheres = {"day IN ('2024-01-01', '2024-01-02') AND id >= 10",
          "(day = '2024-01-01' OR day = '2024-01-02') AND id >= 10"};
      for (int i = 0; i < 2; i++) {
        try (ResultSet result = statement.executeQuery("SELECT count(*) FROM sales.orders WHERE " + wheres[i])) {
          result.next();
          counts[i] = result.getLong(1);
        }
      }
      assertThat(counts[0]).as("pruned by the IN list, the same rows").isEqualTo(counts[1]).isPositive();
    }
  }

  @Test
  void aPartitionPrunedAwayTakesItsDeletionVectorWithIt() throws Exception {
    String table = explain("EXPLAIN SELECT count(*) FROM sales.orders WHERE day = '2024-01-02'")
        .get(ORDERS);
    assertThat(table).contains("data files pruned by partition: 3\n", "data files read: 1\n",
        "deletion vectors applied: 0\n", "deletion vectors pruned: 1\n");
  }

  @Test
  void explainAnalyzeRunsTheQueryAndShowsTimings() throws Exception {
    Map<String, String> rows = explain("EXPLAIN ANALYZE SELECT count(*) FROM sales.orders");
    assertThat(rows.keySet()).containsExactly(ORDERS, "analyzed_plan");
    assertThat(rows.get(ORDERS)).contains("data files pruned by partition: 0\n", "data files read: 4\n");
    assertThat(rows.get("analyzed_plan")).containsIgnoringCase("Total Time");
  }

  @Test
  void aPreparedExplainPrunesWithItsBoundParameter() throws Exception {
    try (Connection connection = jdbc();
        PreparedStatement statement = connection.prepareStatement(
            "EXPLAIN SELECT id FROM sales.orders WHERE day = ?")) {
      statement.setString(1, "2024-01-03");
      try (ResultSet result = statement.executeQuery()) {
        assertThat(rows(result).get(ORDERS)).contains("data files pruned by partition: 3\n",
            "data files read: 1\n");
      }
    }
  }

  @Test
  void explainOfAStatementThatIsRefusedIsRefused() {
    List<String> refused = new ArrayList<>();
    for (String sql : List.of("EXPLAIN DELETE FROM sales.orders", "EXPLAIN ANALYZE COPY sales.orders TO '/tmp/x'",
        "EXPLAIN SELECT * FROM read_csv('/etc/passwd')", "EXPLAIN DESCRIBE sales.orders", "EXPLAIN")) {
      assertThatThrownBy(() -> explain(sql)).as(sql).isInstanceOf(SQLException.class)
          .satisfies(e -> refused.add(e.getMessage()));
    }
    assertThat(refused.get(0)).contains("DELETE statements are not allowed");
    assertThat(refused.get(1)).contains("COPY statements are not allowed");
    assertThat(refused.get(2)).contains("not allowed");
    assertThat(refused.get(3)).contains("EXPLAIN explains queries only");
    assertThat(refused.get(4)).contains("EXPLAIN needs a query");
  }
}

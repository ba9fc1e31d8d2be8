package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The allow-list against the DuckDB of the build: every listed name exists, and every function
 * DuckDB has that is not listed is refused by the analyzer, called as a function and as a table
 * function (so a DuckDB upgrade that adds functions fails closed, and this test names them).
 */
class SqlAllowListTest {
  static Connection duckdb;

  @BeforeAll
  static void open() throws SQLException {
    duckdb = DriverManager.getConnection("jdbc:duckdb:");
  }

  @AfterAll
  static void close() throws SQLException {
    duckdb.close();
  }

  static Set<String> names(String sql) throws SQLException {
    Set<String> out = new TreeSet<>();
    try (Statement statement = duckdb.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        out.add(SqlAllowList.fold(rows.getString(1)));
      }
    }
    return out;
  }

  static StatementAnalyzer.Analysis analyze(String sql) throws SQLException {
    return StatementAnalyzer.analyze(StatementParser.parse(duckdb, SqlText.rewrite(sql)));
  }

  @Test
  void everyAllowedNameExistsInThisDuckDb() throws SQLException {
    SqlAllowList list = SqlAllowList.get();
    Set<String> expressionFunctions = names("SELECT function_name FROM duckdb_functions() WHERE schema_name = 'main' "
        + "AND function_type IN ('scalar', 'aggregate', 'window', 'macro')");
    Set<String> tableFunctions = names("SELECT function_name FROM duckdb_functions() WHERE function_type = 'table'");
    Set<String> types = names("SELECT type_name FROM duckdb_types() WHERE database_name = 'system'");
    assertThat(list.functions()).hasSizeGreaterThan(800);
    assertThat(expressionFunctions).containsAll(list.functions());
    assertThat(tableFunctions).containsAll(list.tableFunctions());
    assertThat(types).containsAll(list.types());
  }

  @Test
  void everyFunctionNotOnTheListIsRefusedAsAFunction() throws SQLException {
    Set<String> all = names("SELECT function_name FROM duckdb_functions()");
    List<String> refused = new ArrayList<>();
    for (String name : all) {
      if (SqlAllowList.get().function(name)) {
        continue;
      }
      if (SqlSandbox.BINDER_FUNCTIONS.contains(name)) {
        // unnest(list) in a select list is the binder's own, not the table function of that name.
        assertThat(name).isEqualTo("unnest");
        continue;
      }
      String sql = "SELECT " + SqlQuoting.identifier(name) + "(1)";
      assertThatThrownBy(() -> analyze(sql)).as(sql)
          .isInstanceOf(SeException.class)
          .hasMessageContaining("function `" + name + "` is not allowed")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      refused.add(name);
    }
    // The functions the old deny-list let through, among everything else refused.
    assertThat(refused).contains("json_serialize_plan", "json_serialize_sql", "json_deserialize_sql",
        "current_setting", "current_database", "version", "stats", "getvariable", "sleep_ms",
        "write_log", "read_csv", "glob", "query", "query_table", "sniff_csv", "duckdb_settings", "pragma_version",
        "pg_sleep", "has_table_privilege", "nextval", "setseed", "finalize", "__internal_barrier");
    assertThat(refused.size()).isGreaterThan(250);
  }

  @Test
  void everyTableFunctionNotOnTheListIsRefusedInFrom() throws SQLException {
    Set<String> all = names("SELECT function_name FROM duckdb_functions()");
    int refused = 0;
    for (String name : all) {
      if (SqlAllowList.get().tableFunction(name)) {
        continue;
      }
      String sql = "SELECT * FROM " + SqlQuoting.identifier(name) + "()";
      assertThatThrownBy(() -> analyze(sql)).as(sql)
          .isInstanceOf(SeException.class)
          .hasMessageContaining("table function `" + name + "` is not allowed");
      refused++;
    }
    assertThat(refused).isGreaterThan(1000);
  }

  /** What a newer DuckDB may add (a node kind, an expression class, a field) is refused, not skipped. */
  @Test
  void unknownKindsAndFieldsFailClosed() throws SQLException {
    JsonNode tree = StatementParser.parse(duckdb, "SELECT abs(x) FROM range(3) t(x)");
    ObjectNode node = (ObjectNode) tree.deepCopy().path("node");
    node.put("new_clause", "x");
    assertRefused(tree, node, "SQL construct not allowed in queries: SELECT_NODE (field new_clause)");
    node = (ObjectNode) tree.deepCopy().path("node");
    node.put("type", "STATEMENT_NODE");
    assertRefused(tree, node, "query node (STATEMENT_NODE)");
    node = (ObjectNode) tree.deepCopy().path("node");
    ((ObjectNode) node.path("select_list").get(0)).put("class", "BOUND_FUNCTION");
    assertRefused(tree, node, "expression (BOUND_FUNCTION)");
    node = (ObjectNode) tree.deepCopy().path("node");
    ((ObjectNode) node.path("from_table")).put("type", "COLUMN_DATA");
    assertRefused(tree, node, "table reference (COLUMN_DATA)");
    node = (ObjectNode) tree.deepCopy().path("node");
    ((ObjectNode) node.path("select_list").get(0)).put("catalog", "system");
    assertRefused(tree, node, "functions cannot be qualified");
    node = (ObjectNode) tree.deepCopy().path("node");
    ((ObjectNode) node.path("select_list").get(0)).putObject("qualified_name").putArray("path").add("getenv");
    assertRefused(tree, node, "function name (getenv)");
  }

  private static void assertRefused(JsonNode tree, ObjectNode node, String message) {
    ObjectNode statement = (ObjectNode) tree.deepCopy();
    statement.set("node", node);
    assertThatThrownBy(() -> StatementAnalyzer.analyze(statement)).isInstanceOf(SeException.class)
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @ValueSource(strings = {"main.abs(1)", "system.main.abs(1)", "pg_catalog.abs(1)", "\"system\".\"main\".abs(1)",
      "memory.main.lower('x')", "temp.main.upper('x')"})
  void anAllowedFunctionWithASchemaOrCatalogIsRefused(String call) {
    assertThatThrownBy(() -> analyze("SELECT " + call))
        .hasMessageContaining("functions cannot be qualified with a schema or catalog");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT 1 + 2 * 3 - 4 / 2 // 1 % 5, 2 ** 3, 2 ^ 3, 'a' || 'b', 1 << 2, 8 >> 1, 5 & 3, 5 | 3, ~5, @(-3), 5!",
      "SELECT 'abc' LIKE 'a%', 'abc' NOT LIKE 'x%', 'ABC' ILIKE 'a%', 'a' NOT ILIKE 'b', 'a' GLOB 'a*', 'ab' SIMILAR TO 'a.'",
      "SELECT 'a_c' LIKE 'a!_c' ESCAPE '!', 'abc' ^@ 'a', [1, 2] @> [1], [1] <@ [1, 2], [1] && [1]",
      "SELECT CASE WHEN 1 BETWEEN 0 AND 2 THEN 'in' ELSE 'out' END, CASE 1 WHEN 1 THEN 'one' END",
      "SELECT 1 IN (1, 2), 3 NOT IN (1, 2), NULL IS NULL, 1 IS NOT NULL, NOT true, 1 IS DISTINCT FROM 2, coalesce(NULL, 1), nullif(1, 1)",
      "SELECT CAST('1' AS INTEGER), '2'::BIGINT, TRY_CAST('x' AS INT), CAST(1.5 AS DECIMAL(10, 2)), CAST('a' AS VARCHAR[]), "
          + "CAST([1] AS INT[1]), CAST({'a': 1} AS STRUCT(a INT)), CAST(MAP {'k': 1} AS MAP(VARCHAR, INT)), DATE '2024-01-01', "
          + "TIMESTAMP '2024-01-01 00:00:00', TIMESTAMPTZ '2024-01-01 00:00:00+00', INTERVAL '1 day', INTERVAL 2 HOUR, "
          + "CAST('00000000-0000-0000-0000-000000000000' AS UUID), CAST(1 AS HUGEINT), 'x'::BLOB, CAST(x'AB' AS BLOB)",
      "SELECT date_trunc('day', TIMESTAMP '2024-01-01 10:00:00'), date_part('year', DATE '2024-01-01'), "
          + "EXTRACT(month FROM DATE '2024-01-01'), strftime(DATE '2024-01-01', '%Y'), strptime('2024', '%Y'), "
          + "time_bucket(INTERVAL '1 hour', TIMESTAMP '2024-01-01 10:30:00'), date_diff('day', DATE '2024-01-01', DATE '2024-02-01'), "
          + "date_add(DATE '2024-01-01', INTERVAL 1 DAY), make_date(2024, 1, 1), epoch_ms(0), to_timestamp(0), last_day(DATE '2024-02-01'), "
          + "current_date, current_timestamp, now(), today(), TIMESTAMP '2024-01-01 00:00:00' AT TIME ZONE 'UTC', age(TIMESTAMP '2024-01-01')",
      "SELECT lower('A'), upper('a'), length('abc'), substring('abc', 2, 1), SUBSTRING('abc' FROM 1 FOR 2), trim('  a '), "
          + "TRIM(BOTH 'x' FROM 'xax'), replace('a', 'a', 'b'), split_part('a,b', ',', 2), concat('a', 1), concat_ws(',', 'a', 'b'), "
          + "lpad('a', 3, '0'), left('abc', 1), right('abc', 1), reverse('abc'), repeat('a', 3), starts_with('abc', 'a'), "
          + "contains('abc', 'b'), POSITION('b' IN 'abc'), strpos('abc', 'c'), format('{}', 1), printf('%d', 1), md5('a'), sha256('a'), "
          + "hash('a'), string_split('a,b', ','), 'x' COLLATE nocase, levenshtein('a', 'b'), ascii('a'), chr(65), to_base64('a'::BLOB)",
      "SELECT regexp_matches('abc', 'b'), regexp_replace('abc', 'b', 'x'), regexp_extract('abc', '(b)', 1), "
          + "regexp_extract_all('abab', 'a'), regexp_split_to_array('a1b', '[0-9]'), regexp_full_match('a', 'a')",
      "SELECT [1, 2, 3][1], [1, 2, 3][1:2], list_value(1, 2), list_transform([1, 2], x -> x + 1), "
          + "list_filter([1, 2], lambda x: x > 1), list_reduce([1, 2], (a, b) -> a + b), [x * 2 FOR x IN [1, 2] IF x > 1], "
          + "list_sort([2, 1]), list_distinct([1, 1]), list_contains([1], 1), len([1]), array_length([1]), flatten([[1]]), "
          + "list_aggregate([1, 2], 'sum'), list_sum([1, 2]), list_concat([1], [2]), unnest([1, 2]), generate_series(1, 3), range(3)",
      "SELECT {'a': 1, 'b': 'x'}.a, struct_pack(a := 1), struct_extract({'a': 1}, 'a'), row(1, 2), MAP {'k': 1}['k'], "
          + "map_keys(MAP {'k': 1}), map_values(MAP {'k': 1}), element_at(MAP {'k': 1}, 'k'), to_json({'a': 1}), json_extract('{\"a\":1}', '$.a'), "
          + "'{\"a\":1}'->>'a', json_extract_string('{\"a\":1}', '$.a'), ARRAY[1, 2], union_value(k := 1)",
      "SELECT abs(-1), round(1.55, 1), ceil(1.2), floor(1.8), sqrt(4), ln(1), log10(10), exp(1), power(2, 3), greatest(1, 2), "
          + "least(1, 2), sign(-1), pi(), random() >= 0, gen_random_uuid() IS NOT NULL, isnan(1.0), gcd(4, 6), bit_count(5), trunc(1.5)",
      "SELECT count(*), count(x), count(DISTINCT x), sum(x), avg(x), min(x), max(x), median(x), stddev(x), variance(x), "
          + "string_agg(CAST(x AS VARCHAR), ',' ORDER BY x), list(x), array_agg(x ORDER BY x DESC), first(x), last(x), "
          + "arg_max(x, x), arg_min(x, x), bool_and(x > 0), bool_or(x > 0), count(x) FILTER (WHERE x > 1), "
          + "quantile_cont(x, 0.5), percentile_cont(0.5) WITHIN GROUP (ORDER BY x), mode(x), approx_count_distinct(x), "
          + "histogram(x), corr(x, x), any_value(x), bit_or(x), product(x), sum(x) FILTER (x > 0) FROM range(10) t(x)",
      "SELECT x, row_number() OVER (ORDER BY x), rank() OVER w, dense_rank() OVER w, percent_rank() OVER w, ntile(2) OVER w, "
          + "lag(x) OVER w, lead(x, 1, 0) OVER w, first_value(x) OVER w, last_value(x) OVER w, nth_value(x, 2) OVER w, "
          + "cume_dist() OVER w, sum(x) OVER (PARTITION BY x % 2 ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
          + "avg(x) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) "
          + "FROM range(5) t(x) WINDOW w AS (ORDER BY x) QUALIFY row_number() OVER (ORDER BY x) < 5",
      "WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM a, b",
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
      "WITH m AS MATERIALIZED (SELECT 1 AS x) SELECT * FROM m UNION SELECT 2 EXCEPT SELECT 3 INTERSECT SELECT 1",
      "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(id, name) ORDER BY id DESC NULLS LAST LIMIT 1 OFFSET 1",
      "SELECT DISTINCT ON (x % 2) x FROM range(4) t(x) ORDER BY x % 2, x",
      "SELECT x % 2 AS k, count(*) FROM range(4) t(x) GROUP BY GROUPING SETS ((k), ()) HAVING count(*) > 0",
      "SELECT x % 2 AS k, x % 3 AS j, GROUPING(k), count(*) FROM range(4) t(x) GROUP BY ROLLUP (k, j) ORDER BY ALL",
      "SELECT * EXCLUDE (x), * REPLACE (x + 1 AS x), COLUMNS('x'), #1 FROM range(2) t(x)",
      "SELECT (SELECT 1), EXISTS (SELECT 1), 1 = ANY (SELECT 1), 1 > ALL (SELECT 0), 1 IN (SELECT 1)",
      "SELECT * FROM range(3) a(x) JOIN range(3) b(x) USING (x) LEFT JOIN range(2) c(y) ON c.y = a.x "
          + "CROSS JOIN range(1) d(z) SEMI JOIN range(1) e(w) ON e.w = d.z, LATERAL (SELECT a.x + 1 AS q) l",
      "SELECT * FROM range(3) a(x) ASOF JOIN range(3) b(y) ON a.x >= b.y POSITIONAL JOIN range(3) c(z)",
      "SELECT * FROM generate_series(1, 3) g, unnest([1, 2]) u(v), range(0, 10, 2)",
      "SELECT * FROM (SELECT 'x' AS k, 1 AS v) PIVOT (sum(v) FOR k IN ('x', 'y'))",
      "SELECT * FROM (SELECT 1 AS a, 2 AS b) UNPIVOT (v FOR k IN (a, b))",
      "SELECT * FROM range(100) TABLESAMPLE 10%",
      "SELECT * FROM range(100) USING SAMPLE 10 ROWS",
      "SELECT * FROM range(100) USING SAMPLE reservoir(10%) REPEATABLE (42)",
      "FROM range(3) SELECT range",
      "SELECT ?, $1, CAST(? AS BIGINT) WHERE ? IS NOT NULL",
      "SELECT * FROM range(3) ORDER BY ALL LIMIT 50%",
      "SUMMARIZE SELECT 1 AS x",
      "DESCRIBE SELECT 1 AS x",
      "SELECT * FROM (DESCRIBE SELECT 1 AS x)",
      "SELECT x FROM range(3) t(x) WHERE x BETWEEN 1 AND 2 AND x NOT BETWEEN 5 AND 6 AND (x > 0 OR x < 0)",
      "SELECT \"ABS\"(-1), AbS(-1), abs(-1) -- mixed case names are DuckDB's names\n",
      "SELECT /* a comment */ abs /* between */ (-1)",
      "SELECT TRY(1 / 0), greatest(*COLUMNS('x')) FROM range(1) t(x)",
      "SELECT t.user, t.current_role FROM (SELECT 1 AS user, 2 AS current_role) t",
      "SELECT current_balance, localtime, current_time FROM (SELECT 1 AS current_balance)",
      "SELECT * FROM range(100) USING SAMPLE 10.5 PERCENT (bernoulli)",
      "SHOW TABLES", "DESCRIBE ns.t", "SELECT * FROM information_schema.tables", "SHOW COLUMNS FROM ns.t"})
  void legitimateQueriesPass(String sql) throws SQLException {
    assertThat(analyze(sql)).isNotNull();
  }
}

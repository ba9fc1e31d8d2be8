package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.query.QueryParameters.Kind;
import io.storageengine.query.QueryParameters.Value;
import io.storageengine.query.StatementAnalyzer.Comparison;
import io.storageengine.query.StatementAnalyzer.TableName;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What reaches Iceberg's file pruning from real SQL (parsed by DuckDB, analyzed as a query is):
 * top-level AND-ed comparisons of a column with a literal of its kind, and IN lists of such
 * literals; everything else is left to DuckDB ({@code alwaysTrue}), never a filter that could
 * drop a matching file.
 */
class FilterPushdownTest {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.IntegerType.get()),
      Types.NestedField.optional(2, "big", Types.LongType.get()),
      Types.NestedField.optional(3, "name", Types.StringType.get()),
      Types.NestedField.optional(4, "day", Types.DateType.get()),
      Types.NestedField.optional(5, "price", Types.DecimalType.of(10, 2)),
      Types.NestedField.optional(6, "score", Types.DoubleType.get()),
      Types.NestedField.optional(7, "flag", Types.BooleanType.get()),
      Types.NestedField.optional(8, "st", Types.StructType.of(Types.NestedField.optional(9, "a", Types.IntegerType.get()))));
  private static final String TABLE = new TableName("ns", "t").key();

  static Connection duckdb;

  @BeforeAll
  static void open() throws SQLException {
    duckdb = DriverManager.getConnection("jdbc:duckdb:");
  }

  @AfterAll
  static void close() throws SQLException {
    duckdb.close();
  }

  private static Expression pushed(String where) throws SQLException {
    return pushed(where, QueryParameters.NONE);
  }

  private static Expression pushed(String where, QueryParameters parameters) throws SQLException {
    return FilterPushdown.filter(SCHEMA, comparisons("SELECT * FROM ns.t WHERE " + where), parameters);
  }

  private static List<Comparison> comparisons(String sql) throws SQLException {
    StatementAnalyzer.Analysis analysis = StatementAnalyzer.analyze(StatementParser.parse(duckdb, SqlText.rewrite(sql)));
    return analysis.filters().getOrDefault(TABLE, List.of());
  }

  private static void assertSame(Expression actual, Expression expected) {
    assertThat(actual.toString()).isEqualTo(expected.toString());
  }

  @Test
  void comparisonsWithLiteralsOfTheColumnsKind() throws SQLException {
    assertSame(pushed("id = 5"), Expressions.equal("id", 5));
    assertSame(pushed("id < 5"), Expressions.lessThan("id", 5));
    assertSame(pushed("id <= 5"), Expressions.lessThanOrEqual("id", 5));
    assertSame(pushed("id > 5"), Expressions.greaterThan("id", 5));
    assertSame(pushed("id >= 5"), Expressions.greaterThanOrEqual("id", 5));
    assertSame(pushed("big = 3000000000"), Expressions.equal("big", 3_000_000_000L));
    assertSame(pushed("name = 'eu'"), Expressions.equal("name", "eu"));
    assertSame(pushed("day >= '2024-02-29'"), Expressions.greaterThanOrEqual("day", "2024-02-29"));
  }

  @Test
  void literalOnTheLeftIsFlipped() throws SQLException {
    assertSame(pushed("5 < id"), Expressions.greaterThan("id", 5));
    assertSame(pushed("5 >= id"), Expressions.lessThanOrEqual("id", 5));
    assertSame(pushed("'eu' = name"), Expressions.equal("name", "eu"));
  }

  @Test
  void columnsAreFoundIgnoringCaseAndByTheirTableQualifier() throws SQLException {
    assertSame(pushed("ID = 5"), Expressions.equal("id", 5));
    assertSame(pushed("t.id = 5"), Expressions.equal("id", 5));
    assertSame(FilterPushdown.filter(SCHEMA, comparisons("SELECT * FROM ns.t AS x WHERE x.id = 5"), QueryParameters.NONE),
        Expressions.equal("id", 5));
    assertSame(pushed("other.id = 5"), Expressions.alwaysTrue());
  }

  @Test
  void andCombinesEveryPushableConjunct() throws SQLException {
    assertSame(pushed("id = 1 AND name = 'eu' AND big >= 3"),
        Expressions.and(Expressions.and(Expressions.equal("id", 1), Expressions.equal("name", "eu")),
            Expressions.greaterThanOrEqual("big", 3L)));
    // A conjunct that cannot be pushed drops out; the others still prune.
    assertSame(pushed("id = 1 AND id IN (1, 2) AND name IS NULL AND score > 1.5"),
        Expressions.and(Expressions.equal("id", 1), Expressions.in("id", 1, 2)));
    assertSame(pushed("id = 1 AND name IS NULL AND score > 1.5"), Expressions.equal("id", 1));
  }

  @Test
  void inListsOfLiteralsOfTheColumnsKind() throws SQLException {
    assertSame(pushed("id IN (1, 2)"), Expressions.in("id", 1, 2));
    assertSame(pushed("name IN ('eu', 'us')"), Expressions.in("name", "eu", "us"));
    assertSame(pushed("big IN (3000000000)"), Expressions.in("big", 3_000_000_000L));
    assertSame(pushed("id IN (?, ?)", new QueryParameters(List.of(new Value(Kind.INTEGER, "7"),
        new Value(Kind.INTEGER, "8")))), Expressions.in("id", 7, 8));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "id IN (1, '2')",
      "id IN (1, 2 + 1)",
      "id IN (1, NULL)",
      "day IN ('2024-02-29', '2024-2-28')",
      "id IN (SELECT 1)",
      "score IN (1.5)",
      "id NOT IN (1, 2)",
      "name IS NULL",
      "name IS NOT NULL",
      "id = 1 OR id = 2",
      "(id = 1 AND name = 'a') OR id = 2",
      "NOT (id = 1)",
      "id <> 1",
      "id BETWEEN 1 AND 3",
      "name LIKE 'a%'",
      "lower(name) = 'a'",
      "id + 1 = 2",
      "id = big",
      "st.a = 1",
      "missing = 1",
      "price = 1",
      "price = 1.50",
      "score > 1.5",
      "flag = true",
      "id = '5'",
      "name = 5",
      "id = 3000000000",
      "day = DATE '2024-02-29'",
      "id = CAST(5 AS INTEGER)",
      "id = (SELECT 1)"})
  void unsupportedPredicatesAreLeftToDuckDb(String where) throws SQLException {
    assertSame(pushed(where), Expressions.alwaysTrue());
  }

  @Test
  void aTableReadTwiceIsNotPruned() throws SQLException {
    // Both references share one view, so a filter on one of them must not drop the other's rows.
    assertThat(comparisons("SELECT * FROM ns.t a JOIN ns.t b ON a.id = b.id WHERE a.id = 1")).isEmpty();
  }

  @Test
  void parametersUseTheirBoundValues() throws SQLException {
    QueryParameters bound = new QueryParameters(List.of(new Value(Kind.INTEGER, "7"), new Value(Kind.STRING, "eu"),
        new Value(Kind.DATE, "2024-02-29")));
    assertSame(pushed("id = ? AND name = ? AND day < ?", bound),
        Expressions.and(Expressions.and(Expressions.equal("id", 7), Expressions.equal("name", "eu")),
            Expressions.lessThan("day", "2024-02-29")));
    assertSame(pushed("? < id", new QueryParameters(List.of(new Value(Kind.INTEGER, "7")))), Expressions.greaterThan("id", 7));
  }

  @Test
  void parametersThatCannotPruneAreLeftToDuckDb() throws SQLException {
    assertSame(pushed("id = ?"), Expressions.alwaysTrue());
    assertSame(pushed("id = ?", new QueryParameters(List.of(new Value(Kind.NULL, null)))), Expressions.alwaysTrue());
    assertSame(pushed("score = ?", new QueryParameters(List.of(new Value(Kind.FLOAT, "1.5")))), Expressions.alwaysTrue());
    assertSame(pushed("id = ?", new QueryParameters(List.of(new Value(Kind.STRING, "7")))), Expressions.alwaysTrue());
    assertSame(pushed("name = ?", new QueryParameters(List.of(new Value(Kind.INTEGER, "7")))), Expressions.alwaysTrue());
  }

  private static String keys(String where, String... keyColumns) throws SQLException {
    return keys(where, QueryParameters.NONE, keyColumns);
  }

  private static String keys(String where, QueryParameters parameters, String... keyColumns) throws SQLException {
    List<Types.NestedField> keys = java.util.Arrays.stream(keyColumns).map(SCHEMA::findField).toList();
    FilterPushdown.KeyFilter filter = FilterPushdown.keyFilter(SCHEMA, keys, comparisons("SELECT * FROM ns.t WHERE "
        + where), parameters);
    return filter == null ? null : filter.sql();
  }

  private static long keyCount(String where, String... keyColumns) throws SQLException {
    List<Types.NestedField> keys = java.util.Arrays.stream(keyColumns).map(SCHEMA::findField).toList();
    return FilterPushdown.keyFilter(SCHEMA, keys, comparisons("SELECT * FROM ns.t WHERE " + where),
        QueryParameters.NONE).keys();
  }

  @Test
  void keyFilterCountsTheMostKeysItCanSelect() throws SQLException {
    assertThat(keyCount("id = 5", "id")).isEqualTo(1);
    assertThat(keyCount("id IN (1, 2, 3)", "id")).isEqualTo(3);
    assertThat(keyCount("id = 1 AND id IN (1, 2)", "id")).isEqualTo(1);
    assertThat(keyCount("id IN (1, 2, 3) AND id IN (1, 2)", "id")).isEqualTo(2);
    assertThat(keyCount("id IN (1, 2) AND big IN (2, 3, 4)", "id", "big")).isEqualTo(6);
  }

  @Test
  void keyFilterSelectsTheKeysEveryRowReadHas() throws SQLException {
    assertThat(keys("id = 5", "id")).isEqualTo("\"id\" = 5");
    assertThat(keys("5 = id AND name IS NOT NULL", "id")).isEqualTo("\"id\" = 5");
    assertThat(keys("ID = 5", "id")).isEqualTo("\"id\" = 5");
    assertThat(keys("id IN (1, 2, 3)", "id")).isEqualTo("\"id\" IN (1, 2, 3)");
    assertThat(keys("name = 'o''brien'", "name")).isEqualTo("\"name\" = 'o''brien'");
    assertThat(keys("name IN ('a', 'b')", "name")).isEqualTo("\"name\" IN ('a', 'b')");
    assertThat(keys("id = 1 AND big = 3000000000", "id", "big")).isEqualTo("\"id\" = 1 AND \"big\" = 3000000000");
    // Every conjunct on a key column counts: the predicate is never narrower than the WHERE.
    assertThat(keys("id = 1 AND id IN (1, 2)", "id")).isEqualTo("\"id\" = 1 AND \"id\" IN (1, 2)");
    QueryParameters bound = new QueryParameters(List.of(new Value(Kind.INTEGER, "7"), new Value(Kind.INTEGER, "8")));
    assertThat(keys("id = ?", bound, "id")).isEqualTo("\"id\" = 7");
    assertThat(keys("id IN (?, ?)", bound, "id")).isEqualTo("\"id\" IN (7, 8)");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "id > 5",
      "id = 1 OR id = 2",
      "id NOT IN (1, 2)",
      "id IN (1, '2')",
      "id IN (1, 2 + 1)",
      "id IN (SELECT 1)",
      "id = '5'",
      "id <> 5",
      "NOT (id = 5)",
      "name = 'a'",
      "id = big",
      "other.id = 5",
      "id = ?"})
  void keyFilterNeedsEveryKeyColumnEqualToValuesOfItsKind(String where) throws SQLException {
    assertThat(keys(where, "id")).isNull();
  }

  @Test
  void keyFilterOfACompositeKeyNeedsEveryColumn() throws SQLException {
    assertThat(keys("id = 1", "id", "big")).isNull();
    assertThat(keys("id = 1 AND big > 2", "id", "big")).isNull();
    assertThat(keys("id = 1 AND big IN (2, 3)", "id", "big")).isEqualTo("\"id\" = 1 AND \"big\" IN (2, 3)");
    assertThat(FilterPushdown.keyFilter(SCHEMA, List.of(), comparisons("SELECT * FROM ns.t WHERE id = 1"),
        QueryParameters.NONE)).isNull();
  }

  @Test
  void aColumnNotInTheReadSchemaIsNotPushed() {
    Schema dropped = new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get()));
    assertSame(FilterPushdown.filter(dropped, List.of(new Comparison("name", "COMPARE_EQUAL", "STRING", "eu")),
        QueryParameters.NONE), Expressions.alwaysTrue());
  }
}

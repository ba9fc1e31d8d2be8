package io.storageengine.stress.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The query texts TpchBenchmark sends and the diff it judges them by; no server. */
class TpchQueriesTest {
  @Test
  void loadsTwentyTwoSingleStatementQueries() {
    List<TpchQueries.Query> queries = TpchQueries.all();
    assertThat(queries).hasSize(22);
    for (TpchQueries.Query q : queries) {
      assertThat(q.sql()).doesNotContain(";").doesNotStartWith("--");
    }
    TpchQueries.Query q15 = queries.get(14);
    assertThat(q15.sql()).startsWith("WITH revenue AS (").doesNotContainIgnoringCase("CREATE");
    // Q6 is one aggregate row; Q1 ends in ORDER BY.
    assertThat(queries.get(5).ordered()).isFalse();
    assertThat(queries.get(0).ordered()).isTrue();
  }

  @Test
  void qualifiesTablesOnlyInTablePosition() {
    String sql = "SELECT n_name AS nation, extract(YEAR FROM o_orderdate) AS y FROM part, nation n1"
        + " JOIN orders ON o_custkey = 1 WHERE p_name LIKE '%customer%' GROUP BY nation ORDER BY nation";
    assertThat(TpchQueries.qualify(sql, t -> "d.s." + t)).isEqualTo(
        "SELECT n_name AS nation, extract(YEAR FROM o_orderdate) AS y FROM d.s.part, d.s.nation n1"
            + " JOIN d.s.orders ON o_custkey = 1 WHERE p_name LIKE '%customer%' GROUP BY nation ORDER BY nation");
    // Every table of all 22 queries is qualified, and nothing else is renamed.
    for (TpchQueries.Query q : TpchQueries.all()) {
      String qualified = TpchQueries.qualify(q.sql(), t -> "x_" + t);
      for (String table : TpchQueries.TABLES) {
        assertThat(qualified).as(q.name()).doesNotContainPattern("(?i)(FROM|JOIN|,)\\s+" + table + "\\b");
      }
    }
  }

  @Test
  void diffsDecimalsExactlyDoublesWithinTolerance() {
    List<List<Object>> a = List.of(Arrays.asList(1L, new BigDecimal("1.50"), 2.0, "x", LocalDate.of(1995, 1, 1)));
    assertThat(ResultDiff.compare(a, List.of(Arrays.asList(1L, new BigDecimal("1.5"), 2.0 + 1e-12, "x",
        LocalDate.of(1995, 1, 1))), true, 1e-9)).isEmpty();
    assertThat(ResultDiff.compare(a, List.of(Arrays.asList(1L, new BigDecimal("1.51"), 2.0, "x",
        LocalDate.of(1995, 1, 1))), true, 1e-9)).contains("column 1");
    assertThat(ResultDiff.compare(a, List.of(Arrays.asList(1L, new BigDecimal("1.5"), 2.001, "x",
        LocalDate.of(1995, 1, 1))), true, 1e-9)).contains("column 2");
    assertThat(ResultDiff.compare(a, List.of(), true, 1e-9)).contains("row count");
    assertThat(ResultDiff.compare(List.of(Arrays.asList((Object) null)), List.of(Arrays.asList((Object) 0L)),
        true, 1e-9)).isNotEmpty();
  }

  @Test
  void unorderedResultsCompareAsMultisets() {
    List<List<Object>> a = List.of(List.of(1L, "a"), List.of(2L, "b"));
    List<List<Object>> b = List.of(List.of(2L, "b"), List.of(1L, "a"));
    assertThat(ResultDiff.compare(a, b, false, 1e-9)).isEmpty();
    assertThat(ResultDiff.compare(a, b, true, 1e-9)).isNotEmpty();
  }

  @Test
  void sparkTextDiffersOnlyInDecimalTypedLiterals() {
    List<TpchQueries.Query> queries = TpchQueries.all();
    for (TpchQueries.Query q : queries) {
      String spark = TpchQueries.forSpark(q.sql());
      assertThat(spark).as(q.name()).doesNotContainPattern("(?i)\\bdecimal\\s+'");
      if (!q.name().equals("q6")) {
        assertThat(spark).as(q.name()).isEqualTo(q.sql());
      }
    }
    assertThat(TpchQueries.forSpark(queries.get(5).sql()))
        .contains("l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01");
  }

  @Test
  void acrossTypesNumbersCompareByValue() {
    // Spark: bigint sums and decimal averages where DuckDB has 128-bit integers and doubles.
    List<List<Object>> duck = List.of(Arrays.asList(new BigDecimal("7"), 25.522005853257337, 0.3333333333333333));
    List<List<Object>> spark = List.of(Arrays.asList(7L, new BigDecimal("25.522006"), new BigDecimal("0.333333")));
    assertThat(ResultDiff.compare(duck, spark, true, 1e-9, true)).isEmpty();
    // Without it a number of another class is a difference, as before.
    assertThat(ResultDiff.compare(duck, spark, true, 1e-9)).contains("column 0");
    // One unit in the decimal's last place, not more.
    assertThat(ResultDiff.compare(duck, List.of(Arrays.asList(7L, new BigDecimal("25.522008"),
        new BigDecimal("0.333333"))), true, 1e-9, true)).contains("column 1");
    assertThat(ResultDiff.compare(duck, List.of(Arrays.asList(8L, new BigDecimal("25.522006"),
        new BigDecimal("0.333333"))), true, 1e-9, true)).contains("column 0");
  }

  @Test
  void readsTheSparkDriversLinesWithExactDecimalsDatesAndNulls() throws Exception {
    SparkDriverProcess.Result r = SparkDriverProcess.parse("{\"sql\":\"SELECT ...\",\"rows\":["
        + "{\"f\":\"A\",\"n\":1478493,\"s\":37734107.00,\"c\":38250854626.12345678,\"d\":\"1995-03-15\",\"x\":0.5},"
        + "{\"f\":\"B\",\"n\":2}],\"columns\":[{\"name\":\"f\",\"type\":\"string\"},{\"name\":\"n\",\"type\":\"bigint\"},"
        + "{\"name\":\"s\",\"type\":\"decimal(25,2)\"},{\"name\":\"c\",\"type\":\"decimal(38,8)\"},"
        + "{\"name\":\"d\",\"type\":\"date\"},{\"name\":\"x\",\"type\":\"double\"}],\"ms\":12.5}");
    assertThat(r.error()).isNull();
    assertThat(r.ms()).isEqualTo(12.5);
    assertThat(r.rows().get(0)).containsExactly("A", 1478493L, new BigDecimal("37734107.00"),
        new BigDecimal("38250854626.12345678"), LocalDate.of(1995, 3, 15), 0.5);
    assertThat(r.rows().get(1)).containsExactly("B", 2L, null, null, null, null);
    SparkDriverProcess.Result failed = SparkDriverProcess.parse(
        "{\"sql\":\"SELECT x\",\"error\":\"no column x\",\"causes\":[],\"ms\":3.0}");
    assertThat(failed.error()).isEqualTo("no column x");
    assertThat(failed.rows()).isEmpty();
  }
}

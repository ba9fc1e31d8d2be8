package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.query.StatementAnalyzer.Span;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Replacing located table names by byte offset (see MetadataStatementsTest for offsets DuckDB reports). */
class StatementSpliceTest {
  /** The span of the first {@code reference} in {@code statement}, in UTF-8 bytes as DuckDB reports it. */
  private static Span span(String statement, String reference, String view, int parts) {
    int chars = statement.indexOf(reference);
    int start = statement.substring(0, chars).getBytes(StandardCharsets.UTF_8).length;
    return new Span(start, reference.getBytes(StandardCharsets.UTF_8).length, view, parts);
  }

  private static String replace(String statement, List<Span> spans) {
    return StatementSplice.replace(statement, spans, span -> "<" + span.view() + ">");
  }

  @Test
  void replacesOnlyTheNames() {
    String sql = "SELECT * FROM information_schema.tables WHERE x = 1";
    assertThat(replace(sql, List.of(span(sql, "information_schema.tables", "tables", 2))))
        .isEqualTo("SELECT * FROM <tables> WHERE x = 1");
    assertThat(replace(sql, List.of())).isEqualTo(sql);
  }

  @Test
  void aliasesAndSamplesInTheReferenceAreKept() {
    String sql = "SELECT * FROM information_schema.columns AS c(a, b) JOIN \"default\" . \"information_schema\".tables "
        + "TABLESAMPLE 10% ON true";
    assertThat(replace(sql, List.of(span(sql, "information_schema.columns AS c(a, b)", "columns", 2),
        span(sql, "\"default\" . \"information_schema\".tables TABLESAMPLE 10%", "tables", 3))))
        .isEqualTo("SELECT * FROM <columns> AS c(a, b) JOIN <tables> TABLESAMPLE 10% ON true");
  }

  @Test
  void offsetsAreUtf8BytesNotCharacters() {
    String sql = "SELECT 'héllo ☃ 😀' AS s, * FROM information_schema.columns \"ç\", \"ünï\".information_schema.tables";
    String result = replace(sql, List.of(span(sql, "information_schema.columns \"ç\"", "columns", 2),
        span(sql, "\"ünï\".information_schema.tables", "tables", 3)));
    assertThat(result).isEqualTo("SELECT 'héllo ☃ 😀' AS s, * FROM <columns> \"ç\", <tables>");
  }

  @Test
  void aTimeTravelSpanLosesItsAtClauseAndKeepsAliasAndSample() {
    String sql = "SELECT * FROM ns.t AS \"é\"(a) AT (VERSION => 'x(') TABLESAMPLE 10% JOIN t AT(TIMESTAMP=>'2024') ON true";
    Span first = span(sql, "ns.t AS \"é\"(a) AT (VERSION => 'x(') TABLESAMPLE 10%", "ns.t", 2);
    Span second = span(sql, "t AT(TIMESTAMP=>'2024')", "t", 1);
    Span firstTravel = new Span(first.start(), first.length(), first.view(), 2, true);
    Span secondTravel = new Span(second.start(), second.length(), second.view(), 1, true);
    assertThat(replace(sql, List.of(secondTravel, firstTravel)))
        .isEqualTo("SELECT * FROM <ns.t> AS \"é\"(a)  TABLESAMPLE 10% JOIN <t>  ON true");
    // A travel span without its clause is not the text it was located in.
    String plain = "SELECT * FROM s.t";
    Span noClause = span(plain, "s.t", "s.t", 2);
    assertThatThrownBy(() -> replace(plain, List.of(new Span(noClause.start(), noClause.length(), "s.t", 2, true))))
        .hasMessageContaining("table `s.t`: time travel cannot be used here");
  }

  @Test
  void insertionsGoAtTheirOffsetsNextToReplacedNames() {
    String sql = "SELECT *, é.* FROM information_schema.tables é";
    int afterStar = "SELECT *".getBytes(StandardCharsets.UTF_8).length;
    int afterQualifiedStar = "SELECT *, é.*".getBytes(StandardCharsets.UTF_8).length;
    assertThat(StatementSplice.replace(sql, List.of(span(sql, "information_schema.tables é", "tables", 2)),
        span -> "<" + span.view() + ">", java.util.Map.of(afterStar, " X", afterQualifiedStar, " Y")))
        .isEqualTo("SELECT * X, é.* Y FROM <tables> é");
    // Inside a replaced reference, or inside a character: refused.
    int insideName = sql.indexOf("_schema");
    assertThatThrownBy(() -> StatementSplice.replace(sql, List.of(span(sql, "information_schema.tables é", "tables", 2)),
        span -> "x", java.util.Map.of(insideName + 1, " Z"))).isInstanceOf(SeException.class)
        .hasMessage("SQL: a select list cannot be used here");
    assertThatThrownBy(() -> StatementSplice.replace(sql, List.of(), span -> "x", java.util.Map.of(11, " Z")))
        .isInstanceOf(SeException.class).hasMessage("SQL: a select list cannot be used here");
  }

  @Test
  void spansInAnyOrder() {
    String sql = "SELECT * FROM s.a, s.b, s.c";
    assertThat(replace(sql, List.of(span(sql, "s.c", "3", 2), span(sql, "s.a", "1", 2), span(sql, "s.b", "2", 2))))
        .isEqualTo("SELECT * FROM <1>, <2>, <3>");
  }

  @Test
  void spansThatDoNotFitTheStatementAreRefused() {
    String sql = "SELECT 'é' FROM s.t";
    // Past the end; starting inside the two bytes of é; ending inside them; overlapping; not at a
    // qualified name; fewer name parts than said.
    List<List<Span>> bad = List.of(List.of(new Span(17, 5, "tables", 2)), List.of(new Span(9, 1, "tables", 2)),
        List.of(new Span(8, 1, "tables", 2)), List.of(new Span(17, 3, "columns", 2), new Span(19, 1, "tables", 2)),
        List.of(new Span(7, 3, "tables", 2)), List.of(new Span(17, 3, "tables", 3)), List.of(new Span(16, 4, "tables", 2)));
    for (List<Span> spans : bad) {
      assertThatThrownBy(() -> replace(sql, spans))
          .isInstanceOf(SeException.class)
          .hasMessage("information_schema.tables cannot be used here")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }
}

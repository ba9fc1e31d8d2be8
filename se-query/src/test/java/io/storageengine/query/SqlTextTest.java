package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SqlTextTest {
  @Test
  void splitsOnlyTopLevelSemicolons() {
    assertThat(SqlText.statements("SELECT ';' AS a; -- x; y\n SELECT \"a;b\" FROM t /* ; */;  ;"))
        .containsExactly("SELECT ';' AS a", "-- x; y\n SELECT \"a;b\" FROM t /* ; */");
    assertThat(SqlText.statements("  -- only a comment\n")).isEmpty();
    assertThat(SqlText.statements("SELECT $$;$$")).containsExactly("SELECT $$;$$");
  }

  @Test
  void rewritesDefaultCatalogAndShowColumns() {
    assertThat(SqlText.rewrite("SELECT default.x FROM default.\"a.b\".t WHERE s = 'default.'"))
        .isEqualTo("SELECT \"default\".x FROM \"default\".\"a.b\".t WHERE s = 'default.'");
    assertThat(SqlText.rewrite("SELECT \"default\" FROM \"default\".ns.t")).isEqualTo("SELECT \"default\" FROM \"default\".ns.t");
    assertThat(SqlText.rewrite("show columns from default.ns.t")).isEqualTo("DESCRIBE \"default\".ns.t");
  }

  @Test
  void rewritesTrinoTimeTravelAsDuckDbsAtClauseAfterTheAlias() {
    assertThat(SqlText.rewrite("SELECT * FROM ns.t FOR VERSION AS OF 12 WHERE id = 1"))
        .isEqualTo("SELECT * FROM ns.t AT (VERSION => 12) WHERE id = 1");
    assertThat(SqlText.rewrite("SELECT * FROM t for system_version as of 'main' AS x JOIN u FOR TIMESTAMP AS OF "
        + "TIMESTAMP '2024-01-01 00:00:00 UTC' y(a, b) ON x.id = y.a"))
        .isEqualTo("SELECT * FROM t AS x AT (VERSION => 'main') JOIN u y(a, b) AT (TIMESTAMP => "
            + "TIMESTAMP '2024-01-01 00:00:00 UTC') ON x.id = y.a");
    assertThat(SqlText.rewrite("SELECT * FROM t FOR SYSTEM_TIME AS OF '2024-01-01', u"))
        .isEqualTo("SELECT * FROM t AT (TIMESTAMP => '2024-01-01'), u");
    assertThat(SqlText.rewrite("SELECT * FROM t FOR VERSION AS OF 1 \"q\" WHERE true"))
        .isEqualTo("SELECT * FROM t \"q\" AT (VERSION => 1) WHERE true");
    assertThat(SqlText.rewrite("DESCRIBE ns.t FOR VERSION AS OF 3")).isEqualTo("DESCRIBE SELECT * FROM ns.t AT (VERSION => 3)");
    // Not a literal: refused; in a string: kept.
    assertThatThrownBy(() -> SqlText.rewrite("SELECT * FROM t FOR VERSION AS OF x"))
        .hasMessage("FOR VERSION AS OF: the time travel value must be a literal: a snapshot id, a 'branch' or 'tag' "
            + "name (VERSION), or a 'timestamp' (TIMESTAMP)");
    assertThat(SqlText.rewrite("SELECT 'FOR VERSION AS OF 1' FROM t")).isEqualTo("SELECT 'FOR VERSION AS OF 1' FROM t");
  }

  @Test
  void unterminatedQuotesAreErrors() {
    assertThatThrownBy(() -> SqlText.statements("SELECT 'abc")).hasMessageContaining("unterminated string");
    assertThatThrownBy(() -> SqlText.statements("SELECT \"abc")).hasMessageContaining("unterminated quoted identifier");
  }
}

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
  void unterminatedQuotesAreErrors() {
    assertThatThrownBy(() -> SqlText.statements("SELECT 'abc")).hasMessageContaining("unterminated string");
    assertThatThrownBy(() -> SqlText.statements("SELECT \"abc")).hasMessageContaining("unterminated quoted identifier");
  }

  @Test
  void configDefaultsArePinned() {
    QueryConfig config = QueryConfig.defaults();
    assertThat(config.duckdbMemoryLimit()).isEqualTo("1GB");
    assertThat(config.duckdbThreads()).isEqualTo(2);
    assertThat(config.batchRows()).isEqualTo(8192);
    assertThat(config.maxPreparedStatements()).isEqualTo(10_000);
    assertThat(config.maxSessions()).isEqualTo(10_000);
    assertThatThrownBy(() -> config.withMemoryLimit("lots; SET x")).hasMessageContaining("query memory limit `lots; SET x`");
    assertThatThrownBy(() -> config.withThreads(0)).hasMessageContaining("query threads `0`");
  }
}

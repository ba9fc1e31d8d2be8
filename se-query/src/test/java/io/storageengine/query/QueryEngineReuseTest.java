package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.duckdb.DuckRuntime;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The engine reuses DuckDB databases and snapshot plans without serving stale or foreign data. */
class QueryEngineReuseTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));
  static EngineFixture fixture;
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static Catalog alpha;
  static DuckRuntime duckdb;
  static QueryEngine engine;

  @BeforeAll
  static void setUp() throws Exception {
    fixture = EngineFixture.create("se-query-reuse");
    dir = fixture.dir;
    allocator = fixture.allocator;
    warehouse = fixture.warehouse;
    alpha = warehouse.localCatalog("alpha", dir.resolve("alpha"));
    Catalog beta = warehouse.localCatalog("beta", dir.resolve("beta"));
    TestWarehouse.append(TestWarehouse.createTable(alpha, "ns", "t", SCHEMA, PartitionSpec.unpartitioned()),
        List.of(TestWarehouse.record(SCHEMA, 1L, "a1"), TestWarehouse.record(SCHEMA, 2L, "a2")));
    TestWarehouse.append(TestWarehouse.createTable(beta, "ns", "t", SCHEMA, PartitionSpec.unpartitioned()),
        List.of(TestWarehouse.record(SCHEMA, 10L, "b10")));
    engine = fixture.start();
    duckdb = fixture.duckdb;
  }

  @AfterAll
  static void tearDown() throws Exception {
    fixture.close();
  }

  static List<String> rows(String catalogId, String sql) throws Exception {
    return EngineFixture.rows(engine, allocator, catalogId, sql);
  }

  @Test
  void aCachedPlanReturnsTheSameRowsAndACommitIsSeenAtOnce() throws Exception {
    Table table = TestWarehouse.createTable(alpha, "ns", "fresh", SCHEMA, PartitionSpec.unpartitioned());
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 1L, "a1"), TestWarehouse.record(SCHEMA, 2L, "a2")));
    List<String> first = rows("alpha", "SELECT id, name FROM ns.fresh ORDER BY id");
    long hits = engine.plans().hits();
    assertThat(first).containsExactly("1|a1", "2|a2");
    assertThat(rows("alpha", "SELECT id, name FROM ns.fresh ORDER BY id")).isEqualTo(first);
    assertThat(engine.plans().hits()).isEqualTo(hits + 1);

    DataFile added = TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 3L, "a3"))).get(0);
    assertThat(rows("alpha", "SELECT id, name FROM ns.fresh ORDER BY id")).containsExactly("1|a1", "2|a2", "3|a3");
    TestWarehouse.deletePositions(table, added, 0);
    assertThat(rows("alpha", "SELECT id, name FROM ns.fresh ORDER BY id")).isEqualTo(first);
    assertThat(rows("alpha", "SELECT count(*) FROM ns.fresh WHERE id = 3")).containsExactly("0");
  }

  @Test
  void databasesAreReusedAndTenantsStaySeparate() throws Exception {
    rows("alpha", "SELECT count(*) FROM ns.t");
    rows("beta", "SELECT count(*) FROM ns.t");
    long created = engine.pool().created();
    for (int i = 0; i < 5; i++) {
      assertThat(rows("alpha", "SELECT name FROM ns.t ORDER BY id")).containsExactly("a1", "a2");
      assertThat(rows("beta", "SELECT name FROM ns.t ORDER BY id")).containsExactly("b10");
      assertThat(rows("alpha", "SHOW TABLES")).contains("default|ns|t");
    }
    assertThat(engine.pool().created()).isEqualTo(created);
    // A view of the query before is not there: the table must be named and is read from this tenant.
    assertThatThrownBy(() -> rows("beta", "SELECT * FROM ns.other"))
        .hasMessageContaining("table default.\"ns\".\"other\" does not exist");
  }

  @Test
  void tablesThatNeverChangedTheirSchemaAreReadByNameOthersByFieldId() throws Exception {
    Table evolving = TestWarehouse.createTable(alpha, "ns", "evolving", SCHEMA, PartitionSpec.unpartitioned());
    TestWarehouse.append(evolving, List.of(TestWarehouse.record(SCHEMA, 1L, "old")));
    assertThat(rows("alpha", "SELECT * FROM ns.evolving")).containsExactly("1|old");
    assertThat(engine.plans().plans()).anySatisfy(plan -> assertThat(plan.readsByName).isTrue());
    evolving.updateSchema().renameColumn("name", "label").commit();
    assertThat(rows("alpha", "SELECT id, label FROM ns.evolving")).containsExactly("1|old");
    assertThat(rows("alpha", "SELECT t.id, e.label FROM ns.t t JOIN ns.evolving e ON t.id = e.id")).containsExactly("1|old");
  }
}

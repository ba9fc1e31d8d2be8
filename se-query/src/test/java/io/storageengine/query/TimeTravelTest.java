package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import java.nio.file.Path;
import java.time.Instant;
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

/**
 * Time travel through the engine over a table with several commits, a schema change (a column
 * renamed, one added) and a deletion vector: every snapshot reads its own rows with its own
 * schema, a branch reads with the table schema, several snapshots of one table meet in a query,
 * and a missing snapshot, ref or time is a clean error naming the table.
 */
class TimeTravelTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));
  static EngineFixture fixture;
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static DuckRuntime duckdb;
  static QueryEngine engine;
  static Table table;
  /** Snapshots: two appends, the schema change and a third append, a delete. */
  static long s1;
  static long s2;
  static long s3;
  static long s4;
  static long s1Time;
  static long s2Time;

  @BeforeAll
  static void setUp() throws Exception {
    fixture = EngineFixture.create("se-query-travel");
    dir = fixture.dir;
    allocator = fixture.allocator;
    warehouse = fixture.warehouse;
    Catalog catalog = warehouse.localCatalog("alpha", dir.resolve("alpha"));
    warehouse.localCatalog("beta", dir.resolve("beta"));
    table = TestWarehouse.createTable(catalog, "ns", "t", SCHEMA, PartitionSpec.unpartitioned());
    DataFile first = TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 1L, "a"),
        TestWarehouse.record(SCHEMA, 2L, "b"))).get(0);
    s1 = table.currentSnapshot().snapshotId();
    s1Time = table.currentSnapshot().timestampMillis();
    Thread.sleep(5);
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 3L, "c")));
    s2 = table.currentSnapshot().snapshotId();
    s2Time = table.currentSnapshot().timestampMillis();
    table.manageSnapshots().createTag("v2", s2).createBranch("audit", s2).commit();
    Thread.sleep(5);
    table.updateSchema().renameColumn("name", "label").addColumn("score", Types.IntegerType.get()).commit();
    Schema evolved = table.schema();
    TestWarehouse.append(table, List.of(TestWarehouse.record(evolved, 4L, "d", 40)));
    s3 = table.currentSnapshot().snapshotId();
    Thread.sleep(5);
    TestWarehouse.deletePositions(table, first, 0);
    s4 = table.currentSnapshot().snapshotId();
    engine = fixture.start();
    duckdb = fixture.duckdb;
  }

  @AfterAll
  static void tearDown() throws Exception {
    fixture.close();
  }

  /** The result's column names, then its rows (values joined by |). */
  static List<String> query(String catalogId, String sql, Map<String, SnapshotPin> pins) throws Exception {
    return EngineFixture.query(engine, allocator, catalogId, sql, pins);
  }


  static List<String> query(String sql) throws Exception {
    return query("alpha", sql, Map.of());
  }

  @Test
  void everySnapshotReadsItsRowsWithTheSchemaItWasWrittenWith() throws Exception {
    assertThat(query("SELECT * FROM ns.t FOR VERSION AS OF " + s1 + " ORDER BY id")).containsExactly("id,name", "1|a", "2|b");
    assertThat(query("SELECT * FROM ns.t AT (VERSION => " + s2 + ") ORDER BY id"))
        .containsExactly("id,name", "1|a", "2|b", "3|c");
    assertThat(query("SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF " + s3 + " ORDER BY id"))
        .containsExactly("id,label,score", "1|a|null", "2|b|null", "3|c|null", "4|d|40");
    assertThat(query("SELECT * FROM ns.t FOR VERSION AS OF " + s4 + " ORDER BY id"))
        .containsExactly("id,label,score", "2|b|null", "3|c|null", "4|d|40");
    // The current snapshot is s4, read as before.
    assertThat(query("SELECT * FROM ns.t ORDER BY id")).isEqualTo(query("SELECT * FROM ns.t FOR VERSION AS OF " + s4
        + " ORDER BY id"));
    // A column of the current schema does not exist in an old snapshot: DuckDB's binder says so.
    assertThatThrownBy(() -> query("SELECT label FROM ns.t FOR VERSION AS OF " + s1)).hasMessageContaining("label");
    // Filters prune within the snapshot; the table name and an alias qualify columns as usual.
    assertThat(query("SELECT t.name FROM ns.t FOR VERSION AS OF " + s2 + " WHERE id = 3")).containsExactly("name", "c");
    assertThat(query("SELECT x.name FROM ns.t FOR VERSION AS OF " + s2 + " AS x WHERE x.id >= 2 ORDER BY 1"))
        .containsExactly("name", "b", "c");
    assertThat(query("SELECT x.n FROM ns.t AS x(i, n) AT (VERSION => " + s1 + ") WHERE x.i = 1")).containsExactly("n", "a");
    List<String> described = query("DESCRIBE ns.t FOR VERSION AS OF " + s1);
    assertThat(described.subList(1, described.size())).extracting(row -> row.split("\\|")[0]).containsExactly("id", "name");
  }

  @Test
  void aTagReadsItsSnapshotsSchemaABranchTheTableSchema() throws Exception {
    assertThat(query("SELECT * FROM ns.t FOR VERSION AS OF 'v2' ORDER BY id")).containsExactly("id,name", "1|a", "2|b", "3|c");
    assertThat(query("SELECT * FROM ns.t AT (VERSION => 'audit') ORDER BY id"))
        .containsExactly("id,label,score", "1|a|null", "2|b|null", "3|c|null");
    assertThat(query("SELECT count(*) FROM ns.t FOR VERSION AS OF 'main'")).containsExactly("count_star()", "3");
  }

  @Test
  void aTimestampReadsTheSnapshotCurrentThen() throws Exception {
    String atS1 = Instant.ofEpochMilli(s1Time).toString();
    assertThat(query("SELECT id FROM ns.t FOR TIMESTAMP AS OF '" + atS1 + "' ORDER BY id")).containsExactly("id", "1", "2");
    String beforeS2 = Instant.ofEpochMilli(s2Time - 1).toString().replace("T", " ").replace("Z", " UTC");
    assertThat(query("SELECT id FROM ns.t FOR TIMESTAMP AS OF TIMESTAMP '" + beforeS2 + "' ORDER BY id"))
        .containsExactly("id", "1", "2");
    String atS2 = java.time.OffsetDateTime.ofInstant(Instant.ofEpochMilli(s2Time), java.time.ZoneOffset.ofHours(2)).toString();
    assertThat(query("SELECT id FROM ns.t AT (TIMESTAMP => '" + atS2 + "') ORDER BY id")).containsExactly("id", "1", "2", "3");
    assertThat(query("SELECT count(*) FROM ns.t FOR SYSTEM_TIME AS OF '2999-01-01'")).containsExactly("count_star()", "3");
  }

  @Test
  void severalSnapshotsOfOneTableMeetInOneQuery() throws Exception {
    assertThat(query("SELECT a.id, b.label FROM ns.t FOR VERSION AS OF " + s2 + " a JOIN ns.t FOR VERSION AS OF " + s4
        + " b ON a.id = b.id ORDER BY a.id")).containsExactly("id,label", "2|b", "3|c");
    // Rows deleted since s1: the current table next to the old snapshot.
    assertThat(query("SELECT o.id FROM ns.t o AT (VERSION => " + s1 + ") WHERE o.id NOT IN (SELECT id FROM ns.t)"))
        .containsExactly("id", "1");
    // The same clause twice shares one view; a CTE over a snapshot works as over a table.
    assertThat(query("WITH old AS (SELECT * FROM ns.t FOR VERSION AS OF " + s1 + ") SELECT count(*) FROM old, "
        + "ns.t FOR VERSION AS OF " + s1 + " again WHERE old.id = again.id")).containsExactly("count_star()", "2");
  }

  @Test
  void theTicketPinsWhatABranchReadWhenPlanned() throws Exception {
    Catalog catalog = warehouse.catalog("alpha");
    Table moving = TestWarehouse.createTable(catalog, "ns", "moving", SCHEMA, PartitionSpec.unpartitioned());
    TestWarehouse.append(moving, List.of(TestWarehouse.record(SCHEMA, 1L, "a")));
    moving.manageSnapshots().createBranch("dev").commit();
    String sql = "SELECT id FROM ns.moving FOR VERSION AS OF 'dev' ORDER BY id";
    Map<String, SnapshotPin> pins;
    try (PreparedQuery planned = engine.prepare("alpha", sql, Map.of())) {
      pins = planned.pins();
    }
    assertThat(pins).hasSize(1);
    TestWarehouse.append(moving, List.of(TestWarehouse.record(SCHEMA, 2L, "b")));
    moving.manageSnapshots().replaceBranch("dev", "main").commit();
    assertThat(query("alpha", sql, Map.of())).containsExactly("id", "1", "2");
    assertThat(query("alpha", sql, pins)).containsExactly("id", "1");
  }

  @Test
  void aMissingSnapshotRefOrTimeNamesTheTable() {
    assertThatThrownBy(() -> query("SELECT * FROM ns.t FOR VERSION AS OF 42"))
        .satisfies(code(ErrorCode.NOT_FOUND)).hasMessageContaining("\"ns\".\"t\" has no snapshot 42");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t AT (VERSION => 'nope')"))
        .satisfies(code(ErrorCode.NOT_FOUND)).hasMessageContaining("has no branch or tag `nope` (refs: audit, main, v2)");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t FOR TIMESTAMP AS OF '2001-01-01 00:00:00'"))
        .satisfies(code(ErrorCode.NOT_FOUND)).hasMessageContaining("has no snapshot committed at or before 2001-01-01");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t FOR TIMESTAMP AS OF 'yesterday'"))
        .satisfies(code(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("`yesterday` is not a timestamp");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t AT (TIMESTAMP => now())"))
        .satisfies(code(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("table `ns.t`: the time travel value must be a literal");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t AT (VERSION => 1 + 1)"))
        .satisfies(code(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("must be a literal");
    assertThatThrownBy(() -> query("SELECT * FROM ns.t AT (VERSION => 99999999999999999999)"))
        .satisfies(code(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("must be a literal");
    assertThatThrownBy(() -> query("SELECT * FROM information_schema.tables AT (VERSION => 1)"))
        .satisfies(code(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("cannot be read with time travel");
    // Another tenant has no such table: time travel reads only the tenant's own tables.
    assertThatThrownBy(() -> query("beta", "SELECT * FROM ns.t FOR VERSION AS OF " + s1, Map.of()))
        .satisfies(code(ErrorCode.NOT_FOUND)).hasMessageContaining("does not exist");
  }

  static java.util.function.Consumer<Throwable> code(ErrorCode code) {
    return e -> assertThat(e).isInstanceOfSatisfying(SeException.class, se -> assertThat(se.code()).isEqualTo(code));
  }
}

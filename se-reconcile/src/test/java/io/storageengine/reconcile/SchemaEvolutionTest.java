package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Columns renamed, added or dropped between ingestion and reconciliation land by field id. */
class SchemaEvolutionTest {
  static final Schema V1 = new Schema(List.of(
      required(1, "id", Types.LongType.get()),
      optional(2, "name", Types.StringType.get()),
      optional(3, "extra", Types.IntegerType.get()),
      optional(4, "info", Types.StructType.of(
          optional(5, "x", Types.IntegerType.get()),
          optional(6, "gone", Types.StringType.get()))),
      optional(7, "score", Types.IntegerType.get())),
      Set.of(1));

  @TempDir Path dir;

  /** Rows of the table's schema at ingestion time (the ids Iceberg assigned at creation). */
  private static List<Record> rows(Schema schema, long from, int n) {
    List<Record> rows = new ArrayList<>();
    for (long id = from; id < from + n; id++) {
      GenericRecord r = GenericRecord.create(schema);
      r.setField("id", id);
      r.setField("name", "n" + id);
      r.setField("extra", (int) id * 10);
      GenericRecord info = GenericRecord.create(schema.findField("info").type().asStructType());
      info.setField("x", (int) id);
      info.setField("gone", "g" + id);
      r.setField("info", info);
      r.setField("score", (int) id + 1);
      rows.add(r);
    }
    return rows;
  }

  private static void evolve(Table table) {
    table.refresh();
    table.updateSchema()
        .renameColumn("name", "full_name")
        .deleteColumn("extra")
        .addColumn("age", Types.IntegerType.get())
        .renameColumn("info.x", "xx")
        .deleteColumn("info.gone")
        .addColumn("info", "added", Types.StringType.get())
        .updateColumn("score", Types.LongType.get())
        .commit();
  }

  @Test
  void appendTableDataLandsByFieldId() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("people", V1, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "people");
      Schema ingested = table.schema();
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, ingested, rows(ingested, 0, 5)));
      evolve(table);

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      List<Record> actual = TestEnvironment.readAll(table);
      actual.sort(Comparator.comparing(r -> (Long) r.getField("id")));
      assertThat(actual).hasSize(5);
      for (Record r : actual) {
        long id = (Long) r.getField("id");
        assertThat(r.getField("full_name")).isEqualTo("n" + id);
        assertThat(r.getField("age")).isNull();
        assertThat(r.getField("score")).isEqualTo(id + 1);
        Record info = (Record) r.getField("info");
        assertThat(info.getField("xx")).isEqualTo((int) id);
        assertThat(info.getField("added")).isNull();
        assertThat(info.struct().fields()).extracting(Types.NestedField::name).containsExactly("xx", "added");
      }
      assertThat(table.schema().findField("extra")).isNull();
    }
  }

  @Test
  void entityTablePartialSemanticsSurviveARename() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("people", V1, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY));
      TableWal tw = env.walOf(table, "people");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      Schema ingested = table.schema();
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, ingested, rows(ingested, 0, 3)));
      reconciler.reconcile(tw);

      // A partial upsert ingested under the old names, reconciled after the rename.
      Schema partial = ingested.select("id", "name");
      GenericRecord r = GenericRecord.create(partial);
      r.setField("id", 1L);
      r.setField("name", "renamed-value");
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, partial, List.of(r)));
      evolve(table);
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);

      List<Record> actual = TestEnvironment.readAll(table);
      actual.sort(Comparator.comparing(x -> (Long) x.getField("id")));
      assertThat(actual).hasSize(3);
      Record one = actual.get(1);
      assertThat(one.getField("full_name")).isEqualTo("renamed-value");
      assertThat(one.getField("score")).isEqualTo(2L);
      assertThat(((Record) one.getField("info")).getField("xx")).isEqualTo(1);
      assertThat(actual.get(0).getField("full_name")).isEqualTo("n0");
    }
  }
}

package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Iceberg v3 defaults through reconciliation: a row written without a column gets the column's
 * write-default (append rows, new entity rows, rows re-created after a delete), a partial update
 * of an existing entity row keeps the old value, an explicit null stays null, and a column added
 * with a default reads its initial default in rows written before it, also once reconciliation
 * rewrites such a row. Read back with Iceberg's generic reader.
 */
class DefaultValuesTest {
  static final String AT = "2026-01-02T03:04:05.123456789Z";
  static final Schema SCHEMA = new Schema(List.of(
      required(1, "id", Types.LongType.get()),
      Types.NestedField.optional("tier").withId(2).ofType(Types.IntegerType.get())
          .withInitialDefault(Literal.of(0)).withWriteDefault(Literal.of(0)).build(),
      Types.NestedField.optional("name").withId(3).ofType(Types.StringType.get())
          .withInitialDefault(Literal.of("x")).withWriteDefault(Literal.of("x")).build(),
      Types.NestedField.optional("at").withId(4).ofType(Types.TimestampNanoType.withZone())
          .withWriteDefault(Literal.of(AT).to(Types.TimestampNanoType.withZone())).build(),
      Types.NestedField.optional(5, "note", Types.StringType.get())),
      Set.of(1));

  @TempDir Path dir;

  @Test
  void appendRowsWithoutAColumnGetItsWriteDefault() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      env.append(tw, frame(env, WalOperation.UPSERT, row(1L, "note", "only id and note")),
          frame(env, WalOperation.UPSERT, row(2L, "tier", 7, "name", null, "note", "explicit null name")));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);

      // Existing rows read the added column's initial default; new rows without it its write default.
      table.refresh();
      table.updateSchema().addColumn("c", Types.IntegerType.get(), Literal.of(5)).commit();
      table.refresh();
      env.append(tw, frame(env, WalOperation.UPSERT, row(3L)));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);

      Map<Long, String> rows = rows(table);
      assertThat(rows).containsExactly(
          Map.entry(1L, "0|x|" + AT + "|only id and note|5"),
          Map.entry(2L, "7|null|" + AT + "|explicit null name|5"),
          Map.entry(3L, "0|x|" + AT + "|null|5"));
    }
  }

  @Test
  void newEntityRowsGetTheDefaultAndPartialUpdatesKeepTheOldValue() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("people", SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY));
      TableWal tw = env.walOf(table, "people");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      env.append(tw, frame(env, WalOperation.UPSERT, row(1L, "tier", 3, "name", "one", "note", "seed")),
          frame(env, WalOperation.UPSERT, row(2L, "tier", 4, "name", "two", "note", "seed")),
          frame(env, WalOperation.UPSERT, row(3L, "tier", 5, "name", "three", "note", "seed")));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      table.refresh();
      table.updateSchema().addColumn("c", Types.IntegerType.get(), Literal.of(5)).commit();
      table.refresh();

      env.append(tw,
          // 1: one partial update (single-operation path): the old tier, name and c are kept.
          frame(env, WalOperation.UPSERT, row(1L, "note", "partial")),
          // 2: two partial updates (ordered fold): the old values are kept.
          frame(env, WalOperation.UPSERT, row(2L, "note", "partial a")),
          frame(env, WalOperation.UPSERT, row(2L, "note", "partial b")),
          // 3: deleted, then re-created without tier: a new row, so the default.
          frame(env, WalOperation.DELETE, row(3L)),
          frame(env, WalOperation.UPSERT, row(3L, "note", "re-created")),
          // 4: a new key with one operation; 5: a new key with two, the second carrying tier.
          frame(env, WalOperation.UPSERT, row(4L, "note", "new")),
          frame(env, WalOperation.UPSERT, row(5L, "note", "new a")),
          frame(env, WalOperation.UPSERT, row(5L, "tier", 9)));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);

      assertThat(rows(table)).containsExactly(
          Map.entry(1L, "3|one|" + AT + "|partial|5"),
          Map.entry(2L, "4|two|" + AT + "|partial b|5"),
          Map.entry(3L, "0|x|" + AT + "|re-created|5"),
          Map.entry(4L, "0|x|" + AT + "|new|5"),
          Map.entry(5L, "9|x|" + AT + "|new a|5"));
    }
  }

  /** A row of the given columns (name, value pairs after the id); the frame carries only those. */
  private static Record row(long id, Object... columnsAndValues) {
    List<String> names = new ArrayList<>(List.of("id"));
    for (int i = 0; i < columnsAndValues.length; i += 2) {
      names.add((String) columnsAndValues[i]);
    }
    Schema projection = SCHEMA.select(names);
    GenericRecord r = GenericRecord.create(projection);
    r.setField("id", id);
    for (int i = 0; i < columnsAndValues.length; i += 2) {
      r.setField((String) columnsAndValues[i], columnsAndValues[i + 1]);
    }
    return r;
  }

  private static WalFrame frame(TestEnvironment env, WalOperation op, Record row) {
    Schema projection = new Schema(row.struct().fields());
    return ArrowFrames.frame(env.allocator, op, 0, projection, List.of(row));
  }

  /** id to {@code tier|name|at|note|c}. */
  private static Map<Long, String> rows(Table table) {
    Map<Long, String> rows = new TreeMap<>();
    for (Record r : TestEnvironment.readAll(table)) {
      Object at = r.getField("at");
      rows.put((Long) r.getField("id"), r.getField("tier") + "|" + r.getField("name") + "|"
          + (at == null ? null : ((OffsetDateTime) at).toInstant()) + "|" + r.getField("note") + "|" + r.getField("c"));
    }
    return rows;
  }
}

package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Iceberg v3 {@code unknown} columns: always null and, as the spec says, never stored in data
 * files, also when an entity pass rewrites a row.
 */
class UnknownColumnTest {
  static final Schema SCHEMA = new Schema(List.of(
      required(1, "id", Types.LongType.get()),
      optional(2, "later", Types.UnknownType.get()),
      optional(3, "name", Types.StringType.get())),
      Set.of(1));

  @TempDir Path dir;

  @Test
  void entityRowsWithAnUnknownColumnAreWrittenWithoutIt() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("people", SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY));
      TableWal tw = env.walOf(table, "people");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      Schema idName = SCHEMA.select("id", "name");
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, idName,
          List.of(row(idName, 1L, "one"), row(idName, 2L, "two"))));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      Schema idOnly = SCHEMA.select("id");
      GenericRecord three = GenericRecord.create(idOnly);
      three.setField("id", 3L);
      env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, idName, List.of(row(idName, 1L, "uno"))),
          ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, idOnly, List.of(three)));
      assertThat(reconciler.reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);

      Map<Long, String> rows = new TreeMap<>();
      for (Record r : TestEnvironment.readAll(table)) {
        rows.put((Long) r.getField("id"), r.getField("later") + "|" + r.getField("name"));
      }
      assertThat(rows).containsExactly(Map.entry(1L, "null|uno"), Map.entry(2L, "null|two"), Map.entry(3L, "null|null"));
      table.refresh();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile file = task.file();
          assertThat(file.valueCounts()).containsKey(1).doesNotContainKey(2);
        }
      }
    }
  }

  private static Record row(Schema schema, long id, String name) {
    GenericRecord r = GenericRecord.create(schema);
    r.setField("id", id);
    r.setField("name", name);
    return r;
  }
}

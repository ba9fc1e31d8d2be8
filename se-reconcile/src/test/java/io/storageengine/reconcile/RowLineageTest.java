package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Iceberg v3 row lineage: an updated entity row keeps its {@code _row_id}; DVs are merged. */
class RowLineageTest {
  @TempDir Path dir;

  @Test
  void updatedRowsKeepTheirRowIdAndDeletionVectorsAreMergedPerFile() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("entity", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver"));
      TableWal tw = env.walOf(table, "entity");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      env.append(tw, EntityModelTest.frame(env, false, EntityModelTest.NON_KEY, ops(0, 10, 1)));
      reconciler.reconcile(tw);
      Map<Long, Long> before = rowIds(table);
      assertThat(before).hasSize(10);

      env.append(tw, EntityModelTest.frame(env, false, List.of("a"), ops(0, 3, 2)));
      ReconcileResult update = reconciler.reconcile(tw);
      assertThat(update.rowsRemoved()).isEqualTo(3);
      assertThat(update.deleteVectors()).isEqualTo(1);
      env.append(tw, EntityModelTest.frame(env, false, List.of("b"), ops(3, 6, 2)));
      ReconcileResult second = reconciler.reconcile(tw);
      assertThat(second.deleteVectors()).isEqualTo(1);

      // Rows already moved to a new file (whose _row_id column is explicit) move again.
      env.append(tw, EntityModelTest.frame(env, false, List.of("a"), ops(0, 2, 3)));
      reconciler.reconcile(tw);

      Map<Long, Long> after = rowIds(table);
      assertThat(after).isEqualTo(before);
      // One deletion vector per data file: the original file's second vector replaced its first
      // (6 positions), plus one for the first update's file (2 positions).
      table.refresh();
      assertThat(table.currentSnapshot().summary()).containsEntry("total-delete-files", "2");
      assertThat(table.currentSnapshot().summary()).containsEntry("total-position-deletes", "8");
    }
  }

  private static List<EntityModel.Op> ops(long fromKey, long toKey, long version) {
    List<EntityModel.Op> ops = new ArrayList<>();
    for (long k = fromKey; k < toKey; k++) {
      Map<String, Object> values = new LinkedHashMap<>();
      values.put("a", "a" + k + "v" + version);
      values.put("b", (int) k);
      values.put("c", List.of(1, 2));
      ops.add(new EntityModel.Op(false, k, version, values));
    }
    return ops;
  }

  private static Map<Long, Long> rowIds(Table table) throws Exception {
    table.refresh();
    Schema projection = TypeUtil.join(table.schema(), new Schema(MetadataColumns.ROW_ID));
    Map<Long, Long> ids = new HashMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record r : rows) {
        assertThat(ids.put((Long) r.getField("id"), (Long) r.getField(MetadataColumns.ROW_ID.name()))).isNull();
      }
    }
    return ids;
  }
}

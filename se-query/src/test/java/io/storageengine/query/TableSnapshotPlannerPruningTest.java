package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small snapshot's plans for changing filters are pruned in memory from its unfiltered plan:
 * the same files as Iceberg's scan with the filter keeps, and no second scan.
 */
class TableSnapshotPlannerPruningTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "region", Types.StringType.get()));

  @TempDir Path dir;

  @Test
  void prunedInMemoryAsIcebergsScanPrunes() throws Exception {
    TestWarehouse warehouse = new TestWarehouse();
    Table table = TestWarehouse.createTable(warehouse.localCatalog("t", dir.resolve("t")), "n", "events", SCHEMA,
        PartitionSpec.builderFor(SCHEMA).identity("region").build());
    for (int batch = 0; batch < 4; batch++) {
      List<org.apache.iceberg.data.Record> records = new ArrayList<>();
      for (long id = batch * 100L; id < batch * 100L + 50; id++) {
        records.add(TestWarehouse.record(SCHEMA, id, id % 2 == 0 ? "eu" : "us"));
      }
      TestWarehouse.append(table, records);
    }
    table.refresh();
    List<Expression> filters = List.of(Expressions.equal("id", 120L), Expressions.equal("id", 130L),
        Expressions.equal("id", 99_999L), Expressions.lessThan("id", 150L), Expressions.equal("region", "eu"),
        Expressions.and(Expressions.equal("region", "us"), Expressions.greaterThanOrEqual("id", 300L)),
        Expressions.or(Expressions.equal("ID", 5L), Expressions.isNull("region")));
    SnapshotPlanCache plans = new SnapshotPlanCache();
    try (DuckRuntime duckdb = DuckRuntime.open(Files.createDirectories(dir.resolve("local")),
        DuckRuntime.DEFAULT_FILE_CACHE_BYTES)) {
      TableSnapshotPlanner planner = new TableSnapshotPlanner(duckdb, plans);
      List<DataFileCache.Lease> leases = new ArrayList<>();
      for (Expression filter : filters) {
        Set<String> planned = new TreeSet<>();
        planner.plan("t", "n.events", table, SnapshotPin.current(table), filter, leases)
            .files().forEach(file -> planned.add(file.location()));
        assertThat(planned).as("filter %s", filter).isEqualTo(icebergScan(table, filter));
      }
      assertThat(plans.plans()).as("the unfiltered plan, kept with the files' statistics")
          .anySatisfy(plan -> assertThat(plan.dataFiles).hasSize(8));
      assertThat(plans.size()).isEqualTo(filters.size() + 1);
      leases.forEach(DataFileCache.Lease::close);
    }
  }

  private static Set<String> icebergScan(Table table, Expression filter) throws Exception {
    Set<String> files = new TreeSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().caseSensitive(false).filter(filter).planFiles()) {
      tasks.forEach(task -> files.add(task.file().location()));
    }
    return files;
  }
}

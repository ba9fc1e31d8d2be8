package io.storageengine.reconcile;

import io.storageengine.catalog.TableProperties;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;

/** An entity table with its model, a settable clock, and helpers shared by maintenance tests. */
final class MaintenanceFixture {
  /** A clock tests move by hand. */
  static final class ManualClock extends Clock {
    volatile Instant now = Instant.now();

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override public ZoneId getZone() { return ZoneOffset.UTC; }
    @Override public Clock withZone(ZoneId zone) { return this; }
    @Override public Instant instant() { return now; }
  }

  final TestEnvironment env;
  final Table table;
  final TableWal tw;
  final EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
  final Map<Long, List<EntityModel.Op>> opsBySeq = new TreeMap<>();
  final Random rnd = new Random(11);
  final ManualClock clock = new ManualClock();

  MaintenanceFixture(TestEnvironment env, String name, Map<String, String> extraProperties) {
    this.env = env;
    Map<String, String> props = new HashMap<>(Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
        TableProperties.VERSION_COLUMN, "ver"));
    props.putAll(extraProperties);
    this.table = env.createTable(name, EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
        props);
    this.tw = env.walOf(table, name);
  }

  ReconcileOptions options() {
    return TestEnvironment.options().withClock(clock);
  }

  Reconciler reconciler() {
    return env.reconciler(options());
  }

  Maintainer maintainer(MaintenancePolicy policy) {
    return maintainer(policy, MaintenanceHooks.NONE);
  }

  Maintainer maintainer(MaintenancePolicy policy, MaintenanceHooks hooks) {
    return new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb, options(), policy, hooks);
  }

  /** Policy for tests: compaction of two or more small files, other defaults. */
  static MaintenancePolicy compactingPolicy() {
    MaintenancePolicy d = MaintenancePolicy.defaults();
    return new MaintenancePolicy(true, d.targetFileSizeBytes(), 2, d.deleteRatio(), d.snapshotRetention(),
        d.minSnapshots(), d.orphanAge(), d.walGcAge(), d.maxManifests());
  }

  /** One segment of upserts (or deletes) of {@code keys}, at {@code version}. */
  long write(boolean delete, long version, long... keys) {
    List<EntityModel.Op> ops = new ArrayList<>();
    for (long k : keys) {
      Map<String, Object> values = new LinkedHashMap<>();
      if (!delete) {
        for (String c : EntityModelTest.NON_KEY) {
          values.put(c, EntityModelTest.randomValue(rnd, c));
        }
      }
      ops.add(new EntityModel.Op(delete, k, version, values));
    }
    WalFrame frame = EntityModelTest.frame(env, delete, EntityModelTest.NON_KEY, ops);
    long seq = env.wal.append(tw, List.of(frame));
    opsBySeq.put(seq, ops);
    return seq;
  }

  void applyCommitted(ReconcileResult result) {
    if (result.outcome() == ReconcileResult.Outcome.COMMITTED) {
      List<EntityModel.Op> batch = new ArrayList<>();
      for (long s = result.fromSeq(); s <= result.toSeq(); s++) {
        batch.addAll(opsBySeq.get(s));
      }
      model.applyBatch(batch);
    }
  }

  ReconcileResult reconcile() {
    ReconcileResult r = reconciler().reconcile(tw);
    applyCommitted(r);
    return r;
  }

  void assertMatchesModel(String context) {
    EntityModelTest.assertMatches(table, model, context);
  }

  /** key -> [_row_id, _last_updated_sequence_number] of every live row. */
  static Map<Long, List<Long>> lineage(Table table) {
    table.refresh();
    Schema projection = TypeUtil.join(table.schema(),
        new Schema(MetadataColumns.ROW_ID, MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER));
    Map<Long, List<Long>> ids = new HashMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record r : rows) {
        ids.put((Long) r.getField("id"), List.of((Long) r.getField(MetadataColumns.ROW_ID.name()),
            (Long) r.getField(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.name())));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return ids;
  }

  static List<DataFile> dataFiles(Table table) {
    table.refresh();
    List<DataFile> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  static int deleteFiles(Table table) {
    table.refresh();
    return Integer.parseInt(table.currentSnapshot().summary().getOrDefault("total-delete-files", "0"));
  }
}

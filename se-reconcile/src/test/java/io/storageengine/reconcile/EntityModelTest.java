package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model-based test of entity tables: random full upserts, partial upserts and deletes with
 * out-of-order versions and repeated keys, in random frame / segment / reconcile boundaries,
 * checked after every reconcile against {@link EntityModel}, read back with Iceberg's reader.
 */
class EntityModelTest {
  static final Schema SCHEMA = new Schema(List.of(
      required(1, "id", Types.LongType.get()),
      required(2, "ver", Types.LongType.get()),
      optional(3, "a", Types.StringType.get()),
      optional(4, "b", Types.IntegerType.get()),
      optional(5, "c", Types.ListType.ofOptional(6, Types.IntegerType.get()))),
      Set.of(1));
  static final List<String> NON_KEY = List.of("a", "b", "c");

  @TempDir Path dir;

  @Test
  void fixedSeedUnpartitioned() throws Exception {
    run(20240601L, 800, PartitionSpec.unpartitioned(), 100);
  }

  @Test
  void randomSeedsPartitioned() throws Exception {
    for (int i = 0; i < 2; i++) {
      long seed = System.nanoTime();
      System.out.println("EntityModelTest random seed " + seed);
      PartitionSpec spec = PartitionSpec.builderFor(SCHEMA).bucket("id", 3).build();
      run(seed, 300, spec, 40);
    }
  }

  /**
   * Partitioned by a column outside the key: an upsert that changes {@code b} moves its key to
   * another partition, a partial update without {@code b} leaves it where it is, and a delete
   * names the key alone; each key must still have exactly one row, in its latest partition.
   */
  @Test
  void randomSeedPartitionedByANonKeyColumn() throws Exception {
    long seed = System.nanoTime();
    System.out.println("EntityModelTest partitioned-by-b random seed " + seed);
    run(seed, 300, PartitionSpec.builderFor(SCHEMA).bucket("b", 3).build(), 40);
  }

  @Test
  void randomSeedSlicedPartitionedByANonKeyColumn() throws Exception {
    long seed = System.nanoTime();
    System.out.println("EntityModelTest sliced partitioned-by-b random seed " + seed);
    run(seed, 300, PartitionSpec.builderFor(SCHEMA).bucket("b", 3).build(), 40, 3);
  }

  @Test
  void fixedSeedSliced() throws Exception {
    // Every reconcile step is four slice passes: half the operations (and keys) of the unsliced run.
    run(20240602L, 400, PartitionSpec.unpartitioned(), 60, 4);
  }

  @Test
  void randomSeedSlicedPartitioned() throws Exception {
    long seed = System.nanoTime();
    System.out.println("EntityModelTest sliced random seed " + seed);
    run(seed, 300, PartitionSpec.builderFor(SCHEMA).bucket("id", 3).build(), 40, 3);
  }

  @Test
  void fixedSeedSlicedWithSplitsAndMerges() throws Exception {
    // Maintenance between passes with a tiny se.slice.target-rows, for six passes 3 (split above
    // 6 rows), for the next six 60 (merge neighbours below 30): the slices change under the load.
    List<String> changes = run(20240603L, 600, PartitionSpec.unpartitioned(), 60, 2, true);
    assertThat(changes).anySatisfy(c -> assertThat(c).startsWith("split"))
        .anySatisfy(c -> assertThat(c).startsWith("merge"));
  }

  private void run(long seed, int operations, PartitionSpec spec, int keySpace) throws Exception {
    run(seed, operations, spec, keySpace, 0);
  }

  private void run(long seed, int operations, PartitionSpec spec, int keySpace, int slices) throws Exception {
    run(seed, operations, spec, keySpace, slices, false);
  }

  /**
   * @param slices {@code se.slice.count} of the table, 0 for a table that is not sliced
   * @param resize run table maintenance between passes, with a tiny target of rows per slice
   * @return the slice splits and merges maintenance committed
   */
  private List<String> run(long seed, int operations, PartitionSpec spec, int keySpace, int slices, boolean resize)
      throws Exception {
    List<String> changes = new ArrayList<>();
    Path sub = dir.resolve("seed-" + seed);
    try (TestEnvironment env = new TestEnvironment(sub)) {
      Random rnd = new Random(seed);
      Map<String, String> properties = new HashMap<>(
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY, TableProperties.VERSION_COLUMN, "ver"));
      if (slices > 0) {
        properties.put(TableProperties.SLICE_COUNT, Integer.toString(slices));
      }
      Table table = env.createTable("entity", SCHEMA, spec, SortOrder.unsorted(), properties);
      TableWal tw = env.walOf(table, "entity");
      EntityModel model = new EntityModel(NON_KEY);
      Map<Long, List<EntityModel.Op>> opsBySeq = new TreeMap<>();
      ReconcileOptions options = TestEnvironment.options();
      int done = 0;
      int reconciles = 0;
      while (done < operations) {
        List<EntityModel.Op> segmentOps = new ArrayList<>();
        List<WalFrame> frames = new ArrayList<>();
        int frameCount = 1 + rnd.nextInt(3);
        for (int f = 0; f < frameCount && done < operations; f++) {
          int kind = rnd.nextInt(4); // 0,1 full; 2 partial; 3 delete
          List<String> carried = new ArrayList<>(NON_KEY);
          if (kind == 2) {
            carried.removeIf(c -> rnd.nextBoolean());
          }
          int rows = 1 + rnd.nextInt(8);
          List<EntityModel.Op> frameOps = new ArrayList<>();
          for (int r = 0; r < rows; r++) {
            long key = rnd.nextInt(keySpace);
            long version = rnd.nextInt(25);
            Map<String, Object> values = new LinkedHashMap<>();
            if (kind != 3) {
              for (String c : carried) {
                values.put(c, randomValue(rnd, c));
              }
            }
            frameOps.add(new EntityModel.Op(kind == 3, key, version, values));
          }
          frames.add(frame(env, kind == 3, carried, frameOps));
          segmentOps.addAll(frameOps);
          done += rows;
        }
        long seq = env.wal.append(tw, frames);
        opsBySeq.put(seq, segmentOps);

        if (rnd.nextInt(10) < 3 || done >= operations) {
          ReconcileOptions passOptions = rnd.nextInt(3) == 0
              ? options.withMaxBytesPerCommit(1 + rnd.nextInt(4000)) : options;
          ReconcileResult result = env.reconciler(passOptions).reconcile(tw);
          reconciles++;
          if (result.outcome() == ReconcileResult.Outcome.COMMITTED) {
            List<EntityModel.Op> batch = new ArrayList<>();
            for (long s = result.fromSeq(); s <= result.toSeq(); s++) {
              batch.addAll(opsBySeq.get(s));
            }
            model.applyBatch(batch);
          }
          assertMatches(table, model, "seed " + seed + ", reconcile " + reconciles);
          if (resize && rnd.nextInt(3) > 0) {
            String target = (reconciles / 6) % 2 == 0 ? "3" : "60";
            table.refresh();
            if (!target.equals(table.properties().get(TableProperties.SLICE_TARGET_ROWS))) {
              table.updateProperties().set(TableProperties.SLICE_TARGET_ROWS, target).commit();
            }
            io.storageengine.reconcile.maintenance.MaintenanceResult maintained =
                new io.storageengine.reconcile.maintenance.Maintainer(env.catalogs, env.wal, env.store,
                    env.tombstones, env.allocator, env.duckdb, options,
                    io.storageengine.reconcile.maintenance.MaintenancePolicy.defaults()).maintain(tw);
            assertThat(maintained.errors()).as("seed " + seed + ", maintenance").isEmpty();
            changes.addAll(maintained.sliceChanges());
            assertMatches(table, model, "seed " + seed + ", maintenance after reconcile " + reconciles);
          }
          if (resize) {
            SlicedTableTest.assertSlicesConsistent(env, tw, table);
          } else if (slices > 0) {
            SlicedTableTest.assertSlicesConsistent(table, slices);
          }
        }
      }
      // Drain: everything ends up published.
      ReconcileResult last;
      do {
        last = env.reconciler(options).reconcile(tw);
        if (last.outcome() == ReconcileResult.Outcome.COMMITTED) {
          List<EntityModel.Op> batch = new ArrayList<>();
          for (long s = last.fromSeq(); s <= last.toSeq(); s++) {
            batch.addAll(opsBySeq.get(s));
          }
          model.applyBatch(batch);
        }
      } while (last.outcome() == ReconcileResult.Outcome.COMMITTED);
      assertMatches(table, model, "seed " + seed + ", final");
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(opsBySeq.size());
      if (resize) {
        System.out.println("EntityModelTest seed " + seed + ": slice changes " + changes);
      }
    }
    return changes;
  }

  static Object randomValue(Random rnd, String column) {
    if (rnd.nextInt(6) == 0) {
      return null;
    }
    return switch (column) {
      case "a" -> "v" + rnd.nextInt(1000);
      case "b" -> rnd.nextInt(1000);
      case "c" -> {
        List<Integer> l = new ArrayList<>();
        for (int i = rnd.nextInt(3); i > 0; i--) {
          l.add(rnd.nextInt(100));
        }
        yield l;
      }
      default -> throw new IllegalArgumentException(column);
    };
  }

  static WalFrame frame(TestEnvironment env, boolean delete, List<String> carried, List<EntityModel.Op> ops) {
    List<String> names = new ArrayList<>(List.of("id", "ver"));
    if (!delete) {
      names.addAll(carried);
    }
    Schema projection = SCHEMA.select(names);
    List<Record> rows = new ArrayList<>();
    for (EntityModel.Op op : ops) {
      GenericRecord r = GenericRecord.create(projection);
      r.setField("id", op.key());
      r.setField("ver", op.version());
      op.values().forEach((name, value) -> {
        if (projection.findField(name) != null) {
          r.setField(name, value);
        }
      });
      rows.add(r);
    }
    return ArrowFrames.frame(env.allocator, delete ? WalOperation.DELETE : WalOperation.UPSERT, 0, projection, rows);
  }

  static void assertMatches(Table table, EntityModel model, String context) {
    List<Record> actual = TestEnvironment.readAll(table);
    Map<Long, Map<String, Object>> byKey = new HashMap<>();
    for (Record r : actual) {
      Map<String, Object> values = new HashMap<>();
      values.put("ver", r.getField("ver"));
      for (String c : NON_KEY) {
        values.put(c, r.getField(c));
      }
      Object previous = byKey.put((Long) r.getField("id"), values);
      assertThat(previous).as("%s: duplicate key %s", context, r.getField("id")).isNull();
    }
    assertThat(byKey).as(context).isEqualTo(model.rows);
  }
}

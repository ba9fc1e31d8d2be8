package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.TableWal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Passes over a remote warehouse read existing data files through the runtime's cache, once. */
class RemoteWarehouseTest {
  @TempDir Path dir;

  private static EntityModel.Op upsert(long key, long version) {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("a", "k" + key + "v" + version);
    values.put("b", (int) version);
    values.put("c", null);
    return new EntityModel.Op(false, key, version, values);
  }

  @Test
  void laterPassesReuseTheCopiesEarlierPassesDownloaded() throws Exception {
    try (TestEnvironment env = TestEnvironment.remote(dir)) {
      Table table = env.createTable("entity", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver"));
      assertThat(table.location()).startsWith("mem://");
      TableWal tw = env.walOf(table, "entity");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      List<String> all = EntityModelTest.NON_KEY;
      Path copies = env.duckdb.files().directory(TestEnvironment.CATALOG);

      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(1, 1), upsert(2, 1))));
      reconciler.reconcile(tw);
      assertThat(env.duckdb.files().size()).as("the first pass reads no existing file").isZero();

      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(1, 2))));
      reconciler.reconcile(tw);
      assertThat(env.duckdb.files().size()).as("the first file, downloaded").isEqualTo(1);
      Map<Path, Object> firstCopies = copiesIn(copies);
      assertThat(firstCopies).hasSize(1);

      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(1, 3), upsert(2, 3))));
      reconciler.reconcile(tw);
      assertThat(env.duckdb.files().size()).as("the second pass's file added").isEqualTo(2);
      Map<Path, Object> later = copiesIn(copies);
      firstCopies.forEach((path, key) -> assertThat(later.get(path)).as("not downloaded again").isEqualTo(key));

      List<Record> rows = TestEnvironment.readAll(table);
      assertThat(rows).hasSize(2).allSatisfy(r -> assertThat(r.getField("ver")).isEqualTo(3L));
    }
  }

  /** The cached copies, each with its file key (a new download would be a new file). */
  private static Map<Path, Object> copiesIn(Path directory) throws Exception {
    Map<Path, Object> keys = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(directory)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        keys.put(file, Files.readAttributes(file, BasicFileAttributes.class).fileKey());
      }
    }
    return keys;
  }
}

package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableProperties;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tombstones stop late old upserts until they expire; their files stay few. */
class TombstoneTest {
  /** The tombstone cache of the engine these tests play. */
  private final TombstoneCache cache = TombstoneCache.create();

  @AfterEach
  void closeCache() {
    cache.close();
  }

  @TempDir Path dir;

  private static EntityModel.Op upsert(long key, long version) {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("a", "k" + key + "v" + version);
    values.put("b", (int) version);
    values.put("c", null);
    return new EntityModel.Op(false, key, version, values);
  }

  private static EntityModel.Op delete(long key, long version) {
    return new EntityModel.Op(true, key, version, Map.of());
  }

  /**
   * A batch of keys in every bucket (found with one listing of all; only the batch's tombstones
   * go to DuckDB): late upserts of deleted keys stay ignored, the other keys apply.
   */
  @Test
  void aLargeBatchSeesTheTombstonesOfItsKeys() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = EntityTailStateTest.members(env);
      TableWal tw = env.walOf(table, "members");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      List<EntityModel.Op> first = new java.util.ArrayList<>(SlicedTableTest.upserts(0, 30_000, 4));
      List<EntityModel.Op> deletes = SlicedTableTest.deletes(0, 25_000, 5);
      SlicedTableTest.append(env, tw, first);
      SlicedTableTest.append(env, tw, deletes);
      reconciler.reconcile(tw);
      model.applyBatch(first);
      model.applyBatch(deletes);
      // 25 k late upserts of deleted keys (version 3, below the tombstones' 5) and 10 k new keys.
      List<EntityModel.Op> late = new java.util.ArrayList<>(SlicedTableTest.upserts(0, 25_000, 3));
      late.addAll(SlicedTableTest.upserts(30_000, 40_000, 6));
      SlicedTableTest.append(env, tw, late);
      reconciler.reconcile(tw);
      model.applyBatch(late);
      EntityModelTest.assertMatches(table, model, "after the late upserts");
      assertThat(model.rows).hasSize(15_000);
    }
  }

  @Test
  void lateOldUpsertIsIgnoredWithinRetentionAndAppliedAfterExpiry() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("entity", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver", TableProperties.TOMBSTONE_RETENTION, "P1D"));
      TableWal tw = env.walOf(table, "entity");
      Instant[] now = {Instant.parse("2024-06-01T00:00:00Z")};
      Clock clock = new Clock() {
        @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
        @Override public Clock withZone(java.time.ZoneId zone) { return this; }
        @Override public Instant instant() { return now[0]; }
      };
      Reconciler reconciler = env.reconciler(TestEnvironment.options().withClock(clock));
      List<String> all = EntityModelTest.NON_KEY;

      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(1, 4), upsert(2, 4))));
      reconciler.reconcile(tw);
      env.append(tw, EntityModelTest.frame(env, true, all, List.of(delete(1, 5), delete(2, 5))));
      reconciler.reconcile(tw);
      assertThat(env.store.list(tw.tombstonePrefix())).isNotEmpty();

      // Within the retention: the late upsert of version 3 does not resurrect key 1.
      now[0] = now[0].plus(Duration.ofHours(12));
      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(1, 3))));
      reconciler.reconcile(tw);
      assertThat(TestEnvironment.readAll(table)).isEmpty();

      // After expiry the tombstone is forgotten: the same late upsert now lands.
      now[0] = now[0].plus(Duration.ofDays(2));
      env.append(tw, EntityModelTest.frame(env, false, all, List.of(upsert(2, 3))));
      reconciler.reconcile(tw);
      List<Record> rows = TestEnvironment.readAll(table);
      assertThat(rows).singleElement().satisfies(r -> {
        assertThat(r.getField("id")).isEqualTo(2L);
        assertThat(r.getField("ver")).isEqualTo(3L);
      });
    }
  }

  @Test
  void bucketsWithManyFilesAreCompactedAndExpiredEntriesDropped() {
    io.storageengine.objectstore.MemoryObjectStore store = new io.storageengine.objectstore.MemoryObjectStore();
    TableWal tw = new TableWal("tenant1", java.util.UUID.randomUUID());
    TombstoneStore tombstones = new TombstoneStore(store, tw, cache);
    String key = "42";
    for (long seq = 1; seq <= 12; seq++) {
      tombstones.write(seq, seq, List.of(new TombstoneStore.Tombstone(key, Long.toString(seq), seq, seq * 1000)));
    }
    Instant now = Instant.ofEpochMilli(12_000);
    Map<String, TombstoneStore.Tombstone> found = tombstones.load(List.of(key), 12, now, Duration.ofSeconds(5));
    assertThat(found.get(key).version()).isEqualTo("12");
    List<ObjectStore.ObjectInfo> files = store.list(tw.tombstonePrefix());
    assertThat(files).hasSize(1);
    // Only entries not older than 5 s survive the compaction: seqs 7..12.
    assertThat(tombstones.load(List.of(key), 12, now, Duration.ofDays(1)).get(key).seq()).isEqualTo(12);
    assertThat(new String(store.get(files.get(0).key()).orElseThrow().data())).doesNotContain("\"s\":6,");
    // Entries above the committed mark (written by an attempt that did not commit) do not count.
    tombstones.write(13, 13, List.of(new TombstoneStore.Tombstone(key, "13", 13, 13_000)));
    assertThat(tombstones.load(List.of(key), 12, now, Duration.ofDays(1)).get(key).seq()).isEqualTo(12);
    assertThat(tombstones.load(List.of(key), 13, now, Duration.ofDays(1)).get(key).seq()).isEqualTo(13);
  }

  @Test
  void aFileRewrittenInPlaceIsReadAgainAndManyBucketsLoadInParallel() throws Exception {
    ObjectStore store = new io.storageengine.objectstore.FsObjectStore(dir.resolve("store"));
    TableWal tw = new TableWal("tenant1", java.util.UUID.randomUUID());
    TombstoneStore tombstones = new TombstoneStore(store, tw, cache);
    Instant now = Instant.ofEpochMilli(10_000);
    List<String> keys = new java.util.ArrayList<>();
    List<TombstoneStore.Tombstone> written = new java.util.ArrayList<>();
    for (int k = 0; k < 2_000; k++) {
      keys.add("key-" + k);
      written.add(new TombstoneStore.Tombstone("key-" + k, "1", 1, 1_000));
    }
    tombstones.write(1, 1, written);
    assertThat(store.list(tw.tombstonePrefix())).hasSize(TombstoneStore.BUCKETS);
    Map<String, TombstoneStore.Tombstone> found = tombstones.load(keys, 1, now, Duration.ofDays(1));
    assertThat(found).hasSize(2_000);
    assertThat(found.values()).allMatch(t -> t.version().equals("1"));

    // Another process rewrites the files of the same WAL range (a rerun of the pass): the cached
    // parse of the old content must not be used.
    List<TombstoneStore.Tombstone> rewritten = new java.util.ArrayList<>();
    for (String key : keys) {
      rewritten.add(new TombstoneStore.Tombstone(key, "2", 1, 2_000));
    }
    try (TombstoneCache otherProcess = TombstoneCache.create()) {
      new TombstoneStore(store, tw, otherProcess).write(1, 1, rewritten);
    }
    found = tombstones.load(keys, 1, now, Duration.ofDays(1));
    assertThat(found).hasSize(2_000);
    assertThat(found.values()).allMatch(t -> t.version().equals("2"));
  }

  /**
   * Keys looked up in few buckets (each listed) and in many (one listing of all), against a
   * model: a key's newest entry with a committed seq that has not expired, over files of several
   * passes per bucket, uncommitted attempts and expired entries among them.
   */
  @Test
  void lookupsMatchAModelOfEveryEntry() {
    io.storageengine.objectstore.MemoryObjectStore store = new io.storageengine.objectstore.MemoryObjectStore();
    TableWal tw = new TableWal("tenant1", java.util.UUID.randomUUID());
    TombstoneStore tombstones = new TombstoneStore(store, tw, cache);
    java.util.Random random = new java.util.Random(7);
    List<TombstoneStore.Tombstone> all = new java.util.ArrayList<>();
    for (long seq = 1; seq <= 7; seq++) { // 7 passes: up to 7 files a bucket, none compacted
      List<TombstoneStore.Tombstone> pass = new java.util.ArrayList<>();
      for (int k = 0; k < 3_000; k++) {
        if (random.nextInt(3) == 0) {
          pass.add(new TombstoneStore.Tombstone(Integer.toString(k - 1_500), Long.toString(seq), seq, seq * 1_000));
        }
      }
      tombstones.write(seq, seq, pass);
      all.addAll(pass);
    }
    long committed = 6; // pass 7 did not commit
    Instant now = Instant.ofEpochMilli(10_000);
    Duration retention = Duration.ofMillis(7_500); // entries of passes 1 and 2 expired
    for (int asked : new int[] {5, 40, 3_000}) {
      List<String> keys = new java.util.ArrayList<>();
      for (int k = 0; k < asked; k++) {
        keys.add(Integer.toString((asked == 3_000 ? k : random.nextInt(3_000)) - 1_500));
      }
      Map<String, TombstoneStore.Tombstone> expected = new java.util.HashMap<>();
      for (TombstoneStore.Tombstone t : all) {
        if (keys.contains(t.key()) && t.seq() <= committed && t.deletedAtMillis() >= 2_500) {
          expected.merge(t.key(), t, (a, b) -> b.seq() > a.seq() ? b : a);
        }
      }
      assertThat(expected).isNotEmpty();
      assertThat(tombstones.load(keys, committed, now, retention)).as("%d keys", asked).isEqualTo(expected);
      long[] integers = keys.stream().mapToLong(Long::parseLong).toArray();
      assertThat(tombstones.loadIntegers(integers, committed, now, retention)).as("%d keys", asked)
          .isEqualTo(expected);
    }
  }

  /** Integer keys find their tombstones without their text made, at the edges of {@code long} too. */
  @Test
  void integerKeysAreHashedAndFoundAsTheirText() {
    java.util.Random random = new java.util.Random(11);
    for (int i = 0; i < 100_000; i++) {
      long v = switch (i) {
        case 0 -> Long.MIN_VALUE;
        case 1 -> Long.MAX_VALUE;
        case 2 -> 0;
        case 3 -> -1;
        default -> i % 2 == 0 ? random.nextLong() : random.nextInt(1_000_000) - 500_000;
      };
      assertThat(TombstoneStore.textHash(v)).as("%d", v).isEqualTo(Long.toString(v).hashCode());
      assertThat(TombstoneStore.canonicalInteger(Long.toString(v))).isEqualTo(v);
    }
    assertThat(TombstoneStore.canonicalInteger("007")).isNull();
    assertThat(TombstoneStore.canonicalInteger("+7")).isNull();
    assertThat(TombstoneStore.canonicalInteger("a")).isNull();

    io.storageengine.objectstore.MemoryObjectStore store = new io.storageengine.objectstore.MemoryObjectStore();
    TableWal tw = new TableWal("tenant1", java.util.UUID.randomUUID());
    TombstoneStore tombstones = new TombstoneStore(store, tw, cache);
    tombstones.write(1, 1, List.of(new TombstoneStore.Tombstone(Long.toString(Long.MIN_VALUE), "1", 1, 1_000),
        new TombstoneStore.Tombstone(Long.toString(Long.MAX_VALUE), "1", 1, 1_000),
        new TombstoneStore.Tombstone("-42", "1", 1, 1_000)));
    // A file with a key that is no canonical integer (text of another key type) is read by text.
    long sameBucket = 0;
    while (TombstoneStore.bucket(Long.toString(sameBucket)) != TombstoneStore.bucket("0042")) {
      sameBucket++;
    }
    tombstones.write(2, 2, List.of(new TombstoneStore.Tombstone("0042", "2", 2, 1_000),
        new TombstoneStore.Tombstone(Long.toString(sameBucket), "2", 2, 1_000),
        new TombstoneStore.Tombstone("-42", "2", 2, 1_000)));
    Map<String, TombstoneStore.Tombstone> found = tombstones.loadIntegers(
        new long[] {Long.MIN_VALUE, Long.MAX_VALUE, -42, 42, 7, sameBucket}, 2, Instant.ofEpochMilli(1_000),
        Duration.ofDays(1));
    assertThat(found).containsOnlyKeys(Long.toString(Long.MIN_VALUE), Long.toString(Long.MAX_VALUE), "-42",
        Long.toString(sameBucket));
    assertThat(found.get("-42").seq()).isEqualTo(2);
  }
}

package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenanceLoop;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.wal.TableWal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Snapshot expiry, orphan files, WAL and tombstone garbage collection, policies, the loop. */
class MaintenanceCleanupTest {
  /** The tombstone cache of the engine these tests play. */
  private final TombstoneCache cache = TombstoneCache.create();

  @AfterEach
  void closeCache() {
    cache.close();
  }

  @TempDir Path dir;

  private static MaintenancePolicy policy(Duration retention, int minSnapshots, Duration orphanAge,
      Duration walGcAge) {
    return new MaintenancePolicy(true, MaintenancePolicy.DEFAULT_TARGET_FILE_SIZE, 1000, 0.2, retention,
        minSnapshots, orphanAge, walGcAge, 1000);
  }

  @Test
  void expiryKeepsTheSnapshotCarryingTheWalMark() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 5; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(tw);
      }
      // Another writer commits snapshots without a mark on top of the last reconcile commit.
      for (int i = 0; i < 3; i++) {
        table.newDelete().deleteFromRowFilter(Expressions.equal("id", -1L)).commit();
      }
      table.refresh();
      assertThat(table.currentSnapshot().summary()).doesNotContainKey(TableProperties.SUMMARY_WAL_SEQ);
      assertThat(table.snapshots()).hasSize(8);

      MaintenanceResult result = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb,
          TestEnvironment.options().withClock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofSeconds(5))),
          policy(Duration.ZERO, 1, MaintenancePolicy.DEFAULT_ORPHAN_AGE, MaintenancePolicy.DEFAULT_WAL_GC_AGE))
          .maintain(tw);

      assertThat(result.errors()).isEmpty();
      // The three unmarked snapshots and the marked one below them stay; four older ones go.
      assertThat(result.snapshotsExpired()).isEqualTo(4);
      table.refresh();
      assertThat(table.snapshots()).hasSize(4);
      assertThat(WalHighWaterMark.of(table)).isEqualTo(5);
      env.append(tw, AppendTableTest.frame(env, 50, 10));
      ReconcileResult next = reconciler.reconcile(tw);
      assertThat(next.fromSeq()).isEqualTo(6);
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 60);
    }
  }

  @Test
  void orphanCleanupDeletesOnlyOldUnreferencedFilesOfTheTable() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      Table sibling = env.createTable("events2", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      TableWal siblingWal = env.walOf(sibling, "events2");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 3; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(tw);
      }
      env.append(siblingWal, AppendTableTest.frame(env, 0, 10));
      reconciler.reconcile(siblingWal);
      Path tableDir = Path.of(java.net.URI.create(table.location()));
      Path oldOrphan = Files.writeString(tableDir.resolve("data/crashed-attempt.parquet"), "x");
      Path oldMetadataOrphan = Files.writeString(tableDir.resolve("metadata/lost-manifest.avro"), "x");
      // Everything is old, except one orphan that could belong to a commit in progress.
      FileTime old = FileTime.from(Instant.now().minus(Duration.ofDays(3)));
      try (Stream<Path> files = Files.walk(dir.resolve("warehouse"))) {
        for (Path p : files.filter(Files::isRegularFile).toList()) {
          Files.setLastModifiedTime(p, old);
        }
      }
      Path freshOrphan = Files.writeString(tableDir.resolve("data/in-progress.parquet"), "x");
      List<Path> before = regularFiles(dir.resolve("warehouse"));

      MaintenanceResult result = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb,
          TestEnvironment.options(), MaintenancePolicy.defaults()).maintain(tw);

      assertThat(result.errors()).isEmpty();
      List<Path> after = regularFiles(dir.resolve("warehouse"));
      List<Path> gone = new ArrayList<>(before);
      gone.removeAll(after);
      assertThat(gone).containsExactlyInAnyOrder(oldOrphan, oldMetadataOrphan);
      assertThat(result.orphanFilesDeleted()).isEqualTo(2);
      assertThat(freshOrphan).exists();
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 30);
      AppendTableTest.assertIds(TestEnvironment.readAll(sibling), 10);
    }
  }

  private static List<Path> regularFiles(Path root) throws Exception {
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(Files::isRegularFile).toList();
    }
  }

  @Test
  void walGarbageCollectionStopsAtPublishedSeqAndAtTheSafetyAge() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      MaintenanceFixture.ManualClock clock = new MaintenanceFixture.ManualClock();
      ReconcileOptions onePerPass = TestEnvironment.options().withMaxBytesPerCommit(1).withClock(clock);
      for (int s = 0; s < 6; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
      }
      for (int s = 0; s < 3; s++) {
        env.reconciler(onePerPass).reconcile(tw);
      }
      // Segment 4 is committed but its pass crashed before publishing.
      Reconciler crashing = env.reconciler(onePerPass, new ReconcileHooks() {
        @Override
        public void afterCommit(TableWal table, long fromSeq, long toSeq) {
          throw new IllegalStateException("injected crash after commit");
        }
      });
      assertThatThrownBy(() -> crashing.reconcile(tw)).hasMessage("injected crash after commit");
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(3);
      Maintainer maintainer = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb, onePerPass,
          policy(MaintenancePolicy.DEFAULT_SNAPSHOT_RETENTION, 10, MaintenancePolicy.DEFAULT_ORPHAN_AGE,
              Duration.ofMinutes(10)));

      // Every commit is younger than the safety age: nothing is collected.
      MaintenanceResult young = maintainer.maintain(tw);
      assertThat(young.walSegmentsDeleted()).isZero();
      assertThat(env.wal.segmentsAfter(tw, 0)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);

      // Old enough: collected up to published_seq (3), not up to the committed mark (4).
      clock.advance(Duration.ofMinutes(11));
      MaintenanceResult old = maintainer.maintain(tw);
      assertThat(old.walSegmentsDeleted()).isEqualTo(3);
      assertThat(old.walGcSeq()).isEqualTo(3);
      assertThat(env.wal.segmentsAfter(tw, 0)).containsExactly(4L, 5L, 6L);

      // The next pass commits 5 and publishes up to 5; when 5 was committed less than the safety
      // age ago, only 4 (committed before) is collected.
      Thread.sleep(5);
      assertThat(env.reconciler(onePerPass).reconcile(tw).toSeq()).isEqualTo(5);
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(5);
      long committedAt5 = env.catalog.loadTable(TableIdentifier.of("db", "events")).currentSnapshot().timestampMillis();
      clock.now = Instant.ofEpochMilli(committedAt5).plus(Duration.ofMinutes(10)).minusMillis(1);
      MaintenanceResult partial = maintainer.maintain(tw);
      assertThat(partial.walSegmentsDeleted()).isEqualTo(1);
      assertThat(env.wal.segmentsAfter(tw, 0)).containsExactly(5L, 6L);
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 50);
    }
  }

  @Test
  void expiredTombstonesAreRemovedFromStorage() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of(TableProperties.TOMBSTONE_RETENTION, "P1D"));
      f.write(false, 1, 1, 2, 3);
      f.reconcile();
      f.write(true, 2, 1, 2);
      f.reconcile();
      f.clock.advance(Duration.ofHours(20));
      f.write(true, 3, 3);
      f.reconcile();
      assertThat(env.store.list(f.tw.tombstonePrefix())).isNotEmpty();
      Maintainer maintainer = f.maintainer(policy(MaintenancePolicy.DEFAULT_SNAPSHOT_RETENTION, 10,
          MaintenancePolicy.DEFAULT_ORPHAN_AGE, MaintenancePolicy.DEFAULT_WAL_GC_AGE));

      assertThat(maintainer.maintain(f.tw).tombstones().entriesExpired()).isZero();
      f.clock.advance(Duration.ofHours(6));
      MaintenanceResult first = maintainer.maintain(f.tw);
      assertThat(first.tombstones().entriesExpired()).isEqualTo(2);
      f.clock.advance(Duration.ofDays(1));
      MaintenanceResult second = maintainer.maintain(f.tw);
      assertThat(second.tombstones().entriesExpired()).isEqualTo(1);
      assertThat(env.store.list(f.tw.tombstonePrefix())).isEmpty();
      f.assertMatchesModel("after tombstone expiry");
    }
  }

  @Test
  void tombstoneExpiryRewritesMixedFilesAndSkipsUncommittedOnes() {
    MemoryObjectStore store = new MemoryObjectStore();
    TableWal tw = new TableWal("tenant1", UUID.randomUUID());
    TombstoneStore tombstones = new TombstoneStore(store, tw, cache);
    String k = "7";
    String sameBucket = "8";
    for (int i = 8; TombstoneStore.bucket(sameBucket) != TombstoneStore.bucket(k); i++) {
      sameBucket = Integer.toString(i);
    }
    tombstones.write(1, 1, List.of(new TombstoneStore.Tombstone(k, "1", 1, 1_000)));
    tombstones.write(2, 2, List.of(new TombstoneStore.Tombstone(k, "2", 2, 1_000),
        new TombstoneStore.Tombstone(sameBucket, "2", 2, 9_000)));
    tombstones.write(3, 3, List.of(new TombstoneStore.Tombstone(k, "3", 3, 1_000)));

    TombstoneStore.Expiry expiry = tombstones.expire(Instant.ofEpochMilli(10_000), Duration.ofSeconds(5), 2);

    assertThat(expiry).isEqualTo(new TombstoneStore.Expiry(1, 1, 2));
    assertThat(store.list(tw.tombstonePrefix())).hasSize(2);
    Map<String, TombstoneStore.Tombstone> live = tombstones.load(List.of(k, sameBucket), 3, Instant.ofEpochMilli(0),
        Duration.ofDays(1));
    assertThat(live.get(sameBucket).seq()).isEqualTo(2);
    assertThat(live.get(k).seq()).isEqualTo(3); // above the committed mark at expiry time: kept
  }

  @Test
  void policyReadsTablePropertiesOverDefaults() {
    MaintenancePolicy d = MaintenancePolicy.defaults();
    assertThat(d).isEqualTo(new MaintenancePolicy(true, 128L << 20, 5, 0.2, Duration.ofHours(1), 10,
        Duration.ofDays(1), Duration.ofMinutes(10), 50));
    Map<String, String> props = new HashMap<>();
    props.put(MaintenancePolicy.ENABLED, "false");
    props.put(MaintenancePolicy.TARGET_FILE_SIZE, "1048576");
    props.put(MaintenancePolicy.MIN_INPUT_FILES, "3");
    props.put(MaintenancePolicy.DELETE_RATIO, "0.5");
    props.put(MaintenancePolicy.SNAPSHOT_RETENTION, "PT2H");
    props.put(MaintenancePolicy.MIN_SNAPSHOTS, "4");
    props.put(MaintenancePolicy.ORPHAN_AGE, "60000");
    props.put(MaintenancePolicy.WAL_GC_AGE, "PT1M");
    props.put(MaintenancePolicy.MAX_MANIFESTS, "8");
    assertThat(MaintenancePolicy.fromProperties("db.t", props, d)).isEqualTo(new MaintenancePolicy(false, 1 << 20,
        3, 0.5, Duration.ofHours(2), 4, Duration.ofMinutes(1), Duration.ofMinutes(1), 8));
    assertThat(MaintenancePolicy.KEYS).containsExactlyInAnyOrderElementsOf(props.keySet());

    assertThatThrownBy(() -> MaintenancePolicy.fromProperties("db.t",
        Map.of(MaintenancePolicy.ORPHAN_AGE, "soon"), d))
        .isInstanceOf(SeException.class)
        .hasMessage("table db.t: invalid se.maintenance.orphan-age 'soon' "
            + "(expected an ISO-8601 duration such as PT1H, or milliseconds)")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> MaintenancePolicy.fromProperties("db.t",
        Map.of(MaintenancePolicy.MIN_INPUT_FILES, "0"), d))
        .hasMessage("table db.t: invalid se.maintenance.min-input-files '0' (expected a positive integer)");
  }

  @Test
  void loopMaintainsEveryTableAndStops() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table events = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(MaintenancePolicy.MIN_INPUT_FILES, "2"));
      Table disabled = env.createTable("frozen", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(MaintenancePolicy.ENABLED, "false"));
      TableWal tw = env.walOf(events, "events");
      TableWal frozen = env.walOf(disabled, "frozen");
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      for (int s = 0; s < 3; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(tw);
        env.append(frozen, AppendTableTest.frame(env, s * 10, 10));
        reconciler.reconcile(frozen);
      }
      Maintainer maintainer = new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb,
          TestEnvironment.options(), MaintenancePolicy.defaults());
      List<MaintenanceResult> results = new CopyOnWriteArrayList<>();
      try (MaintenanceLoop loop = new MaintenanceLoop(maintainer, TestEnvironment.CATALOG, Duration.ofHours(1),
          results::add).start()) {
        loop.trigger();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (results.size() < 2) {
          assertThat(System.nanoTime()).as("maintenance pass in time").isLessThan(deadline);
          Thread.sleep(20);
        }
      }
      assertThat(Thread.getAllStackTraces().keySet())
          .noneMatch(t -> t.getName().equals("se-maintenance-loop-" + TestEnvironment.CATALOG));
      assertThat(results).extracting(MaintenanceResult::outcome)
          .containsExactlyInAnyOrder(MaintenanceResult.Outcome.MAINTAINED, MaintenanceResult.Outcome.DISABLED);
      assertThat(MaintenanceFixture.dataFiles(events)).hasSize(1);
      assertThat(MaintenanceFixture.dataFiles(disabled)).hasSize(3);

      // One table by name, as `se maintain --table` does; a missing one is NOT_FOUND.
      assertThat(maintainer.maintain(TestEnvironment.CATALOG, TableIdentifier.of("db", "events")).outcome())
          .isEqualTo(MaintenanceResult.Outcome.MAINTAINED);
      assertThatThrownBy(() -> maintainer.maintain(TestEnvironment.CATALOG, TableIdentifier.of("db", "nope")))
          .hasMessage("table 'db.nope' not found in catalog 'tenant1'");
    }
  }
}

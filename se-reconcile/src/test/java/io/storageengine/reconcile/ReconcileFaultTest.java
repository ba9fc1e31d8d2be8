package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crashes at every step of a pass, racing reconcilers and an unreachable catalog. */
class ReconcileFaultTest {
  @TempDir Path dir;

  /** An entity table with a WAL and the model of what each seq does. */
  private static final class Fixture {
    final TestEnvironment env;
    final Table table;
    final TableWal tw;
    final EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
    final Map<Long, List<EntityModel.Op>> opsBySeq = new TreeMap<>();
    final Random rnd = new Random(7);

    Fixture(TestEnvironment env) {
      this.env = env;
      this.table = env.createTable("entity", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
              TableProperties.VERSION_COLUMN, "ver"));
      this.tw = env.walOf(table, "entity");
    }

    /** Appends {@code segments} segments of random upserts and deletes over 30 keys. */
    void write(int segments) {
      for (int s = 0; s < segments; s++) {
        boolean delete = rnd.nextInt(4) == 0;
        List<EntityModel.Op> ops = new ArrayList<>();
        for (int r = 0; r < 5; r++) {
          Map<String, Object> values = new LinkedHashMap<>();
          if (!delete) {
            for (String c : EntityModelTest.NON_KEY) {
              values.put(c, EntityModelTest.randomValue(rnd, c));
            }
          }
          ops.add(new EntityModel.Op(delete, rnd.nextInt(30), rnd.nextInt(10), values));
        }
        WalFrame frame = EntityModelTest.frame(env, delete, EntityModelTest.NON_KEY, ops);
        opsBySeq.put(env.wal.append(tw, List.of(frame)), ops);
      }
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
  }

  @Test
  void crashBetweenWritingFilesAndCommittingIsRepairedByRerun() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(6);
      Reconciler crashing = env.reconciler(TestEnvironment.options(), new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          throw new IllegalStateException("injected crash before commit");
        }
      });
      assertThatThrownBy(() -> crashing.reconcile(f.tw)).hasMessage("injected crash before commit");
      f.table.refresh();
      assertThat(f.table.currentSnapshot()).isNull();
      assertThat(env.wal.state(f.tw).publishedSeq()).isZero();

      ReconcileResult rerun = env.reconciler(TestEnvironment.options()).reconcile(f.tw);
      assertThat(rerun.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(rerun.fromSeq()).isEqualTo(1);
      assertThat(rerun.toSeq()).isEqualTo(6);
      f.applyCommitted(rerun);
      EntityModelTest.assertMatches(f.table, f.model, "after rerun");
      assertThat(env.wal.state(f.tw).publishedSeq()).isEqualTo(6);
    }
  }

  @Test
  void crashBetweenCommitAndPublishNeverReappliesTheRange() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(5);
      Reconciler crashing = env.reconciler(TestEnvironment.options(), new ReconcileHooks() {
        @Override
        public void afterCommit(TableWal table, long fromSeq, long toSeq) {
          throw new IllegalStateException("injected crash after commit");
        }
      });
      assertThatThrownBy(() -> crashing.reconcile(f.tw)).hasMessage("injected crash after commit");
      f.model.applyBatch(allOps(f, 1, 5));
      assertThat(env.wal.state(f.tw).publishedSeq()).isZero();
      EntityModelTest.assertMatches(f.table, f.model, "committed, not published");

      Reconciler healthy = env.reconciler(TestEnvironment.options());
      ReconcileResult rerun = healthy.reconcile(f.tw);
      assertThat(rerun.outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      assertThat(env.wal.state(f.tw).publishedSeq()).isEqualTo(5);
      EntityModelTest.assertMatches(f.table, f.model, "after rerun");

      f.write(3);
      ReconcileResult next = healthy.reconcile(f.tw);
      assertThat(next.fromSeq()).isEqualTo(6);
      f.applyCommitted(next);
      EntityModelTest.assertMatches(f.table, f.model, "after more writes");
    }
  }

  private static List<EntityModel.Op> allOps(Fixture f, long from, long to) {
    List<EntityModel.Op> ops = new ArrayList<>();
    for (long s = from; s <= to; s++) {
      ops.addAll(f.opsBySeq.get(s));
    }
    return ops;
  }

  /**
   * A pass whose range writes no file (deletes of keys the table does not have) commits only its
   * WAL progress. When another pass commits the same range first, its own commit fails; the
   * progress it finds then is the other pass's, not its own commit landing: it must not report
   * the range as its commit too (that once tiled the racing test's ranges twice).
   */
  @Test
  void aPassWritingNoFileIsNotCreditedWithAnotherPassesCommitOfItsRange() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(1);
      f.applyCommitted(env.reconciler(TestEnvironment.options()).reconcile(f.tw));
      List<EntityModel.Op> absent = List.of(new EntityModel.Op(true, 1_000, 1, Map.of()),
          new EntityModel.Op(true, 1_001, 1, Map.of()));
      f.opsBySeq.put(env.wal.append(f.tw, List.of(EntityModelTest.frame(env, true, EntityModelTest.NON_KEY, absent))),
          absent);
      List<ReconcileResult> other = new ArrayList<>();
      Reconciler raced = env.reconciler(TestEnvironment.options(), new ReconcileHooks() {
        @Override
        public void beforeCommit(TableWal table, long fromSeq, long toSeq) {
          if (other.isEmpty()) {
            other.add(env.reconciler(TestEnvironment.options()).reconcile(f.tw));
          }
        }
      });

      ReconcileResult result = raced.reconcile(f.tw);

      assertThat(other).singleElement().satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        assertThat(r.fromSeq()).isEqualTo(2);
        assertThat(r.toSeq()).isEqualTo(2);
      });
      assertThat(result.outcome()).as("the range was the other pass's commit").isNotEqualTo(
          ReconcileResult.Outcome.COMMITTED);
      f.table.refresh();
      assertThat(f.table.currentSnapshot().summary()).containsKey(TableProperties.SUMMARY_COMMIT_ID);
      assertThat(WalHighWaterMark.of(f.table)).isEqualTo(2);
      f.applyCommitted(other.get(0));
      EntityModelTest.assertMatches(f.table, f.model, "after the race");
    }
  }

  @Test
  void lostCommitResponseIsDetectedFromTheSnapshotNotRetried() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(4);
      env.servedCatalog = new TestingCatalogs.LosingCommitResponses(env.catalog, 1);
      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(f.tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.toSeq()).isEqualTo(4);
      f.applyCommitted(result);
      EntityModelTest.assertMatches(f.table, f.model, "after lost response");
      f.table.refresh();
      long commits = 0;
      for (var s : f.table.snapshots()) {
        commits++;
      }
      assertThat(commits).isEqualTo(1);
      assertThat(env.wal.state(f.tw).publishedSeq()).isEqualTo(4);
    }
  }

  @Test
  void unreachableCatalogFailsWithUnavailableAndLosesNothing() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(3);
      env.servedCatalog = new TestingCatalogs.Unreachable();
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      assertThatThrownBy(() -> reconciler.reconcile(f.tw))
          .isInstanceOf(SeException.class)
          .hasMessage("catalog 'tenant1' is unavailable: RuntimeException")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
      List<ReconcileResult> all = reconciler.reconcileAll(TestEnvironment.CATALOG);
      assertThat(all).singleElement().satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(ReconcileResult.Outcome.FAILED);
        assertThat(r.message()).isEqualTo("UNAVAILABLE: catalog 'tenant1' is unavailable: RuntimeException");
      });
      assertThat(env.wal.state(f.tw).publishedSeq()).isZero();

      env.servedCatalog = env.catalog;
      ReconcileResult later = reconciler.reconcile(f.tw);
      assertThat(later.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.applyCommitted(later);
      EntityModelTest.assertMatches(f.table, f.model, "after the catalog is back");
    }
  }

  @Test
  void racingReconcilersNeverDuplicate() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(24);
      List<ReconcileResult> results = Collections.synchronizedList(new ArrayList<>());
      List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch start = new CountDownLatch(1);
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        ReconcileOptions options = TestEnvironment.options().withMaxBytesPerCommit(1500 + t * 700L)
            .withDuckdbThreads(1);
        Reconciler reconciler = env.reconciler(options);
        Thread thread = new Thread(() -> {
          try {
            start.await();
            while (!stop.get()) {
              try {
                ReconcileResult r = reconciler.reconcile(f.tw);
                results.add(r);
                if (r.outcome() == ReconcileResult.Outcome.UP_TO_DATE) {
                  return;
                }
              } catch (SeException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                  throw e;
                }
              }
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        }, "racer-" + t);
        threads.add(thread);
        thread.start();
      }
      start.countDown();
      for (Thread thread : threads) {
        thread.join(120_000);
      }
      stop.set(true);
      assertThat(errors).isEmpty();

      // Committed ranges tile 1..24 exactly: no range was applied twice or skipped.
      List<ReconcileResult> committed = new ArrayList<>();
      for (ReconcileResult r : results) {
        if (r.outcome() == ReconcileResult.Outcome.COMMITTED) {
          committed.add(r);
        }
      }
      committed.sort((a, b) -> Long.compare(a.fromSeq(), b.fromSeq()));
      long next = 1;
      for (ReconcileResult r : committed) {
        assertThat(r.fromSeq()).isEqualTo(next);
        next = r.toSeq() + 1;
        f.applyCommitted(r);
      }
      assertThat(next).isEqualTo(25);
      EntityModelTest.assertMatches(f.table, f.model, "after the race");
    }
  }

  @Test
  void racingAppendReconcilersNeverDuplicateRows() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Schema schema = AppendTableTest.SCHEMA;
      Table table = env.createTable("events", schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      for (int s = 0; s < 20; s++) {
        env.append(tw, AppendTableTest.frame(env, s * 10, 10));
      }
      List<Thread> threads = new ArrayList<>();
      List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < 2; t++) {
        Reconciler reconciler = env.reconciler(TestEnvironment.options().withMaxBytesPerCommit(900).withDuckdbThreads(1));
        Thread thread = new Thread(() -> {
          try {
            for (int i = 0; i < 40 && reconciler.hasPending(tw); i++) {
              try {
                reconciler.reconcile(tw);
              } catch (SeException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                  throw e;
                }
              }
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        });
        threads.add(thread);
        thread.start();
      }
      for (Thread thread : threads) {
        thread.join(120_000);
      }
      assertThat(errors).isEmpty();
      List<Record> rows = TestEnvironment.readAll(table);
      Set<Long> ids = new HashSet<>();
      for (Record r : rows) {
        assertThat(ids.add((Long) r.getField("id"))).as("duplicate id %s", r.getField("id")).isTrue();
      }
      assertThat(ids).hasSize(200);
    }
  }

  @Test
  void droppedTableIsReportedAndSkipped() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(2);
      env.catalog.dropTable(TableIdentifier.of("db", "entity"), false);
      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(f.tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.TABLE_DROPPED);
      assertThat(result.message()).isEqualTo("table " + f.tw.tableUuid() + " was dropped from catalog tenant1");
      assertThat(env.wal.state(f.tw).publishedSeq()).isZero();
    }
  }

  @Test
  void renamedTableIsFoundByUuid() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Fixture f = new Fixture(env);
      f.write(2);
      env.catalog.createNamespace(org.apache.iceberg.catalog.Namespace.of("other"));
      env.catalog.renameTable(TableIdentifier.of("db", "entity"), TableIdentifier.of("other", "renamed"));
      // A new table under the old name must not receive the old table's WAL.
      env.createTable("entity", EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY));
      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(f.tw);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.tableName()).isEqualTo("tenant1.other.renamed");
      Table renamed = env.catalog.loadTable(TableIdentifier.of("other", "renamed"));
      f.applyCommitted(result);
      EntityModelTest.assertMatches(renamed, f.model, "renamed");
      assertThat(TestEnvironment.readAll(env.catalog.loadTable(TableIdentifier.of("db", "entity")))).isEmpty();
    }
  }
}

package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A table whose reconciliation keeps failing is impossible to miss (status on cluster storage,
 * gauges, one WARN per change of state), and a dropped table is reported once and its WAL
 * deleted after the retention.
 */
class ReconcileHealthTest {
  private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

  @TempDir Path dir;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger loopLogger = (Logger) LoggerFactory.getLogger(ReconcileLoop.class);
  private Level previousLevel;

  @BeforeEach
  void captureLogs() {
    previousLevel = loopLogger.getLevel();
    loopLogger.setLevel(Level.INFO);
    logs.start();
    loopLogger.addAppender(logs);
  }

  @AfterEach
  void releaseLogs() {
    loopLogger.detachAppender(logs);
    loopLogger.setLevel(previousLevel);
  }

  private List<String> logged(Level level, String containing) {
    return logs.list.stream().filter(e -> e.getLevel() == level)
        .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(containing)).toList();
  }

  @Test
  void aFailingTableIsReportedOnceWithItsCauseUntilItRecovers() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("stuck", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "stuck");
      ReconcileStatusStore statuses = new ReconcileStatusStore(env.store);
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      env.append(tw, AppendTableTest.frame(env, 0, 10));
      env.append(tw, AppendTableTest.frame(env, 10, 10));
      env.servedCatalog = new TestingCatalogs.Unreachable();
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      try (ReconcileLoop loop = new ReconcileLoop(reconciler, env.wal,
          TestEnvironment.CATALOG, Duration.ofMillis(20), results::add)
          .withStatusStore(statuses).withClock(Clock.fixed(NOW, ZoneOffset.UTC)).start()) {
        // The loop counts a failure before it records it in the status store.
        await(() -> loop.status(tw).consecutiveFailures() >= 3 && statuses.read(tw).consecutiveFailures() >= 3);

        ReconcileStatus status = statuses.read(tw);
        assertThat(status.failing()).isTrue();
        assertThat(status.tableName()).isEqualTo("db.stuck");
        assertThat(status.failingSince()).isEqualTo(NOW);
        assertThat(status.consecutiveFailures()).isGreaterThanOrEqualTo(3);
        assertThat(status.lastError())
            .isEqualTo("UNAVAILABLE: catalog 'tenant1' is unavailable: RuntimeException");
        assertThat(status.pendingFromSeq()).isEqualTo(1);
        assertThat(status.pendingToSeq()).isEqualTo(2);
        assertThat(status.describe()).startsWith("failing since 2026-12-01T10:00:00Z: UNAVAILABLE: "
            + "catalog 'tenant1' is unavailable: RuntimeException (").endsWith(
            " consecutive failures, WAL 1..2 pending)");
        assertThat(statuses.failing()).containsOnlyKeys(tw);
        assertThat(loop.failingTables()).containsOnlyKeys(tw);
        String metrics = reconciler.telemetry().metrics().scrape();
        assertThat(metrics).contains("se_reconcile_table_failing{catalog=\"tenant1\",table=\"db.stuck\"} 1");
        assertThat(metrics).containsPattern(
            "se_reconcile_table_consecutive_failures\\{catalog=\"tenant1\",table=\"db.stuck\"} [3-9]");
        // Many failed passes, one WARN with the cause.
        assertThat(logged(Level.WARN, "is failing")).singleElement().asString()
            .isEqualTo("reconcile of table db.stuck of catalog tenant1 is failing: failing since "
                + "2026-12-01T10:00:00Z: UNAVAILABLE: catalog 'tenant1' is unavailable: "
                + "RuntimeException (1 consecutive failure, WAL 1..2 pending); it is retried with "
                + "backoff and reported as failing until a pass succeeds");

        env.servedCatalog = env.catalog;
        // The loop clears its own status, logs and updates the metrics before the status store.
        await(() -> env.wal.state(tw).publishedSeq() == 2 && !loop.status(tw).failing()
            && statuses.read(tw).equals(ReconcileStatus.HEALTHY));
        assertThat(env.store.get(ReconcileStatusStore.key(tw))).isEmpty();
        assertThat(statuses.failing()).isEmpty();
        assertThat(loop.failingTables()).isEmpty();
        assertThat(reconciler.telemetry().metrics().scrape())
            .contains("se_reconcile_table_failing{catalog=\"tenant1\",table=\"db.stuck\"} 0");
        assertThat(logged(Level.INFO, "recovered")).singleElement().asString()
            .startsWith("reconcile of table db.stuck of catalog tenant1 recovered after ");
        assertThat(logged(Level.WARN, "is failing")).hasSize(1);
      }
    }
  }

  @Test
  void aDroppedTableIsReportedOnceAndItsWalDeletedAfterTheRetention() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("gone", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "gone");
      env.append(tw, AppendTableTest.frame(env, 0, 10));
      env.append(tw, AppendTableTest.frame(env, 10, 10));
      env.catalog.dropTable(TableIdentifier.of("db", "gone"));
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options()), env.wal,
          TestEnvironment.CATALOG, Duration.ofMillis(20), results::add)
          .withDroppedWalRetention(Duration.ofMillis(1500)).start()) {
        await(() -> results.stream().anyMatch(r -> r.outcome() == ReconcileResult.Outcome.TABLE_DROPPED));
        // Ticks keep coming, but the dropped table is not passed over again during the retention.
        Thread.sleep(300);
        assertThat(results).hasSize(1);
        assertThat(env.store.list(tw.prefix())).isNotEmpty();

        // The result is reported just after the deletion: wait for both.
        await(() -> env.store.list(tw.prefix()).isEmpty() && results.size() >= 2);
        assertThat(results).hasSize(2);
        assertThat(results.get(1).outcome()).isEqualTo(ReconcileResult.Outcome.TABLE_DROPPED);
        assertThat(results.get(1).message()).isEqualTo("table " + tw.tableUuid()
            + " was dropped from catalog tenant1; its WAL was deleted (3 files)"); // 2 segments, table.json
        assertThat(env.wal.tables(TestEnvironment.CATALOG)).doesNotContain(tw);
        Thread.sleep(200);
        assertThat(results).as("nothing left to pass over").hasSize(2);
        assertThat(loop.failingTables()).isEmpty();
      }
      assertThat(logged(Level.INFO, "no longer exists")).singleElement().asString()
          .isEqualTo("table " + tw.tableUuid() + " (db.gone) of catalog tenant1 no longer exists: "
              + "its WAL is not published and will be deleted after PT1.5S");
    }
  }

  @Test
  void aTableFoundAgainBeforeTheRetentionKeepsItsWal() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("back", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "back");
      env.append(tw, AppendTableTest.frame(env, 0, 10));
      // The catalog answers "no such table" for a while (misconfigured, being migrated).
      env.servedCatalog = new TestingCatalogs.Empty();
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      try (ReconcileLoop loop = new ReconcileLoop(env.reconciler(TestEnvironment.options()), env.wal,
          TestEnvironment.CATALOG, Duration.ofMillis(20), results::add)
          .withDroppedWalRetention(Duration.ofMillis(400)).start()) {
        await(() -> results.stream().anyMatch(r -> r.outcome() == ReconcileResult.Outcome.TABLE_DROPPED));
        env.servedCatalog = env.catalog;
        // The last check before deleting finds the table: it is published instead.
        await(() -> env.wal.state(tw).publishedSeq() == 1);
        assertThat(env.wal.segmentsAfter(tw, 0)).containsExactly(1L);
        AppendTableTest.assertIds(TestEnvironment.readAll(table), 10);
      }
    }
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not reached in time").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}

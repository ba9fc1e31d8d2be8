package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.wal.TableWal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The background loop publishes new segments, backs off a failing table, and stops cleanly. */
class ReconcileLoopTest {
  @TempDir Path dir;

  @Test
  void publishesContinuouslyBacksOffAndCloses() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Table table = env.createTable("events", AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
          SortOrder.unsorted(), Map.of());
      TableWal tw = env.walOf(table, "events");
      List<ReconcileResult> results = new CopyOnWriteArrayList<>();
      Reconciler reconciler = env.reconciler(TestEnvironment.options());
      ReconcileLoop loop = new ReconcileLoop(reconciler, env.wal, TestEnvironment.CATALOG,
          Duration.ofMillis(50), results::add).start();
      try {
        env.append(tw, AppendTableTest.frame(env, 0, 10));
        loop.trigger(tw);
        await(() -> env.wal.state(tw).publishedSeq() == 1);

        env.servedCatalog = new TestingCatalogs.Unreachable();
        env.append(tw, AppendTableTest.frame(env, 10, 10));
        await(() -> results.stream().filter(r -> r.outcome() == ReconcileResult.Outcome.FAILED).count() >= 2);
        assertThat(results).filteredOn(r -> r.outcome() == ReconcileResult.Outcome.FAILED)
            .allSatisfy(r -> assertThat(r.message()).isEqualTo(
                "UNAVAILABLE: catalog 'tenant1' is unavailable: RuntimeException"));

        env.servedCatalog = env.catalog;
        await(() -> env.wal.state(tw).publishedSeq() == 2);
      } finally {
        loop.close();
      }
      assertThat(Thread.getAllStackTraces().keySet())
          .noneMatch(t -> t.getName().equals("se-reconcile-loop-" + TestEnvironment.CATALOG));
      AppendTableTest.assertIds(TestEnvironment.readAll(table), 20);
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

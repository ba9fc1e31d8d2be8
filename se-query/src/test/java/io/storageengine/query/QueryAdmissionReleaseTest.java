package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.duckdb.PoolResets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A query's admission ends with its DuckDB work: a client that sends its next query the moment it
 * has a result (as every Flight SQL client does: the DoGet completes before the server has reset
 * the query's database) gets the full {@code query.duckdb-threads} for it. Before, the admission
 * was held through the reset, and on a 2-core server a third of such back-to-back queries ran on
 * one DuckDB thread.
 */
class QueryAdmissionReleaseTest {
  static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @Test
  void theNextQueryGetsEveryThreadWhileTheDatabaseOfTheLastIsBeingReset() throws Exception {
    try (EngineFixture fixture = EngineFixture.create("se-query-admission-release")) {
      Catalog catalog = fixture.catalog("alpha");
      TestWarehouse.append(TestWarehouse.createTable(catalog, "ns", "t", SCHEMA, PartitionSpec.unpartitioned()),
          List.of(TestWarehouse.record(SCHEMA, 1L), TestWarehouse.record(SCHEMA, 2L)));
      QueryConfig config = QueryConfig.defaults().withThreads(2).withMemoryLimit("256MB");
      QueryEngine engine = fixture.start(config.withLimits(config.limits().withCpuThreads(2)));
      PreparedQuery first = engine.prepare("alpha", "SELECT count(*) FROM ns.t", Map.of());
      try (var child = fixture.allocator.newChildAllocator("first", 0, Long.MAX_VALUE);
          var reader = first.execute(child, 1024)) {
        while (reader.loadNextBatch()) {
          assertThat(reader.getVectorSchemaRoot().getVector(0).getObject(0)).isEqualTo(2L);
        }
      }
      assertThat(engine.admission().threadsInUse()).as("the first query's threads").isEqualTo(2);
      CountDownLatch resetting = new CountDownLatch(1);
      CountDownLatch finish = new CountDownLatch(1);
      PoolResets.pauseWith(engine.pool(), () -> {
        resetting.countDown();
        try {
          finish.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      Thread closer = new Thread(first::close, "closes-the-first-query");
      closer.start();
      try {
        assertThat(resetting.await(10, TimeUnit.SECONDS)).as("the first query's database is being reset").isTrue();
        PoolResets.pauseWith(engine.pool(), () -> { });
        assertThat(engine.admission().threadsInUse()).as("given back before the reset").isZero();
        assertThat(engine.admission().running()).isZero();
        try (PreparedQuery next = engine.prepare("alpha", "SELECT count(*) FROM ns.t", Map.of())) {
          assertThat(engine.admission().threadsInUse())
              .as("the next query's threads, while the last one's database is reset").isEqualTo(2);
          try (var child = fixture.allocator.newChildAllocator("next", 0, Long.MAX_VALUE);
              var reader = next.execute(child, 1024)) {
            assertThat(reader.loadNextBatch()).isTrue();
            assertThat(reader.getVectorSchemaRoot().getVector(0).getObject(0)).isEqualTo(2L);
          }
        }
      } finally {
        finish.countDown();
        closer.join(30_000);
      }
      assertThat(engine.admission().threadsInUse()).isZero();
      assertThat(EngineFixture.rows(engine, fixture.allocator, "alpha", "SELECT count(*) FROM ns.t"))
          .containsExactly("2");
    }
  }
}

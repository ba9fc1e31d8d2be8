package io.storageengine.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Partitions moving between tasks while records arrive: the connector is reconfigured from one
 * task to three to two ({@code tasks.max} through the worker's herder, as the REST API's
 * {@code PUT /connectors/<name>/config} does), so the consumer group rebalances and every
 * partition's writer closes in one task and opens in another mid-load. Every record must then be
 * in the table exactly once, read through Iceberg's reader.
 */
class KafkaConnectRebalanceTest {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaConnectRebalanceTest.class);
  private static final Duration VISIBLE = Duration.ofSeconds(60);
  private static final int PARTITIONS = 4;
  /** Records produced per 100 ms: the load stays on through both rebalances. */
  private static final int PER_TICK = 500;

  @Test
  void appendTableGetsEveryRecordExactlyOnceWhilePartitionsMoveBetweenTasks(@TempDir Path dir) throws Exception {
    try (KafkaConnectHarness harness = KafkaConnectHarness.start(dir, Map.of())) {
      Catalog catalog = harness.engine.registry().catalog("warehouse");
      TableIdentifier id = TableIdentifier.parse("kafka.moves");
      Tables.create(catalog, id, TableDefinition.builder("id bigint not null, p int").build());
      harness.createTopic("moves", PARTITIONS);
      Map<String, String> config = harness.connectorConfig("moves-sink", "moves");
      config.put(EngineSinkConfig.TABLE, "kafka.moves");
      harness.putConnector(config);

      AtomicBoolean stop = new AtomicBoolean();
      long started = System.nanoTime();
      CompletableFuture<Integer> produced = CompletableFuture.supplyAsync(() -> {
        int sent = 0;
        try (KafkaProducer<String, String> producer = harness.producer()) {
          while (!stop.get()) {
            for (int i = 0; i < PER_TICK; i++, sent++) {
              // Round robin over the partitions, so every partition has records in flight when it moves.
              int partition = sent % PARTITIONS;
              producer.send(new ProducerRecord<>("moves", partition, null,
                  "{\"id\":" + sent + ",\"p\":" + partition + "}"));
            }
            Thread.sleep(100);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        return sent;
      });

      KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(200), () -> totalRecords(catalog, id) > 0, "first rows of kafka.moves");
      KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(200), () -> harness.assignment("moves-sink").size() == 1,
          "one consumer holding the partitions");
      Map<String, Set<TopicPartition>> one = harness.assignment("moves-sink");
      config.put("tasks.max", "3");
      harness.reconfigure(config, 3, PARTITIONS);
      Map<String, Set<TopicPartition>> three = harness.assignment("moves-sink");
      long afterFirst = totalRecords(catalog, id);
      KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(200), () -> totalRecords(catalog, id) > afterFirst,
          "rows written by three tasks");
      config.put("tasks.max", "2");
      harness.reconfigure(config, 2, PARTITIONS);
      Map<String, Set<TopicPartition>> two = harness.assignment("moves-sink");
      long afterSecond = totalRecords(catalog, id);
      KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(200), () -> totalRecords(catalog, id) > afterSecond,
          "rows written by two tasks");
      Thread.sleep(1_000); // load on the final assignment too
      stop.set(true);
      int records = produced.get(60, TimeUnit.SECONDS);
      LOG.info("produced {} records; assignments: one task {}, three tasks {}, two tasks {}", records, one, three, two);
      assertThat(one).hasSize(1);
      assertThat(three).hasSize(3);
      assertThat(two).hasSize(2);

      KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(500), () -> totalRecords(catalog, id) >= records,
          records + " rows in kafka.moves");
      Thread.sleep(1_000); // a late duplicate would show up in the next reconcile pass
      Map<Long, Integer> copies = new HashMap<>();
      long rows = 0;
      try (CloseableIterable<Record> read = IcebergGenerics.read(catalog.loadTable(id)).build()) {
        for (Record row : read) {
          copies.merge((Long) row.getField("id"), 1, Integer::sum);
          rows++;
        }
      }
      long missing = 0;
      for (long i = 0; i < records; i++) {
        if (!copies.containsKey(i)) {
          missing++;
        }
      }
      long duplicated = copies.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
      LOG.info("{} records through two rebalances in {} ms: {} rows, {} missing, {} duplicated", records,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), rows, missing, duplicated);
      // Exactly once: every record, none twice.
      assertThat(missing).as("missing records").isZero();
      assertThat(duplicated).as("duplicated records").isZero();
      assertThat(rows).isEqualTo(records);
      harness.deleteConnector("moves-sink");
    }
  }

  private static long totalRecords(Catalog catalog, TableIdentifier id) {
    Snapshot snapshot = catalog.loadTable(id).currentSnapshot();
    return snapshot == null ? 0 : Long.parseLong(snapshot.summary().getOrDefault("total-records", "0"))
        - Long.parseLong(snapshot.summary().getOrDefault("total-position-deletes", "0"));
  }
}

package io.storageengine.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connector in a real Connect worker, reading a real KRaft broker and writing to a real
 * engine, verified through Iceberg's reader on the tables the engine reconciled.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KafkaConnectSinkTest {
  private static final Duration VISIBLE = Duration.ofSeconds(60);

  private KafkaConnectHarness harness;
  private Catalog catalog;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    harness = KafkaConnectHarness.start(dir, Map.of());
    catalog = harness.engine.registry().catalog("warehouse");
  }

  @AfterAll
  void stop() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

  @Test
  void appendTableGetsEveryRecordOnceFromStructRecords() throws Exception {
    Tables.create(catalog, TableIdentifier.parse("kafka.events"),
        TableDefinition.builder("id bigint not null, name string, ts timestamptz").build());
    harness.createTopic("events", 2);
    int records = 100_000;
    try (KafkaProducer<String, String> producer = harness.producer()) {
      String schema = "{\"type\":\"struct\",\"fields\":[{\"field\":\"id\",\"type\":\"int64\"},"
          + "{\"field\":\"name\",\"type\":\"string\",\"optional\":true},"
          + "{\"field\":\"ts\",\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1}]}";
      for (int i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>("events", Integer.toString(i % 2), "{\"schema\":" + schema
            + ",\"payload\":{\"id\":" + i + ",\"name\":\"n" + i + "\",\"ts\":" + (1_700_000_000_000L + i) + "}}"));
      }
    }
    Map<String, String> config = harness.connectorConfig("events-sink", "events");
    config.put(EngineSinkConfig.TABLE, "kafka.events");
    config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    config.put("value.converter.schemas.enable", "true");
    harness.putConnector(config);
    TableIdentifier id = TableIdentifier.parse("kafka.events");
    KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(500), () -> totalRecords(id) >= records, records + " rows in kafka.events");
    Thread.sleep(500); // a late duplicate would show up in the next reconcile pass
    List<Record> rows = read(id);
    Set<Long> ids = new HashSet<>();
    for (Record row : rows) {
      ids.add((Long) row.getField("id"));
    }
    assertThat(rows).hasSize(records);
    assertThat(ids).hasSize(records);
    Record sample = rows.stream().filter(r -> (Long) r.getField("id") == 4242L).findFirst().orElseThrow();
    assertThat(sample.getField("name")).isEqualTo("n4242");
    assertThat(sample.getField("ts").toString()).isEqualTo("2023-11-14T22:13:24.242Z");
    harness.deleteConnector("events-sink");
  }

  @Test
  void appendTableGetsEveryRecordExactlyOnceAcrossATaskRestartAndAnEngineRestart() throws Exception {
    TableIdentifier id = TableIdentifier.parse("kafka.clicks");
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null").build());
    harness.createTopic("clicks", 2);
    Map<String, String> config = harness.connectorConfig("clicks-sink", "clicks");
    config.put(EngineSinkConfig.TABLE, "kafka.clicks");
    harness.putConnector(config);
    int records = 30_000;
    try (KafkaProducer<String, String> producer = harness.producer()) {
      for (int i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>("clicks", null, "{\"id\":" + i + "}"));
        if (i == records / 3) {
          // Mid-load: batches in flight whose acks the stopping task never sees.
          producer.flush();
          KafkaConnectHarness.await(VISIBLE, () -> totalRecords(id) > 0, "first rows of kafka.clicks");
          harness.restartTask("clicks-sink");
        } else if (i == 2 * records / 3) {
          producer.flush();
          harness.restartEngine();
          catalog = harness.engine.registry().catalog("warehouse");
        }
      }
    }
    KafkaConnectHarness.await(VISIBLE, Duration.ofMillis(500), () -> totalRecords(id) >= records, records + " rows in kafka.clicks");
    Thread.sleep(1_000); // a late duplicate would show up in the next reconcile pass
    List<Record> rows = read(id);
    Set<Long> ids = new HashSet<>();
    rows.forEach(r -> ids.add((Long) r.getField("id")));
    // Exactly once: every record, none twice.
    assertThat(ids).hasSize(records);
    assertThat(rows).hasSize(records);
    harness.deleteConnector("clicks-sink");
  }

  @Test
  void entityTableKeepsTheLatestValuePerKeyAcrossATaskRestartAndAnEngineRestart() throws Exception {
    TableIdentifier id = TableIdentifier.parse("kafka.customers");
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null, name string, v bigint")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    harness.createTopic("customers", 3);
    Map<String, String> config = harness.connectorConfig("customers-sink", "customers");
    config.put(EngineSinkConfig.TABLES, "customers:kafka.customers");
    config.put(EngineSinkConfig.VERSION_SOURCE, "offset");
    config.put(EngineSinkConfig.VERSION_COLUMN, "v");
    harness.putConnector(config);
    int keys = 2_000;
    int rounds = 6;
    Map<Long, String> expected = new HashMap<>();
    try (KafkaProducer<String, String> producer = harness.producer()) {
      for (int round = 0; round < rounds; round++) {
        for (long key = 0; key < keys; key++) {
          boolean tombstone = (round == 2 && key % 7 == 0) || (round == 5 && key % 11 == 0);
          String value = tombstone ? null : "{\"name\":\"c" + key + "-r" + round + "\"}";
          producer.send(new ProducerRecord<>("customers", Long.toString(key), value));
          if (tombstone) {
            expected.remove(key);
          } else {
            expected.put(key, "c" + key + "-r" + round);
          }
        }
        producer.flush();
        if (round == 2) {
          // Mid-load: some offsets committed, some batches in flight. The new task instance
          // resumes from the committed offsets; what it writes again carries the same versions.
          KafkaConnectHarness.await(VISIBLE, () -> totalRecords(id) > 0, "first rows of kafka.customers");
          harness.restartTask("customers-sink");
          KafkaConnectHarness.await(Duration.ofSeconds(30), () -> harness.taskState("customers-sink").equals("RUNNING"),
              "restarted task running");
        } else if (round == 4) {
          harness.restartEngine();
          catalog = harness.engine.registry().catalog("warehouse");
        }
      }
    }
    KafkaConnectHarness.await(VISIBLE, Duration.ofSeconds(1), () -> latest(id).equals(expected), "the latest value of every key in kafka.customers");
    assertThat(expected).hasSize(keys - keys / 11 - 1);
    harness.deleteConnector("customers-sink");
  }

  @Test
  void recordsOfTheWrongTypeGoToTheDeadLetterQueueTheOthersToTheTable() throws Exception {
    TableIdentifier id = TableIdentifier.parse("kafka.orders");
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null, qty int").build());
    harness.createTopic("orders", 1);
    try (KafkaProducer<String, String> producer = harness.producer()) {
      producer.send(new ProducerRecord<>("orders", null, "{\"id\":1,\"qty\":5}"));
      producer.send(new ProducerRecord<>("orders", null, "{\"id\":2,\"qty\":\"five\"}"));
      producer.send(new ProducerRecord<>("orders", null, "{\"id\":3,\"qty\":7}"));
    }
    Map<String, String> config = harness.connectorConfig("orders-sink", "orders");
    config.put(EngineSinkConfig.TABLE, "kafka.orders");
    config.put("errors.tolerance", "all");
    config.put("errors.deadletterqueue.topic.name", "orders-dlq");
    config.put("errors.deadletterqueue.topic.replication.factor", "1");
    config.put("errors.deadletterqueue.context.headers.enable", "true");
    harness.putConnector(config);
    KafkaConnectHarness.await(VISIBLE, () -> totalRecords(id) >= 2, "two rows in kafka.orders");
    assertThat(read(id)).extracting(r -> r.getField("id") + ":" + r.getField("qty")).containsExactlyInAnyOrder("1:5", "3:7");
    List<ConsumerRecord<String, String>> dead = consume("orders-dlq", 1);
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).value()).isEqualTo("{\"id\":2,\"qty\":\"five\"}");
    Header message = dead.get(0).headers().lastHeader("__connect.errors.exception.message");
    assertThat(new String(message.value(), StandardCharsets.UTF_8)).isEqualTo("record orders/0@1 cannot be written to "
        + "warehouse.kafka.orders: field `qty`: expected an integer for a column of type int, got a STRING value");
    harness.deleteConnector("orders-sink");
  }

  @Test
  void withoutToleranceTheTaskFailsNamingTheRecordAndTheField() throws Exception {
    TableIdentifier id = TableIdentifier.parse("kafka.strict");
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null, qty int").build());
    harness.createTopic("strict", 1);
    try (KafkaProducer<String, String> producer = harness.producer()) {
      producer.send(new ProducerRecord<>("strict", null, "{\"id\":1,\"qty\":5}"));
      producer.send(new ProducerRecord<>("strict", null, "{\"id\":2,\"qty\":\"five\"}"));
    }
    Map<String, String> config = harness.connectorConfig("strict-sink", "strict");
    config.put(EngineSinkConfig.TABLE, "kafka.strict");
    harness.createConnector(config);
    KafkaConnectHarness.await(VISIBLE, () -> harness.taskState("strict-sink").equals("FAILED"), "strict-sink failed");
    assertThat(harness.taskTrace("strict-sink")).contains("record strict/0@1 cannot be written to warehouse.kafka.strict: "
        + "field `qty`: expected an integer for a column of type int, got a STRING value");
    harness.deleteConnector("strict-sink");
  }

  private long totalRecords(TableIdentifier id) {
    Table table = catalog.loadTable(id);
    Snapshot snapshot = table.currentSnapshot();
    return snapshot == null ? 0 : Long.parseLong(snapshot.summary().getOrDefault("total-records", "0"))
        - Long.parseLong(snapshot.summary().getOrDefault("total-position-deletes", "0"));
  }

  private List<Record> read(TableIdentifier id) {
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record record : records) {
        rows.add(record.copy());
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return rows;
  }

  private Map<Long, String> latest(TableIdentifier id) {
    Map<Long, String> state = new HashMap<>();
    for (Record row : read(id)) {
      if (state.put((Long) row.getField("id"), (String) row.getField("name")) != null) {
        return Map.of(-1L, "duplicate key " + row.getField("id"));
      }
    }
    return state;
  }

  private List<ConsumerRecord<String, String>> consume(String topic, int atLeast) throws InterruptedException {
    Properties properties = new Properties();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, harness.kafka.bootstrapServers());
    properties.put(ConsumerConfig.GROUP_ID_CONFIG, "test-" + topic);
    properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + VISIBLE.toNanos();
      while (out.size() < atLeast && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
      // anything more that arrives soon after
      consumer.poll(Duration.ofMillis(500)).forEach(out::add);
    }
    return out;
  }
}

package io.storageengine.kafka.connect;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Records/s through Kafka Connect into an append and an entity table, with the Connect task
 * restarted (a quarter of the records produced) and the engine stopped and started again (half)
 * during each load, and freshness from produce to
 * visible in Iceberg. Everything in this JVM ({@link KafkaConnectHarness}); prints one JSON object.
 *
 * <pre>{@code
 * java --add-opens=java.base/java.nio=ALL-UNNAMED -cp <se-kafka-connect test classpath> \
 *     io.storageengine.kafka.connect.KafkaConnectBenchmark [records, default 1000000] [entity keys, default 100000]
 * }</pre>
 *
 * <p>Append: exactly once, every id there ({@code missing} 0) and none twice ({@code duplicates}
 * 0). Entity (version = Kafka
 * offset): the table must hold exactly the latest value of every key.
 */
public final class KafkaConnectBenchmark {
  private KafkaConnectBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int keys = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    Path dir = Files.createTempDirectory("se-kafka-bench");
    try (KafkaConnectHarness harness = KafkaConnectHarness.start(dir, Map.of())) {
      String append = appendLoad(harness, records);
      String entity = entityLoad(harness, records, keys);
      String freshness = freshness(harness, 30);
      System.out.println("{\"records\":" + records + ",\"append\":" + append + ",\"entity\":" + entity
          + ",\"freshness\":" + freshness + "}");
    }
  }

  private static Catalog catalog(KafkaConnectHarness harness) {
    return harness.engine.registry().catalog("warehouse");
  }

  private static String appendLoad(KafkaConnectHarness harness, int records) throws Exception {
    TableIdentifier id = TableIdentifier.parse("bench.events");
    Tables.create(catalog(harness), id, TableDefinition.builder("id bigint not null, name string, ts timestamptz").build());
    harness.createTopic("bench-events", 4);
    Map<String, String> config = harness.connectorConfig("bench-events", "bench-events");
    config.put(EngineSinkConfig.TABLE, "bench.events");
    harness.putConnector(config);
    long start = System.nanoTime();
    StringBuilder disturbances = new StringBuilder();
    double produced = produceWhileDisturbing(harness, records, i -> new ProducerRecord<>("bench-events",
        Integer.toString(i), "{\"id\":" + i + ",\"name\":\"n" + i + "\",\"ts\":" + System.currentTimeMillis() + "}"),
        start, "bench-events", disturbances);
    KafkaConnectHarness.await(Duration.ofMinutes(30), Duration.ofSeconds(1),
        () -> totalRecords(catalog(harness), id) >= records, records + " rows in bench.events");
    double visible = seconds(start);
    BitSet seen = new BitSet(records);
    long rows = 0;
    try (CloseableIterable<Record> all = IcebergGenerics.read(catalog(harness).loadTable(id)).select("id").build()) {
      for (Record row : all) {
        seen.set((int) (long) (Long) row.getField("id"));
        rows++;
      }
    }
    harness.deleteConnector("bench-events");
    return "{\"produce_s\":" + round(produced) + ",\"visible_s\":" + round(visible)
        + ",\"records_per_s\":" + Math.round(records / visible) + ",\"missing\":" + (records - seen.cardinality())
        + ",\"duplicates\":" + (rows - seen.cardinality()) + disturbances + "}";
  }

  private static String entityLoad(KafkaConnectHarness harness, int records, int keys) throws Exception {
    TableIdentifier id = TableIdentifier.parse("bench.customers");
    Tables.create(catalog(harness), id, TableDefinition.builder("id bigint not null, name string, v bigint")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    harness.createTopic("bench-customers", 4);
    Map<String, String> config = harness.connectorConfig("bench-customers", "bench-customers");
    config.put(EngineSinkConfig.TABLE, "bench.customers");
    config.put(EngineSinkConfig.VERSION_SOURCE, "offset");
    config.put(EngineSinkConfig.VERSION_COLUMN, "v");
    harness.putConnector(config);
    int[] last = new int[keys];
    for (int i = 0; i < records; i++) {
      last[i % keys] = i;
    }
    long start = System.nanoTime();
    StringBuilder disturbances = new StringBuilder();
    double produced = produceWhileDisturbing(harness, records, i -> new ProducerRecord<>("bench-customers",
        Integer.toString(i % keys), "{\"name\":\"r" + i + "\"}"), start, "bench-customers", disturbances);
    String[] mismatch = {""};
    KafkaConnectHarness.await(Duration.ofMinutes(30), Duration.ofSeconds(2), () -> {
      mismatch[0] = entityMismatch(catalog(harness), id, last);
      return mismatch[0].isEmpty();
    }, "the latest value of every key in bench.customers");
    double visible = seconds(start);
    harness.deleteConnector("bench-customers");
    return "{\"keys\":" + keys + ",\"produce_s\":" + round(produced) + ",\"visible_s\":" + round(visible)
        + ",\"records_per_s\":" + Math.round(records / visible) + ",\"latest_value_per_key\":true" + disturbances + "}";
  }

  /**
   * Produces {@code records} from another thread while this one restarts the Connect task once a
   * quarter of them is produced and stops and starts the engine again at half. The producer runs
   * several times faster than the sink, so both happen in the middle of the sink's load. Returns
   * the seconds producing took; the seconds of both restarts go to {@code disturbances}.
   */
  private static double produceWhileDisturbing(KafkaConnectHarness harness, int records,
      java.util.function.IntFunction<ProducerRecord<String, String>> record, long start, String connector,
      StringBuilder disturbances) throws Exception {
    double[] produced = {0};
    java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
    Thread producerThread = new Thread(() -> {
      try (KafkaProducer<String, String> producer = harness.producer()) {
        for (int i = 0; i < records; i++) {
          producer.send(record.apply(i));
          sent.incrementAndGet();
        }
      }
      produced[0] = seconds(start);
    }, "bench-producer");
    producerThread.start();
    KafkaConnectHarness.await(Duration.ofMinutes(10), Duration.ofMillis(50), () -> sent.get() >= records / 4, "a quarter produced");
    harness.restartTask(connector);
    double task = seconds(start);
    KafkaConnectHarness.await(Duration.ofMinutes(10), Duration.ofMillis(50), () -> sent.get() >= records / 2, "half produced");
    harness.restartEngine();
    double engine = seconds(start);
    disturbances.append(",\"task_restart_s\":").append(round(task)).append(",\"engine_restart_s\":").append(round(engine));
    producerThread.join();
    return produced[0];
  }

  /** Empty when the table holds exactly the value of the last record of every key. */
  private static String entityMismatch(Catalog catalog, TableIdentifier id, int[] last) {
    BitSet seen = new BitSet(last.length);
    try (CloseableIterable<Record> all = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record row : all) {
        int key = (int) (long) (Long) row.getField("id");
        if (seen.get(key)) {
          return "key " + key + " twice";
        }
        seen.set(key);
        if (!("r" + last[key]).equals(row.getField("name"))) {
          return "key " + key + ": " + row.getField("name");
        }
      }
    } catch (java.io.IOException e) {
      return e.toString();
    }
    return seen.cardinality() == last.length ? "" : (last.length - seen.cardinality()) + " keys missing";
  }

  /** Produce one record, wait until Iceberg shows it (the reconciled snapshot), repeat. */
  private static String freshness(KafkaConnectHarness harness, int samples) throws Exception {
    TableIdentifier id = TableIdentifier.parse("bench.fresh");
    Tables.create(catalog(harness), id, TableDefinition.builder("id bigint not null").build());
    harness.createTopic("bench-fresh", 1);
    Map<String, String> config = harness.connectorConfig("bench-fresh", "bench-fresh");
    config.put(EngineSinkConfig.TABLE, "bench.fresh");
    harness.putConnector(config);
    List<Long> millis = new ArrayList<>();
    try (KafkaProducer<String, String> producer = harness.producer()) {
      for (int i = 0; i < samples; i++) {
        long start = System.nanoTime();
        producer.send(new ProducerRecord<>("bench-fresh", null, "{\"id\":" + i + "}")).get();
        long expected = i + 1;
        KafkaConnectHarness.await(Duration.ofMinutes(1), Duration.ofMillis(20),
            () -> totalRecords(catalog(harness), id) >= expected, "record " + expected + " visible");
        millis.add((System.nanoTime() - start) / 1_000_000);
      }
    }
    harness.deleteConnector("bench-fresh");
    Collections.sort(millis);
    return "{\"samples\":" + samples + ",\"p50_ms\":" + millis.get(samples / 2) + ",\"p90_ms\":"
        + millis.get(samples * 9 / 10) + ",\"max_ms\":" + millis.get(samples - 1) + "}";
  }

  private static long totalRecords(Catalog catalog, TableIdentifier id) {
    Table table = catalog.loadTable(id);
    Snapshot snapshot = table.currentSnapshot();
    return snapshot == null ? 0 : Long.parseLong(snapshot.summary().getOrDefault("total-records", "0"));
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static double round(double seconds) {
    return Math.round(seconds * 10) / 10.0;
  }
}

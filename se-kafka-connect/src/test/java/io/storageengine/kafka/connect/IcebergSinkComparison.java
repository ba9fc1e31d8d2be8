package io.storageengine.kafka.connect;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The same append load as {@link KafkaConnectBenchmark} (records/s from the first produce to
 * every row in an Iceberg snapshot, missing and duplicated ids, produce-to-visible one record at
 * a time) through Iceberg's own Kafka Connect sink ({@code org.apache.iceberg.connect.IcebergSinkConnector})
 * into a Hadoop catalog in a temporary directory, in the same in-process broker and Connect
 * worker, without restarts. Its commit interval is the second argument (default 1000 ms; the
 * sink's own default is 300000 ms). Prints one JSON object.
 *
 * <pre>{@code
 * java --add-opens=java.base/java.nio=ALL-UNNAMED -cp <se-kafka-connect test classpath> \
 *     io.storageengine.kafka.connect.IcebergSinkComparison [records, default 1000000] [commit interval ms, default 1000]
 * }</pre>
 */
public final class IcebergSinkComparison {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.optional(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  private IcebergSinkComparison() {
  }

  public static void main(String[] args) throws Exception {
    int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    String commitMillis = args.length > 1 ? args[1] : "1000";
    Path dir = Files.createTempDirectory("se-kafka-iceberg-sink");
    Path warehouse = Files.createDirectories(dir.resolve("warehouse"));
    try (KafkaConnectHarness harness = KafkaConnectHarness.start(dir, Map.of());
        HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toUri().toString())) {
      String append = appendLoad(harness, catalog, warehouse, records, commitMillis);
      String freshness = freshness(harness, catalog, warehouse, 10, commitMillis);
      System.out.println("{\"sink\":\"iceberg-kafka-connect\",\"records\":" + records + ",\"commit_interval_ms\":"
          + commitMillis + ",\"append\":" + append + ",\"freshness\":" + freshness + "}");
    }
  }

  private static Map<String, String> config(KafkaConnectHarness harness, String name, String topic, String table,
      Path warehouse, String commitMillis) {
    Map<String, String> config = new HashMap<>();
    // Its coordinator's own Kafka clients (control topic, transactions, consumer-group lookups).
    config.put("iceberg.kafka.bootstrap.servers", harness.kafka.bootstrapServers());
    config.put("name", name);
    config.put("connector.class", "org.apache.iceberg.connect.IcebergSinkConnector");
    config.put("tasks.max", "1");
    config.put("topics", topic);
    config.put("iceberg.tables", table);
    config.put("iceberg.catalog.catalog-impl", HadoopCatalog.class.getName());
    config.put("iceberg.catalog.warehouse", warehouse.toUri().toString());
    config.put("iceberg.control.topic", "control-" + name);
    config.put("iceberg.control.commit.interval-ms", commitMillis);
    return config;
  }

  private static String appendLoad(KafkaConnectHarness harness, HadoopCatalog catalog, Path warehouse, int records,
      String commitMillis) throws Exception {
    TableIdentifier id = TableIdentifier.parse("bench.events");
    catalog.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
    harness.createTopic("iceberg-events", 4);
    harness.createTopic("control-iceberg-events", 1);
    harness.putConnector(config(harness, "iceberg-events", "iceberg-events", "bench.events", warehouse, commitMillis));
    long start = System.nanoTime();
    try (KafkaProducer<String, String> producer = harness.producer()) {
      for (int i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>("iceberg-events", Integer.toString(i), "{\"id\":" + i + ",\"name\":\"n" + i + "\"}"));
      }
    }
    double produced = seconds(start);
    KafkaConnectHarness.await(Duration.ofMinutes(30), Duration.ofSeconds(1),
        () -> totalRecords(catalog, id) >= records, records + " rows in bench.events");
    double visible = seconds(start);
    BitSet seen = new BitSet(records);
    long rows = 0;
    try (CloseableIterable<Record> all = IcebergGenerics.read(catalog.loadTable(id)).select("id").build()) {
      for (Record row : all) {
        seen.set((int) (long) (Long) row.getField("id"));
        rows++;
      }
    }
    harness.deleteConnector("iceberg-events");
    return "{\"produce_s\":" + round(produced) + ",\"visible_s\":" + round(visible)
        + ",\"records_per_s\":" + Math.round(records / visible) + ",\"missing\":" + (records - seen.cardinality())
        + ",\"duplicates\":" + (rows - seen.cardinality()) + "}";
  }

  private static String freshness(KafkaConnectHarness harness, HadoopCatalog catalog, Path warehouse, int samples,
      String commitMillis) throws Exception {
    TableIdentifier id = TableIdentifier.parse("bench.fresh");
    catalog.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
    harness.createTopic("iceberg-fresh", 1);
    harness.createTopic("control-iceberg-fresh", 1);
    harness.putConnector(config(harness, "iceberg-fresh", "iceberg-fresh", "bench.fresh", warehouse, commitMillis));
    List<Long> millis = new ArrayList<>();
    try (KafkaProducer<String, String> producer = harness.producer()) {
      for (int i = 0; i < samples; i++) {
        long start = System.nanoTime();
        producer.send(new ProducerRecord<>("iceberg-fresh", null, "{\"id\":" + i + "}")).get();
        long expected = i + 1;
        KafkaConnectHarness.await(Duration.ofMinutes(2), Duration.ofMillis(20),
            () -> totalRecords(catalog, id) >= expected, "record " + expected + " visible");
        millis.add((System.nanoTime() - start) / 1_000_000);
      }
    }
    harness.deleteConnector("iceberg-fresh");
    Collections.sort(millis);
    return "{\"samples\":" + samples + ",\"p50_ms\":" + millis.get(samples / 2) + ",\"p90_ms\":"
        + millis.get(samples * 9 / 10) + ",\"max_ms\":" + millis.get(samples - 1) + "}";
  }

  private static long totalRecords(HadoopCatalog catalog, TableIdentifier id) {
    Snapshot snapshot = catalog.loadTable(id).currentSnapshot();
    return snapshot == null ? 0 : Long.parseLong(snapshot.summary().getOrDefault("total-records", "0"));
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static double round(double seconds) {
    return Math.round(seconds * 10) / 10.0;
  }
}

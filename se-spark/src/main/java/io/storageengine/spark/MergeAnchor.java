package io.storageengine.spark;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark side of the entity upsert benchmark: the same work as the engine's entity run, done
 * with Spark's {@code MERGE INTO} on an Iceberg table, so the engine's throughput can be put next
 * to it. Prints one JSON object on standard output; Spark's logging goes to standard error.
 *
 * <p>Spark 4 {@code local[N]} (default 2), an Iceberg Hadoop catalog {@code anchor} on a local
 * warehouse directory, one table {@code anchor.bench.entity (id bigint, ts timestamp_ntz, v int,
 * s string)}, format version 3, merge-on-read for merge, update and delete (so updated rows are
 * deleted through deletion vectors, as the engine does). It loads {@code keys} rows
 * ({@code id = 0..keys-1}, version 1), then runs {@code batches} batches of {@code batch} rows
 * (after {@code warmup-batches} of the same shape, default 1, timed apart: the first statement
 * of a fresh JVM mostly measures class loading and the JIT) through
 * {@code MERGE INTO t USING b ON t.id = b.id WHEN MATCHED AND b.ts > t.ts THEN UPDATE SET *
 * WHEN NOT MATCHED THEN INSERT *}: half updates of distinct random existing keys, half new keys
 * (above every key so far), at the next version. The values are those of the engine
 * benchmark's entity rows: {@code ts = 1_700_000_000 s + version s + (id % 1000) us},
 * {@code v = id * 31 % 100000}, {@code s = 's' || id % 10000}. Only the {@code MERGE} statements
 * are timed: each batch is built and cached before its statement starts.
 *
 * <p>Usage: {@code MergeAnchor --keys N --batch B [--batches K] [--warmup-batches W] [--cores C]
 * [--warehouse DIR]}.
 * Without {@code --warehouse} a temporary directory is used and deleted afterwards. The result:
 * {@code {"engine":"spark","spark_version":..,"keys":N,"batch_rows":B,"batches":K,
 * "load_seconds":..,"warmup_batch_seconds":[..],"batch_seconds":[..],"seconds":..,"rows_per_second":..,
 * "rows_per_second_median_batch":..,"live_rows":..,"data_files":..,"delete_files":..}}, where
 * {@code rows_per_second} is every batch's rows over the sum of the batches' seconds and
 * {@code live_rows} is the table's count afterwards (checked: {@code keys + (W + K) * B / 2}).
 * Exit code 0 on success, 1 when the check fails, 2 for bad usage.
 */
public final class MergeAnchor {
  private static final long BASE_MICROS = 1_700_000_000_000_000L;
  private static final String TABLE = "anchor.bench.entity";

  private MergeAnchor() {}

  public static void main(String[] args) throws Exception {
    long keys = -1;
    int batch = -1;
    int batches = 3;
    int warmup = 1;
    int cores = 2;
    Path warehouse = null;
    try {
      for (int i = 0; i + 1 < args.length; i += 2) {
        switch (args[i]) {
          case "--keys" -> keys = Long.parseLong(args[i + 1]);
          case "--batch" -> batch = Integer.parseInt(args[i + 1]);
          case "--batches" -> batches = Integer.parseInt(args[i + 1]);
          case "--warmup-batches" -> warmup = Integer.parseInt(args[i + 1]);
          case "--cores" -> cores = Integer.parseInt(args[i + 1]);
          case "--warehouse" -> warehouse = Path.of(args[i + 1]);
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (args.length % 2 != 0 || keys < 1 || batch < 2 || batches < 1 || warmup < 0 || cores < 1) {
        throw new IllegalArgumentException("--keys and --batch are required, --keys >= 1, --batch >= 2");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("usage: MergeAnchor --keys N --batch B [--batches K] [--warmup-batches W] [--cores C]"
          + " [--warehouse DIR]: "
          + e.getMessage());
      System.exit(2);
    }
    boolean temporary = warehouse == null;
    Path dir = temporary ? Files.createTempDirectory("se-merge-anchor-") : warehouse;
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    int status;
    try (SparkSession spark = session(dir, cores)) {
      StringBuilder json = new StringBuilder();
      status = run(spark, keys, batch, batches, warmup, cores, json);
      out.println(json);
    } finally {
      if (temporary) {
        deleteRecursively(dir);
      }
    }
    System.exit(status);
  }

  private static SparkSession session(Path warehouse, int cores) {
    return SparkSession.builder()
        .appName("se-merge-anchor")
        .master("local[" + cores + "]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", Integer.toString(cores))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.anchor", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.anchor.type", "hadoop")
        .config("spark.sql.catalog.anchor.warehouse", warehouse.toUri().toString())
        .getOrCreate();
  }

  private static int run(SparkSession spark, long keys, int batch, int batches, int warmup,
      int cores, StringBuilder json) {
    spark.sql("CREATE NAMESPACE IF NOT EXISTS anchor.bench");
    spark.sql("CREATE TABLE " + TABLE + " (id bigint NOT NULL, ts timestamp_ntz NOT NULL, v int, s string)"
        + " USING iceberg TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read',"
        + " 'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read')");
    long loadStart = System.nanoTime();
    spark.sql("INSERT INTO " + TABLE + " SELECT id, " + tsExpression("id", 1)
        + ", CAST(id * 31 % 100000 AS INT), concat('s', CAST(id % 10000 AS STRING)) FROM range(" + keys + ")");
    double loadSeconds = seconds(loadStart);

    Random random = new Random(keys);
    long nextNew = keys;
    int half = batch / 2;
    List<Double> batchSeconds = new ArrayList<>();
    List<Double> warmupSeconds = new ArrayList<>();
    for (int b = 0; b < warmup + batches; b++) {
      long version = 2 + b;
      List<Row> rows = new ArrayList<>(batch);
      Set<Long> updated = new HashSet<>();
      while (updated.size() < half) {
        long k = (long) (random.nextDouble() * keys);
        if (updated.add(k)) {
          rows.add(row(k, version));
        }
      }
      for (int i = 0; i < batch - half; i++) {
        rows.add(row(nextNew++, version));
      }
      Dataset<Row> source = spark.createDataFrame(rows, schema()).repartition(cores).cache();
      source.count();
      source.createOrReplaceTempView("batch");
      long start = System.nanoTime();
      spark.sql("MERGE INTO " + TABLE + " t USING batch b ON t.id = b.id"
          + " WHEN MATCHED AND b.ts > t.ts THEN UPDATE SET *"
          + " WHEN NOT MATCHED THEN INSERT *");
      (b < warmup ? warmupSeconds : batchSeconds).add(seconds(start));
      source.unpersist(true);
    }

    long live = spark.sql("SELECT count(*) FROM " + TABLE).first().getLong(0);
    long expected = keys + (long) (warmup + batches) * (batch - half);
    long dataFiles = spark.sql("SELECT count(*) FROM " + TABLE + ".data_files").first().getLong(0);
    long deleteFiles = spark.sql("SELECT count(*) FROM " + TABLE + ".delete_files").first().getLong(0);
    double total = batchSeconds.stream().mapToDouble(Double::doubleValue).sum();
    List<Double> sorted = new ArrayList<>(batchSeconds);
    sorted.sort(null);
    double median = sorted.size() % 2 == 1 ? sorted.get(sorted.size() / 2)
        : (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2;
    json.append("{\"engine\":\"spark\",\"spark_version\":\"").append(spark.version())
        .append("\",\"cores\":").append(cores)
        .append(",\"keys\":").append(keys)
        .append(",\"batch_rows\":").append(batch)
        .append(",\"batches\":").append(batches)
        .append(",\"load_seconds\":").append(round(loadSeconds))
        .append(",\"warmup_batch_seconds\":");
    array(json, warmupSeconds);
    json.append(",\"batch_seconds\":");
    array(json, batchSeconds);
    json.append(",\"seconds\":").append(round(total))
        .append(",\"rows_per_second\":").append(Math.round((double) batch * batches / total))
        .append(",\"rows_per_second_median_batch\":").append(Math.round(batch / median))
        .append(",\"live_rows\":").append(live)
        .append(",\"expected_live_rows\":").append(expected)
        .append(",\"data_files\":").append(dataFiles)
        .append(",\"delete_files\":").append(deleteFiles)
        .append('}');
    if (live != expected) {
      System.err.println("MergeAnchor: the table has " + live + " rows, expected " + expected);
      return 1;
    }
    return 0;
  }

  private static void array(StringBuilder json, List<Double> seconds) {
    json.append('[');
    for (int i = 0; i < seconds.size(); i++) {
      json.append(i == 0 ? "" : ",").append(round(seconds.get(i)));
    }
    json.append(']');
  }

  /** Spark SQL for the engine benchmark's version timestamp of key {@code id} at {@code version}. */
  private static String tsExpression(String id, long version) {
    return "CAST(timestamp_micros(" + (BASE_MICROS + version * 1_000_000L) + " + " + id
        + " % 1000) AS TIMESTAMP_NTZ)";
  }

  private static Row row(long id, long version) {
    long micros = BASE_MICROS + version * 1_000_000L + id % 1000;
    LocalDateTime ts = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
        (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
    return RowFactory.create(id, ts, (int) (id * 31 % 100_000), "s" + id % 10_000);
  }

  private static StructType schema() {
    return new StructType()
        .add("id", DataTypes.LongType, false)
        .add("ts", DataTypes.TimestampNTZType, false)
        .add("v", DataTypes.IntegerType, true)
        .add("s", DataTypes.StringType, true);
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static double round(double seconds) {
    return Math.round(seconds * 1000) / 1000.0;
  }

  private static void deleteRecursively(Path dir) throws java.io.IOException {
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}

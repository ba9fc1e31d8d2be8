package io.storageengine.spark;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;

/**
 * Runs SQL statements in Spark 4 ({@code local[1]} unless told otherwise) against one tenant's
 * Iceberg REST facade and prints one JSON line per statement on standard output, in order:
 * {@code {"sql":"...","rows":[{...},...],"columns":[{"name":"...","type":"..."},...],"ms":12.3}}
 * with each row as Spark's {@code toJSON} renders it (a field whose value is NULL is left out),
 * {@code columns} the result's columns in order with Spark's type names ({@code bigint},
 * {@code decimal(38,6)}, {@code date}, ...) and {@code ms} the statement's time in Spark from
 * parsing to the last row collected; or
 * {@code {"sql":"...","error":"...","causes":["...",...],"ms":12.3}} when the statement fails:
 * {@code error} is the exception's message as Spark shows it, {@code causes} every exception of
 * its cause chain as {@code class: message}. A failing statement does not stop the ones after it.
 *
 * <p>Usage: {@code FacadeSqlDriver <facade base URI>}, e.g.
 * {@code http://127.0.0.1:7777/catalogs/warehouse}; the statements come from standard input, one
 * per line (blank lines skipped). The catalog is named {@code se}. A bearer token, when the
 * engine wants one, comes from the environment variable {@code SE_TOKEN} (never from the command
 * line, where other users of the machine could read it). Spark's own logging goes to standard
 * error. Exit code 0 once every statement ran, 2 for bad usage.
 *
 * <p>System properties: {@code se.spark.master} (default {@code local[1]}) is Spark's master,
 * e.g. {@code local[2]} for two cores; {@code se.spark.shuffle.partitions} (default 1) is {@code
 * spark.sql.shuffle.partitions}.
 */
public final class FacadeSqlDriver {
  private FacadeSqlDriver() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: FacadeSqlDriver <facade base URI>  (statements on stdin, token in SE_TOKEN)");
      System.exit(2);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    SparkSession.Builder builder = SparkSession.builder()
        .appName("se-facade-sql")
        .master(System.getProperty("se.spark.master", "local[1]"))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", System.getProperty("se.spark.shuffle.partitions", "1"))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.se", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.se.type", "rest")
        .config("spark.sql.catalog.se.uri", args[0]);
    String token = System.getenv("SE_TOKEN");
    if (token != null && !token.isEmpty()) {
      builder.config("spark.sql.catalog.se.token", token);
    }
    try (SparkSession spark = builder.getOrCreate();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String sql = in.readLine(); sql != null; sql = in.readLine()) {
        if (!sql.isBlank()) {
          out.println(run(spark, sql.strip()));
        }
      }
    }
  }

  private static String run(SparkSession spark, String sql) {
    StringBuilder line = new StringBuilder("{\"sql\":").append(quote(sql));
    long started = System.nanoTime();
    try {
      Dataset<Row> result = spark.sql(sql);
      List<String> rows = result.toJSON().collectAsList();
      double ms = (System.nanoTime() - started) / 1e6;
      line.append(",\"rows\":[").append(String.join(",", rows)).append("],\"columns\":[");
      String sep = "";
      for (StructField field : result.schema().fields()) {
        line.append(sep).append("{\"name\":").append(quote(field.name()))
            .append(",\"type\":").append(quote(field.dataType().simpleString())).append('}');
        sep = ",";
      }
      line.append("],\"ms\":").append(Math.round(ms * 10) / 10.0);
    } catch (Exception e) {
      line.append(",\"error\":").append(quote(String.valueOf(e.getMessage()))).append(",\"causes\":[");
      String sep = "";
      for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
        line.append(sep).append(quote(t.getClass().getName() + ": " + t.getMessage()));
        sep = ",";
      }
      line.append("],\"ms\":").append(Math.round((System.nanoTime() - started) / 1e5) / 10.0);
    }
    return line.append('}').toString();
  }

  /** A JSON string literal. */
  private static String quote(String s) {
    StringBuilder q = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> q.append("\\\"");
        case '\\' -> q.append("\\\\");
        case '\n' -> q.append("\\n");
        case '\r' -> q.append("\\r");
        case '\t' -> q.append("\\t");
        default -> {
          if (c < 0x20) {
            q.append(String.format("\\u%04x", (int) c));
          } else {
            q.append(c);
          }
        }
      }
    }
    return q.append('"').toString();
  }
}

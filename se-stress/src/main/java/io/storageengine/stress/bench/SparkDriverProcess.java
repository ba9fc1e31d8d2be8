package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.storageengine.common.SparkModuleCommand;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Runs SQL statements in Spark local through a tenant's Iceberg REST facade: a child JVM runs the
 * {@code se-spark} module's {@code io.storageengine.spark.FacadeSqlDriver} on the classpath that
 * module resolved ({@code <module target>/classes} and {@code <module target>/spark-classpath.txt};
 * Spark's dependency versions differ from the engine's, so it never shares this JVM). One Spark
 * session runs every statement in order; the driver's JSON line for each is read back with its
 * values as {@link ResultDiff} compares them ({@link #value}).
 */
final class SparkDriverProcess {
  /** Decimals as the driver printed them, not rounded through a double. */
  private static final ObjectMapper EXACT = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
      .build();

  /**
   * One statement's outcome: its result's Spark type names in column order, its rows (empty on
   * error), the driver's time for it in milliseconds, and the error message or null.
   */
  record Result(String sql, List<String> types, List<List<Object>> rows, double ms, String error) {}

  /** How the child runs: Spark's master ({@code local[2]}), shuffle partitions, heap ({@code 4g}). */
  record Settings(Path moduleTarget, String master, int shufflePartitions, String heap, Duration timeout) {}

  private SparkDriverProcess() {}

  /**
   * Runs {@code statements} (each on one line: newlines become spaces) in one Spark session
   * against {@code facade} ({@code http://host:port/catalogs/<id>}, the catalog named {@code se}
   * in Spark), with {@code work} for the child's files (its temporary and Spark's local
   * directory, its standard output and error). Fails if the child does not exit 0 within the
   * timeout or does not print one line per statement; a failing statement is a {@link Result}
   * with its error.
   */
  static List<Result> run(Settings settings, URI facade, List<String> statements, Path work)
      throws IOException, InterruptedException {
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    Path stdin = work.resolve("statements.sql");
    Path stdout = work.resolve("stdout.jsonl");
    Path stderr = work.resolve("stderr.log");
    List<String> lines = new ArrayList<>();
    for (String s : statements) {
      lines.add(s.replaceAll("\\s*\\R\\s*", " ").strip());
    }
    Files.write(stdin, lines, StandardCharsets.UTF_8);
    List<String> command = SparkModuleCommand.of(settings.moduleTarget(), List.of(
        "-Xmx" + settings.heap(),
        "-Djava.io.tmpdir=" + tmp.toAbsolutePath(),
        "-Dse.spark.master=" + settings.master(),
        "-Dse.spark.shuffle.partitions=" + settings.shufflePartitions()),
        "io.storageengine.spark.FacadeSqlDriver", List.of(facade.toString()));
    ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
        .redirectInput(stdin.toFile()).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    Process child = builder.start();
    try {
      if (!child.waitFor(settings.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the Spark child did not exit within " + settings.timeout() + "; see " + stderr);
      }
      if (child.exitValue() != 0) {
        throw new IllegalStateException("the Spark child exited " + child.exitValue() + "; see " + stderr);
      }
    } finally {
      child.destroyForcibly();
    }
    List<Result> results = new ArrayList<>();
    for (String line : Files.readAllLines(stdout, StandardCharsets.UTF_8)) {
      if (!line.isBlank()) {
        results.add(parse(line));
      }
    }
    if (results.size() != statements.size()) {
      throw new IllegalStateException("the Spark child printed " + results.size() + " results for "
          + statements.size() + " statements; see " + stderr);
    }
    return results;
  }

  /** One line of the driver's output. */
  static Result parse(String line) throws IOException {
    JsonNode node = EXACT.readTree(line);
    String sql = node.path("sql").asText();
    double ms = node.path("ms").asDouble(Double.NaN);
    if (node.has("error")) {
      return new Result(sql, List.of(), List.of(), ms, node.path("error").asText());
    }
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    for (JsonNode column : node.path("columns")) {
      names.add(column.path("name").asText());
      types.add(column.path("type").asText());
    }
    List<List<Object>> rows = new ArrayList<>();
    for (JsonNode row : node.path("rows")) {
      List<Object> values = new ArrayList<>(names.size());
      for (int c = 0; c < names.size(); c++) {
        values.add(value(row.get(names.get(c)), types.get(c)));
      }
      rows.add(values);
    }
    return new Result(sql, types, rows, ms, null);
  }

  /**
   * A value of Spark's {@code toJSON} as the benchmark's readers give it: integers of every width
   * {@link Long}, {@code decimal(p,s)} {@link java.math.BigDecimal} (exact), {@code double} and
   * {@code float} {@link Double}, {@code date} {@link LocalDate}, strings and everything else
   * text; an absent field (how {@code toJSON} writes NULL) or a JSON null is null.
   */
  static Object value(JsonNode v, String type) {
    if (v == null || v.isNull()) {
      return null;
    }
    String t = type.toLowerCase(Locale.ROOT);
    return switch (t) {
      case "bigint", "int", "smallint", "tinyint" -> v.longValue();
      case "double", "float" -> v.doubleValue();
      case "date" -> LocalDate.parse(v.asText());
      default -> t.startsWith("decimal") ? v.decimalValue() : v.isTextual() ? v.asText() : v.toString();
    };
  }
}

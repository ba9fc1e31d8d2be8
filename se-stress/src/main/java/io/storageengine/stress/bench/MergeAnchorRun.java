package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.common.SparkModuleCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs the Spark {@code MERGE INTO} anchor ({@code io.storageengine.spark.MergeAnchor} of the
 * {@code se-spark} module) in a child JVM and returns the JSON object it printed. Spark is not
 * on se-stress's classpath: the child runs on {@code <module>/target/classes} and the jars listed
 * in {@code <module>/target/spark-classpath.txt}, which
 * {@code mvn -q -B -pl se-spark process-classes} writes (the first time it downloads Spark,
 * about 245 MiB). The child's standard error (Spark's log) goes to {@code <module>/target/merge-anchor.log}.
 */
final class MergeAnchorRun {
  /** The module opens Spark 4 needs on Java 17: the same as the TPC-H driver's. */

  private final Path module;
  private final String heap;
  private final int cores;

  /**
   * @param module the {@code se-spark} module directory (holding {@code target/})
   * @param heap the child's {@code -Xmx}, e.g. {@code 4g}
   * @param cores Spark's {@code local[cores]}
   */
  MergeAnchorRun(Path module, String heap, int cores) {
    this.module = module;
    this.heap = heap;
    this.cores = cores;
  }

  /**
   * Loads {@code keys} rows into a fresh Iceberg v3 merge-on-read table and merges
   * {@code warmup + batches} batches of {@code batch} rows (half updates); blocks until the child
   * exits. Fails with {@code NOT_FOUND} when the module is not built, with
   * {@code INTERNAL} when the child fails or prints no JSON object.
   */
  ObjectNode run(long keys, int batch, int batches, int warmup) throws IOException, InterruptedException {
    Path target = module.resolve("target");
    Path tmp = Files.createTempDirectory("se-merge-anchor-tmp-");
    List<String> command = SparkModuleCommand.of(target, List.of("-Xmx" + heap, "-Djava.io.tmpdir=" + tmp),
        "io.storageengine.spark.MergeAnchor",
        List.of("--keys", Long.toString(keys), "--batch", Integer.toString(batch),
            "--batches", Integer.toString(batches), "--warmup-batches", Integer.toString(warmup),
            "--cores", Integer.toString(cores), "--warehouse", tmp.resolve("warehouse").toString()));
    Path log = target.resolve("merge-anchor.log");
    Process process = new ProcessBuilder(command)
        .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
    process.getOutputStream().close();
    String stdout;
    try {
      stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int exit = process.waitFor();
      String line = stdout.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElse(null);
      if (exit != 0 || line == null) {
        throw new SeException(ErrorCode.INTERNAL, "the Spark anchor exited with code " + exit
            + " (log: " + log + "): " + stdout.strip());
      }
      return (ObjectNode) Json.MAPPER.readTree(line);
    } finally {
      process.destroyForcibly();
      BenchFixtures.deleteRecursively(tmp);
    }
  }
}

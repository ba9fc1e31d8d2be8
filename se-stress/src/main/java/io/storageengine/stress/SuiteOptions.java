package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * What the kill suites ({@code crash-suite}, {@code cluster-suite}) share: the launcher, the
 * shape of the load, the work directory, verification limits and the report.
 */
final class SuiteOptions {
  @Option(names = "--se", defaultValue = "./se", description = "The se launcher (default ${DEFAULT-VALUE}).")
  Path launcher;

  @Option(names = "--batch-rows", defaultValue = "200", description = "Rows per batch (default ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--row-bytes", defaultValue = "64", description = "Payload bytes per row (default ${DEFAULT-VALUE}).")
  int rowBytes;

  @Option(names = "--key-space", defaultValue = "5000", description = "Entity tables: distinct keys (default ${DEFAULT-VALUE}).")
  long keySpace;

  @Option(names = "--flush-interval", defaultValue = "200ms", description = "The servers' --ingest.flush-interval (default ${DEFAULT-VALUE}).")
  String flushInterval;

  @Option(names = "--warmup-streams", description = "The servers' --server.warmup-streams (default: the server's own; 0 starts them faster, without the ingest warm-up).")
  Integer warmupStreams;

  @Option(names = "--seed", description = "Seed of the kills and the producers (default: random, printed in the report).")
  Long seed;

  @Option(names = "--work-dir", description = "Where the data and the logs go (default: a new temporary directory).")
  Path workDir;

  @Option(names = "--keep", description = "Keep the work directory afterwards (it is always kept when verification fails).")
  boolean keep;

  @Option(names = "--settle", defaultValue = "3s", converter = DurationConverter.class, description = "Verification: tables unchanged this long first (default ${DEFAULT-VALUE}).")
  Duration settle;

  @Option(names = "--verify-timeout", defaultValue = "240s", converter = DurationConverter.class, description = "Verification: give up after (default ${DEFAULT-VALUE}).")
  Duration verifyTimeout;

  @Option(names = "--startup-timeout", defaultValue = "120s", converter = DurationConverter.class, description = "How long a process may take to become healthy (default ${DEFAULT-VALUE}).")
  Duration startupTimeout;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the JSON report to FILE.")
  Path json;

  /** Fails with a usage error unless the launcher can be run. */
  void checkLauncher() {
    if (!Files.isExecutable(launcher)) {
      throw SeException.invalid("--se: %s is not an executable launcher", launcher);
    }
  }

  /** The seed given, else a random one (printed in the report so a run can be repeated). */
  /** {@code args} with {@code --server.warmup-streams} added when {@code --warmup-streams} was given. */
  List<String> withWarmup(List<String> args) {
    if (warmupStreams == null) {
      return args;
    }
    List<String> all = new java.util.ArrayList<>(args);
    all.addAll(List.of("--server.warmup-streams", Integer.toString(warmupStreams)));
    return all;
  }

  long resolveSeed() {
    return seed != null ? seed : new Random().nextLong();
  }

  /** The work directory given (created), else a new temporary one named {@code prefix...}. */
  Path workDirectory(String prefix) throws IOException {
    return workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory(prefix);
  }

  /** One append or entity load of {@code tables} tables of the {@code warehouse} catalog. */
  LoadConfig load(String namespace, int tables, boolean entity, int concurrency, long rate, long producerSeed) {
    return new LoadConfig("warehouse", namespace, namespace, tables, entity, rowBytes, keySpace,
        entity ? 0.6 : 0, entity ? 0.1 : 0, concurrency, rate, batchRows, 8, producerSeed, false);
  }

  /** Runs a suite from {@code main}: usage errors exit 2, failures 1, and the message names the suite. */
  static void main(String name, Callable<Integer> suite, String[] args) {
    CommandLine cli = new CommandLine(suite);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println(name + ": " + (e instanceof SeException ? e.getMessage() : e.toString()));
      return e instanceof SeException se && se.code().category() == ErrorCode.Category.USER ? 2 : 1;
    });
    System.exit(cli.execute(args));
  }

  /**
   * The verdict of a verification in the report: {@code exactly_once} (every batch sent,
   * acknowledged or not, is stored exactly once), {@code missing}, {@code duplicated} and
   * {@code wrong}, each the worst over every table and both readers (Flight SQL and Iceberg's
   * reader), the producers' resends ({@code idempotence}), then the per-table
   * {@code verification} and the {@code load} summaries.
   */
  static void putOutcome(ObjectNode report, Verifier.Outcome outcome, LoadSession append, LoadSession entity) {
    long missing = 0;
    long duplicated = 0;
    long wrong = 0;
    for (TableVerification t : outcome.tables()) {
      missing = Math.max(missing, t.missing());
      duplicated = Math.max(duplicated, t.duplicated());
      wrong = Math.max(wrong, t.wrong());
    }
    // Every planned batch sent, acknowledged or not, is demanded exactly once.
    report.put("exactly_once", outcome.passed());
    report.put("missing", missing);
    report.put("duplicated", duplicated);
    report.put("wrong", wrong);
    ObjectNode resends = report.putObject("idempotence");
    for (LoadSession s : List.of(append, entity)) {
      ObjectNode node = resends.putObject(s == append ? "append" : "entity");
      node.put("batches_resent", s.metrics().batchesResent.sum());
      node.put("reconnects", s.metrics().reconnects.sum());
      node.put("duplicate_acks", s.metrics().duplicateAcks.sum());
      node.put("batches_unacknowledged", s.metrics().batchesUnknown.sum());
    }
    report.set("verification", outcome.toJson());
    ObjectNode load = report.putObject("load");
    load.set("append", append.summary());
    load.set("entity", entity.summary());
  }

  /**
   * Prints the report (and writes {@code --json}); deletes a temporary work directory of a
   * passed run unless {@code --keep}. Returns the exit code.
   */
  int finish(PrintStream out, ObjectNode report, Path work, boolean passed) throws IOException {
    String text = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(report);
    out.println(text);
    if (json != null) {
      Files.writeString(json, text + "\n", StandardCharsets.UTF_8);
    }
    if (passed && !keep && workDir == null) {
      try (Stream<Path> paths = Files.walk(work)) {
        for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(p);
        }
      }
    }
    return passed ? 0 : 1;
  }
}

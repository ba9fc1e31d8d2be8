package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The crash suite: {@code se dev} as a separate process under load from in-process producers
 * (one append and one entity table), killed with SIGKILL at random moments and restarted on the
 * same data directory, again and again. The producers ingest idempotently and resend every batch
 * whose ack did not arrive until it is acknowledged. At the end, once reconciliation caught up,
 * every sent row, acknowledged or not, must be present exactly once and every entity key must
 * show its last sent operation: exactly once, 0 missing, 0 duplicated. Prints one JSON report on
 * stdout; exit code 0 when verification passed.
 */
@Command(name = "crash-suite", mixinStandardHelpOptions = true,
    description = "kill -9 a loaded `se dev` repeatedly, restart it, and prove every row sent (idempotently, resent until acknowledged) is stored exactly once.")
public final class CrashSuite implements Callable<Integer> {
  @Mixin SuiteOptions options;

  @Option(names = "--cycles", defaultValue = "10", description = "Kill/restart cycles (default ${DEFAULT-VALUE}).")
  int cycles;

  @Option(names = "--min-uptime", defaultValue = "2s", converter = DurationConverter.class, description = "Least time under load before a kill (default ${DEFAULT-VALUE}).")
  Duration minUptime;

  @Option(names = "--max-uptime", defaultValue = "6s", converter = DurationConverter.class, description = "Most time under load before a kill (default ${DEFAULT-VALUE}).")
  Duration maxUptime;

  @Option(names = "--after-last-restart", defaultValue = "3s", converter = DurationConverter.class, description = "Load after the last restart (default ${DEFAULT-VALUE}).")
  Duration afterLastRestart;

  @Option(names = "--concurrency", defaultValue = "2", description = "Producers per table (default ${DEFAULT-VALUE}).")
  int concurrency;



  @Option(names = "--rate", defaultValue = "5000", description = "Rows per second per table; 0 = as fast as possible (default ${DEFAULT-VALUE}).")
  long rate;



  @Option(names = "--server-java-opts", defaultValue = "-Xmx1g", description = "JVM options of se dev (SE_JAVA_OPTS; default ${DEFAULT-VALUE}).")
  String serverJavaOpts;








  private final PrintStream out;
  private final PrintStream err;

  CrashSuite(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    SuiteOptions.main("crash-suite", new CrashSuite(System.out, System.err), args);
  }

  @Override
  public Integer call() throws Exception {
    if (cycles < 1 || minUptime.compareTo(maxUptime) > 0) {
      throw SeException.invalid("--cycles must be positive and --min-uptime <= --max-uptime");
    }
    options.checkLauncher();
    long actualSeed = options.resolveSeed();
    Random random = new Random(actualSeed);
    Path work = options.workDirectory("se-crash-");
    Path dataDir = work.resolve("data");
    Path log = work.resolve("se-dev.log");
    int port = DevProcess.freePort();
    // Authentication on, as a cluster runs it: se dev in tokens mode, the load clients admins
    // through the bootstrap token (passed as the variable, like an operator would).
    String adminToken = java.util.HexFormat.of().formatHex(randomBytes());
    ServerEndpoint endpoint = new ServerEndpoint("127.0.0.1", port).withToken(adminToken);
    java.util.Map<String, String> serverEnvironment = java.util.Map.of("SE_AUTH_BOOTSTRAP_TOKEN", adminToken);
    List<String> serverArgs = options.withWarmup(List.of("--ingest.flush-interval", options.flushInterval,
        "--reconcile.interval", "1s", "--auth.mode", "tokens"));
    err.printf("crash-suite: seed %d, se dev on 127.0.0.1:%d, data in %s, log %s%n",
        actualSeed, port, dataDir, log);

    ArrayNode kills = Json.MAPPER.createArrayNode();
    ObjectNode report = Json.object();
    boolean passed;
    DevProcess[] dev = {DevProcess.start(options.launcher.toAbsolutePath(), port, dataDir, log, serverArgs, serverJavaOpts,
        serverEnvironment)};
    Thread reaper = new Thread(() -> dev[0].pidKill(), "crash-suite-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
    try (BufferAllocator allocator = new RootAllocator()) {
      dev[0].awaitHealthy(options.startupTimeout);
      long producerSeed = random.nextLong();
      try (LoadSession append = new LoadSession(load(false, producerSeed), endpoint, allocator, null);
          LoadSession entity = new LoadSession(load(true, producerSeed + 1), endpoint, allocator, null)) {
        append.createTables();
        entity.createTables();
        append.start();
        entity.start();
        for (int cycle = 1; cycle <= cycles; cycle++) {
          // Count uptime from the first ack after (re)start, so every kill hits a loaded server.
          awaitProgress(acked(append, entity), append, entity);
          long uptime = minUptime.toMillis()
              + (long) (random.nextDouble() * (maxUptime.toMillis() - minUptime.toMillis()));
          Thread.sleep(uptime);
          long ackedBefore = acked(append, entity);
          long pid = dev[0].pid();
          dev[0].kill();
          long down = System.nanoTime();
          Thread.sleep((long) (random.nextDouble() * 500));
          dev[0] = DevProcess.start(options.launcher.toAbsolutePath(), port, dataDir, log, serverArgs, serverJavaOpts,
        serverEnvironment);
          dev[0].awaitHealthy(options.startupTimeout);
          double downSeconds = (System.nanoTime() - down) / 1e9;
          ObjectNode kill = kills.addObject();
          kill.put("cycle", cycle);
          kill.put("killed_pid", pid);
          kill.put("uptime_ms", uptime);
          kill.put("rows_acked_before_kill", ackedBefore);
          kill.put("down_s", LatencyRecorder.round(downSeconds));
          err.printf("crash-suite: cycle %d/%d: killed pid %d after %d ms under load "
                  + "(%d rows acked so far), back after %.1f s%n",
              cycle, cycles, pid, uptime, ackedBefore, downSeconds);
        }
        awaitProgress(acked(append, entity), append, entity);
        Thread.sleep(afterLastRestart.toMillis());
        append.stop();
        entity.stop();
        err.printf("crash-suite: load stopped; waiting for reconciliation and verifying%n");
        List<Workload> all = new ArrayList<>(append.workloads());
        all.addAll(entity.workloads());
        Verifier.Outcome outcome = new Verifier(endpoint, "warehouse", append.sql(), options.settle,
            options.verifyTimeout, err).verify(all);
        append.stopProbe();
        entity.stopProbe();
        passed = outcome.passed();
        fillReport(report, actualSeed, work, append, entity, outcome);
        report.set("kills", kills);
      }
    } finally {
      dev[0].close();
      Runtime.getRuntime().removeShutdownHook(reaper);
    }
    return options.finish(out, report, work, passed);
  }

  private LoadConfig load(boolean entity, long producerSeed) {
    return options.load("crash", 1, entity, concurrency, rate, producerSeed);
  }

  /** Waits until the producers got another ack after {@code before} (at most the startup timeout). */
  private void awaitProgress(long before, LoadSession... sessions) throws InterruptedException {
    long deadline = System.nanoTime() + options.startupTimeout.toNanos();
    while (acked(sessions) <= before) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no batch was acknowledged within " + options.startupTimeout
            + " after se dev started; see its log");
      }
      Thread.sleep(20);
    }
  }

  private static long acked(LoadSession... sessions) {
    long sum = 0;
    for (LoadSession s : sessions) {
      sum += s.metrics().rowsAcked.sum();
    }
    return sum;
  }

  private void fillReport(ObjectNode report, long seed, Path work, LoadSession append,
      LoadSession entity, Verifier.Outcome outcome) {
    report.put("result", outcome.passed() ? "passed" : "failed");
    report.put("cycles", cycles);
    report.put("seed", seed);
    report.put("work_dir", work.toString());
    long sent = 0;
    long ackedRows = 0;
    long unknown = 0;
    for (LoadSession s : List.of(append, entity)) {
      sent += s.metrics().rowsSent.sum();
      ackedRows += s.metrics().rowsAcked.sum();
      unknown += s.metrics().rowsUnknown.sum();
    }
    report.put("rows_sent", sent);
    report.put("rows_acknowledged", ackedRows);
    report.put("rows_unknown", unknown);
    // Each figure is the worse of the two readers (Flight SQL and Iceberg's reader).
    long appendVerified = Long.MAX_VALUE;
    long keysVerified = Long.MAX_VALUE;
    long keysExpected = 0;
    for (TableVerification t : outcome.tables()) {
      boolean isEntity = entity.workloads().stream().anyMatch(w -> w.table().toString().equals(t.table()));
      if (isEntity) {
        keysVerified = Math.min(keysVerified, t.verified());
        keysExpected = t.expected();
      } else {
        appendVerified = Math.min(appendVerified, t.verified());
      }
    }
    ObjectNode appendNode = report.putObject("append_table");
    appendNode.put("rows_sent", append.metrics().rowsSent.sum());
    appendNode.put("rows_acknowledged", append.metrics().rowsAcked.sum());
    appendNode.put("rows_verified", appendVerified == Long.MAX_VALUE ? 0 : appendVerified);
    appendNode.put("rows_unknown", append.metrics().rowsUnknown.sum());
    ObjectNode entityNode = report.putObject("entity_table");
    entityNode.put("operations_sent", entity.metrics().rowsSent.sum());
    entityNode.put("operations_acknowledged", entity.metrics().rowsAcked.sum());
    entityNode.put("operations_unknown", entity.metrics().rowsUnknown.sum());
    entityNode.put("keys", keysExpected);
    entityNode.put("keys_verified", keysVerified == Long.MAX_VALUE ? 0 : keysVerified);
    SuiteOptions.putOutcome(report, outcome, append, entity);
  }


  private static byte[] randomBytes() {
    byte[] bytes = new byte[32];
    new java.security.SecureRandom().nextBytes(bytes);
    return bytes;
  }
}

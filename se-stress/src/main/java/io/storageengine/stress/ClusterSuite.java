package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The distributed-mode suite: a broker, workers, servers and a load balancer, each a separate
 * process started through the real options.launcher on one cluster storage, loaded through the load
 * balancer (append and entity tables). With chaos on (the default), a broker, a worker or a
 * server is killed with SIGKILL at random moments and restarted; for every server kill the
 * suite measures the failover: how long until every table is acknowledged again (by the
 * surviving servers), before the killed one is restarted. The producers ingest idempotently and
 * resend every batch whose ack did not arrive until it is acknowledged. At the end, once the
 * workers published everything, every row sent, acknowledged or not, must be present exactly once
 * and every entity key must show its last sent operation. Prints one JSON report; exit code 0 when verification passed.
 */
@Command(name = "cluster-suite", mixinStandardHelpOptions = true,
    description = "Run broker, workers, servers and a load balancer as processes, load them, kill -9 roles at random, verify exactly-once.")
public final class ClusterSuite implements Callable<Integer> {
  /** A random AES-256 key (hex) for the file secret store of this run's cluster. */
  private static final String SECRET_STORE_KEY = java.util.HexFormat.of().formatHex(randomKey());
  /** The bootstrap token of every role (also the cluster token): the load clients are admins. */
  private static final String ADMIN_TOKEN = java.util.HexFormat.of().formatHex(randomKey());

  private static byte[] randomKey() {
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    return key;
  }

  @Mixin SuiteOptions options;

  @Option(names = "--servers", defaultValue = "2", description = "Servers behind the load balancer (default ${DEFAULT-VALUE}).")
  int servers;

  @Option(names = "--workers", defaultValue = "2", description = "Workers (default ${DEFAULT-VALUE}).")
  int workers;

  @Option(names = "--duration", defaultValue = "60s", converter = DurationConverter.class, description = "Load (and chaos) duration (default ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(names = "--no-chaos", description = "Kill nothing: measure throughput (default: kill and restart roles during the load).")
  boolean noChaos;

  @Option(names = "--min-kills", defaultValue = "0", description = "With chaos: keep killing after --duration until this many kills happened (default ${DEFAULT-VALUE}); 3 kills cover broker, worker and server.")
  int minKills;

  @Option(names = "--min-gap", defaultValue = "4s", converter = DurationConverter.class, description = "Least time between kills (default ${DEFAULT-VALUE}).")
  Duration minGap;

  @Option(names = "--max-gap", defaultValue = "10s", converter = DurationConverter.class, description = "Most time between kills (default ${DEFAULT-VALUE}).")
  Duration maxGap;

  @Option(names = "--tables", defaultValue = "2", description = "Tables per mode (default ${DEFAULT-VALUE}).")
  int tables;

  @Option(names = "--concurrency", defaultValue = "1", description = "Producers per table (default ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--rate", defaultValue = "4000", description = "Rows per second per mode; 0 = as fast as possible (default ${DEFAULT-VALUE}).")
  long rate;





  @Option(names = "--java-opts", defaultValue = "-Xmx1g", description = "JVM options of every role (SE_JAVA_OPTS; default ${DEFAULT-VALUE}).")
  String javaOpts;








  private static final String CATALOG = "warehouse";
  private final PrintStream out;
  private final PrintStream err;
  private final List<Role> roles = new ArrayList<>();
  private long loadStarted;
  private long loadStopped;

  /** One role process and how to start it again on the same port and directories. */
  private final class Role {
    final String name;
    final String kind;
    final List<String> args;
    final int port;
    final Path log;
    DevProcess process;

    Role(String name, String kind, List<String> args, int port, Path log) {
      this.name = name;
      this.kind = kind;
      this.args = args;
      this.port = port;
      this.log = log;
    }

    void start() throws IOException {
      // se start roles write catalog configs only with a secret-store key: one per suite run,
      // shared by every role, passed as the operator would (the variable, not a flag). Roles run
      // in their default --auth.mode tokens; the bootstrap token doubles as the cluster token.
      process = DevProcess.startRole(options.launcher.toAbsolutePath(), name, args, port, log, javaOpts,
          java.util.Map.of("SE_SECRET_STORE_KEY", SECRET_STORE_KEY, "SE_AUTH_BOOTSTRAP_TOKEN", ADMIN_TOKEN));
    }

    void awaitReady() throws InterruptedException {
      if (port > 0) {
        process.awaitHealthy(options.startupTimeout);
      }
    }
  }

  ClusterSuite(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    SuiteOptions.main("cluster-suite", new ClusterSuite(System.out, System.err), args);
  }

  @Override
  public Integer call() throws Exception {
    if (servers < 1 || workers < 1 || tables < 1 || minKills < 0 || minGap.compareTo(maxGap) > 0) {
      throw SeException.invalid("--servers, --workers and --tables must be positive and --min-gap <= --max-gap");
    }
    options.checkLauncher();
    long actualSeed = options.resolveSeed();
    Random random = new Random(actualSeed);
    Path work = options.workDirectory("se-cluster-");
    Path store = work.resolve("store");
    int lbPort = DevProcess.freePort();
    plan(work, store, lbPort);
    err.printf("cluster-suite: seed %d, %d servers, %d workers, load balancer on 127.0.0.1:%d, work dir %s%n",
        actualSeed, servers, workers, lbPort, work);

    Thread reaper = new Thread(() -> roles.forEach(r -> {
      if (r.process != null) {
        r.process.pidKill();
      }
    }), "cluster-suite-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
    ObjectNode report = Json.object();
    ArrayNode kills = Json.MAPPER.createArrayNode();
    boolean passed;
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Role role : roles) {
        role.start();
      }
      for (Role role : roles) {
        role.awaitReady();
      }
      ServerEndpoint endpoint = new ServerEndpoint("127.0.0.1", lbPort).withToken(ADMIN_TOKEN);
      createCatalog(endpoint);
      long producerSeed = random.nextLong();
      try (LoadSession append = new LoadSession(load(false, producerSeed), endpoint, allocator, null);
          LoadSession entity = new LoadSession(load(true, producerSeed + 1), endpoint, allocator, null)) {
        append.createTables();
        entity.createTables();
        append.start();
        entity.start();
        loadStarted = System.nanoTime();
        long end = System.nanoTime() + duration.toNanos();
        List<String> cycle = new ArrayList<>();
        while (!noChaos && (System.nanoTime() < end || kills.size() < minKills)) {
          long gap = minGap.toMillis() + (long) (random.nextDouble() * (maxGap.toMillis() - minGap.toMillis()));
          Thread.sleep(kills.size() < minKills ? gap : Math.min(gap, Math.max(0, (end - System.nanoTime()) / 1_000_000)));
          if (System.nanoTime() >= end && kills.size() >= minKills) {
            break;
          }
          if (cycle.isEmpty()) {
            cycle.addAll(List.of("broker", "worker", "server"));
            Collections.shuffle(cycle, random);
          }
          kills.add(killAndRestart(pick(cycle.remove(0), random), random, append, entity));
        }
        long remaining = (end - System.nanoTime()) / 1_000_000;
        if (remaining > 0) {
          Thread.sleep(remaining);
        }
        loadStopped = System.nanoTime();
        append.stop();
        entity.stop();
        err.printf("cluster-suite: load stopped; waiting for the workers to publish everything, then verifying%n");
        List<Workload> all = new ArrayList<>(append.workloads());
        all.addAll(entity.workloads());
        Verifier.Outcome outcome = new Verifier(endpoint, CATALOG, append.sql(), options.settle, options.verifyTimeout, err).verify(all);
        append.stopProbe();
        entity.stopProbe();
        passed = outcome.passed();
        fillReport(report, actualSeed, work, append, entity, outcome, kills);
      }
    } finally {
      for (Role role : roles) {
        if (role.process != null) {
          role.process.close();
        }
      }
      Runtime.getRuntime().removeShutdownHook(reaper);
    }
    return options.finish(out, report, work, passed);
  }

  /** The roles, in start order: broker, servers, workers, load balancer. */
  private void plan(Path work, Path store, int lbPort) throws IOException {
    List<String> storage = List.of("--object-store.root", store.toString());
    int brokerPort = DevProcess.freePort();
    roles.add(role("broker", "broker", work, brokerPort, storage, List.of("start", "broker",
        "--server.address", "127.0.0.1:" + brokerPort)));
    for (int i = 0; i < servers; i++) {
      int port = DevProcess.freePort();
      roles.add(role("server-" + i, "server", work, port, storage, options.withWarmup(List.of("start", "server",
          "--server.address", "127.0.0.1:" + port, "--ingest.flush-interval", options.flushInterval))));
    }
    for (int i = 0; i < workers; i++) {
      roles.add(role("worker-" + i, "worker", work, 0, storage, List.of("start", "worker", "--concurrency", "2")));
    }
    roles.add(role("lb", "lb", work, lbPort, storage, List.of("start", "lb",
        "--server.address", "127.0.0.1:" + lbPort, "--probe-interval", "250ms")));
  }

  private Role role(String name, String kind, Path work, int port, List<String> storage, List<String> args) {
    List<String> all = new ArrayList<>(args);
    all.addAll(List.of("--data-dir", work.resolve(name).toString()));
    all.addAll(storage);
    return new Role(name, kind, all, port, work.resolve(name + ".log"));
  }

  private Role pick(String kind, Random random) {
    List<Role> candidates = roles.stream().filter(r -> r.kind.equals(kind)).toList();
    return candidates.get(random.nextInt(candidates.size()));
  }

  /**
   * SIGKILL, then (for a server, once every table is acknowledged again, which is the failover
   * time) a restart on the same port after a random pause.
   */
  private ObjectNode killAndRestart(Role victim, Random random, LoadSession... sessions) throws Exception {
    long ackedBefore = sessions[0].metrics().rowsAcked.sum() + sessions[1].metrics().rowsAcked.sum();
    long pid = victim.process.pid();
    long killed = System.nanoTime();
    victim.process.kill();
    ObjectNode kill = Json.object();
    kill.put("role", victim.name);
    kill.put("killed_pid", pid);
    kill.put("rows_acked_before_kill", ackedBefore);
    if (victim.kind.equals("server") && servers > 1) {
      long deadline = killed + Duration.ofSeconds(60).toNanos();
      while (!everyTableAckedAfter(killed, sessions) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      boolean recovered = everyTableAckedAfter(killed, sessions);
      double seconds = (System.nanoTime() - killed) / 1e9;
      kill.put("failover_s", recovered ? LatencyRecorder.round(seconds) : -1);
      err.printf("cluster-suite: killed %s (pid %d): %s%n", victim.name, pid, recovered
          ? String.format("every table acknowledged again after %.2f s", seconds)
          : "tables still not acknowledged after 60 s");
    } else {
      err.printf("cluster-suite: killed %s (pid %d)%n", victim.name, pid);
    }
    Thread.sleep((long) (random.nextDouble() * 1000));
    victim.start();
    victim.awaitReady();
    double down = (System.nanoTime() - killed) / 1e9;
    kill.put("down_s", LatencyRecorder.round(down));
    err.printf("cluster-suite: %s back after %.1f s%n", victim.name, down);
    return kill;
  }

  private static boolean everyTableAckedAfter(long nanos, LoadSession... sessions) {
    for (LoadSession s : sessions) {
      if (!s.metrics().everyTableAckedAfter(nanos)) {
        return false;
      }
    }
    return true;
  }

  private void createCatalog(ServerEndpoint endpoint) throws IOException, InterruptedException {
    HttpRequest request = endpoint.authorize(HttpRequest.newBuilder(URI.create(endpoint.httpBase() + "/catalogs")))
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"catalog_id\":\"" + CATALOG + "\",\"config\":{\"type\":\"embedded\"}}"))
        .build();
    HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 201 && response.statusCode() != 409) {
      throw new IllegalStateException("creating catalog " + CATALOG + " through the load balancer: HTTP "
          + response.statusCode() + " " + response.body());
    }
  }

  private LoadConfig load(boolean entity, long producerSeed) {
    return options.load("cluster", tables, entity, concurrency, rate, producerSeed);
  }

  private void fillReport(ObjectNode report, long seed, Path work, LoadSession append, LoadSession entity,
      Verifier.Outcome outcome, ArrayNode kills) {
    report.put("result", outcome.passed() ? "passed" : "failed");
    report.put("seed", seed);
    report.put("work_dir", work.toString());
    report.put("servers", servers);
    report.put("workers", workers);
    report.put("chaos", !noChaos);
    long rowsAcked = append.metrics().rowsAcked.sum() + entity.metrics().rowsAcked.sum();
    long bytesAcked = append.metrics().bytesAcked.sum() + entity.metrics().bytesAcked.sum();
    double seconds = Math.max(1e-9, (loadStopped - loadStarted) / 1e9);
    ObjectNode throughput = report.putObject("throughput");
    throughput.put("rows_acked", rowsAcked);
    throughput.put("rows_per_s", Math.round(rowsAcked / seconds));
    throughput.put("payload_mb_per_s", Math.round(bytesAcked / seconds / 1e4) / 100.0);
    double worstFailover = -1;
    for (var k : kills) {
      if (k.has("failover_s")) {
        worstFailover = Math.max(worstFailover, k.get("failover_s").asDouble());
      }
    }
    report.put("worst_failover_s", worstFailover);
    report.set("kills", kills);
    SuiteOptions.putOutcome(report, outcome, append, entity);
  }

}

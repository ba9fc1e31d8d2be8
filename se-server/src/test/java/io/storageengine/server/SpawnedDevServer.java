package io.storageengine.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * A {@code se dev} process started from the launcher script a user runs (with
 * {@code SE_SKIP_BUILD=1}), on a free loopback port and a fresh data directory, for benchmarks
 * that must measure a server in a JVM of its own. {@link #start} returns once {@code /health}
 * answers 200; {@link #close} stops the process (SIGTERM, then SIGKILL after 30 s) and deletes
 * the data directory.
 */
final class SpawnedDevServer implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final int port;
  private final double startupSeconds;
  private final RESTCatalog catalog = new RESTCatalog();

  private SpawnedDevServer(Process process, Path dir, int port, double startupSeconds) {
    this.process = process;
    this.dir = dir;
    this.port = port;
    this.startupSeconds = startupSeconds;
    catalog.initialize("bench", Map.of("uri", "http://127.0.0.1:" + port + "/catalogs/warehouse"));
  }

  /** Starts {@code launcher dev} with {@code extraArgs}; its output goes to {@code server.log} in its data directory. */
  static SpawnedDevServer start(Path launcher, List<String> extraArgs) throws Exception {
    return start(launcher, extraArgs, "");
  }

  /**
   * As {@link #start(Path, List)}, with {@code javaOptions} (space-separated) for the server's
   * JVM, passed as the launcher's {@code SE_JAVA_OPTS} (diagnosis: JFR, compiler flags).
   */
  static SpawnedDevServer start(Path launcher, List<String> extraArgs, String javaOptions)
      throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path dir = Files.createTempDirectory("se-spawned");
    List<String> command = new ArrayList<>(List.of(launcher.toString(), "dev",
        "--data-dir", dir.resolve("data").toString(), "--server.address", "127.0.0.1:" + port));
    command.addAll(extraArgs);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve("server.log").toFile());
    builder.environment().put("SE_SKIP_BUILD", "1");
    if (!javaOptions.isBlank()) {
      builder.environment().put("SE_JAVA_OPTS", javaOptions.trim());
    }
    long started = System.nanoTime();
    Process process = builder.start();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
        .timeout(Duration.ofSeconds(5)).build();
    long deadline = started + TimeUnit.MINUTES.toNanos(3);
    while (true) {
      if (!process.isAlive()) {
        String log = Files.readString(dir.resolve("server.log"));
        throw new IllegalStateException("se dev exited with " + process.exitValue() + ":\n" + log);
      }
      try {
        if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          break;
        }
      } catch (IOException e) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException("se dev did not answer /health within 3 minutes");
      }
      Thread.sleep(50);
    }
    return new SpawnedDevServer(process, dir, port, (System.nanoTime() - started) / 1e9);
  }

  int port() {
    return port;
  }

  /** The embedded catalog {@code warehouse} through the server's Iceberg REST facade. */
  RESTCatalog catalog() {
    return catalog;
  }

  /** From the start of the process until {@code /health} answered 200. */
  double startupSeconds() {
    return startupSeconds;
  }

  /** CPU time of the server process so far, in seconds; -1 where the platform does not tell. */
  double cpuSeconds() {
    return process.toHandle().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(-1.0);
  }

  /**
   * CPU seconds of each live thread of the server process so far, by thread id, with the name
   * the JVM gave the native thread (at most 15 characters on Linux: JIT compiler and GC threads
   * included, which the JVM's own thread bean does not see); empty where {@code /proc} is not
   * there.
   */
  Map<Long, ThreadCpu> threadCpu() {
    Map<Long, ThreadCpu> cpu = new java.util.HashMap<>();
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    long ticks = 100; // USER_HZ, 100 on every Linux the project runs on
    try (Stream<Path> threads = Files.list(tasks)) {
      threads.forEach(task -> {
        try {
          String stat = Files.readString(task.resolve("stat"));
          // pid (comm) state ...: the name may hold spaces and parentheses, so cut at the last ')'.
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String[] fields = stat.substring(close + 2).split(" ");
          // utime and stime are fields 14 and 15 of the line, 12 and 13 after the state.
          long used = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
          cpu.put(Long.parseLong(task.getFileName().toString()),
              new ThreadCpu(stat.substring(open + 1, close), used / (double) ticks));
        } catch (IOException | RuntimeException e) {
          // the thread ended meanwhile
        }
      });
    } catch (IOException e) {
      return Map.of();
    }
    return cpu;
  }

  /** One thread's name and CPU seconds, see {@link #threadCpu}. */
  record ThreadCpu(String name, double seconds) {}

  /**
   * The CPU seconds each thread group (names without their digits, but C1 and C2 compiler threads apart) of the server used between
   * {@code before} and {@code after} (threads that ended meanwhile are missing), highest first,
   * as one JSON object.
   */
  static String cpuByThreadGroup(Map<Long, ThreadCpu> before, Map<Long, ThreadCpu> after) {
    Map<String, Double> groups = new java.util.HashMap<>();
    after.forEach((id, cpu) -> {
      ThreadCpu started = before.get(id);
      double seconds = cpu.seconds() - (started == null ? 0 : started.seconds());
      // C1 and C2 compiler threads stay apart; other names lose their numbers.
      groups.merge(cpu.name().replaceAll("(?<!^C)[0-9]+", "N"), seconds, Double::sum);
    });
    StringBuilder json = new StringBuilder("{");
    groups.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .filter(e -> e.getValue() >= 0.01)
        .forEach(e -> json.append(String.format(java.util.Locale.ROOT, "\"%s\":%.2f,",
            e.getKey().replace("\"", "'"), e.getValue())));
    if (json.charAt(json.length() - 1) == ',') {
      json.setLength(json.length() - 1);
    }
    return json.append('}').toString();
  }

  @Override
  public void close() throws Exception {
    catalog.close();
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}

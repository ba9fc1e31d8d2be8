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

package io.storageengine.stress;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A role of the engine ({@code se dev}, or {@code se start <role>}) running as a separate
 * process, started through the real launcher. The launcher {@code exec}s the JVM, so the
 * child's pid is the JVM's own: {@link #kill} sends it SIGKILL ({@code kill -9}), with no chance
 * to flush or close anything.
 */
public final class DevProcess implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Process process;
  private final int port;
  private final String name;

  private DevProcess(Process process, int port, String name) {
    this.process = process;
    this.port = port;
    this.name = name;
  }

  /**
   * Starts {@code launcher dev} on {@code 127.0.0.1:port} with its data in {@code dataDir},
   * appending its output to {@code log}. {@code SE_SKIP_BUILD=1}: the caller built the engine.
   * {@code javaOpts} (e.g. a heap limit) go to the launcher's {@code SE_JAVA_OPTS}.
   */
  static DevProcess start(Path launcher, int port, Path dataDir, Path log, List<String> extraArgs,
      String javaOpts) throws IOException {
    return start(launcher, port, dataDir, log, extraArgs, javaOpts, java.util.Map.of());
  }

  /** As {@link #start(Path, int, Path, Path, List, String)}, with {@code environment} added. */
  static DevProcess start(Path launcher, int port, Path dataDir, Path log, List<String> extraArgs,
      String javaOpts, java.util.Map<String, String> environment) throws IOException {
    List<String> args = new ArrayList<>(List.of("dev",
        "--server.address", "127.0.0.1:" + port, "--data-dir", dataDir.toString()));
    args.addAll(extraArgs);
    return startRole(launcher, "se dev", args, port, log, javaOpts, environment);
  }

  /**
   * Starts {@code launcher args...} (e.g. {@code start server --server.address ...}), appending
   * its output to {@code log}; {@code port} is where its {@code /health} answers, or 0 for a
   * role without a listener (a worker).
   */
  static DevProcess startRole(Path launcher, String name, List<String> args, int port, Path log,
      String javaOpts) throws IOException {
    return startRole(launcher, name, args, port, log, javaOpts, java.util.Map.of());
  }

  /** As {@link #startRole(Path, String, List, int, Path, String)}, with {@code environment} added. */
  public static DevProcess startRole(Path launcher, String name, List<String> args, int port, Path log,
      String javaOpts, java.util.Map<String, String> environment) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(launcher.toString());
    command.addAll(args);
    // Run from the launcher's directory (the repository root), as the README does.
    ProcessBuilder builder = new ProcessBuilder(command)
        .directory(launcher.toAbsolutePath().getParent().toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().put("SE_SKIP_BUILD", "1");
    builder.environment().putAll(environment);
    if (javaOpts != null && !javaOpts.isBlank()) {
      builder.environment().put("SE_JAVA_OPTS", javaOpts);
    }
    return new DevProcess(builder.start(), port, name);
  }

  /** A port that was free a moment ago on 127.0.0.1. */
  public static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }

  String name() {
    return name;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  int port() {
    return port;
  }

  /** Waits until {@code GET /health} answers 200; fails if the process exits first. */
  public void awaitHealthy(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
        .timeout(Duration.ofSeconds(2)).GET().build();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with code " + process.exitValue()
            + " before it was healthy");
      }
      try {
        if (HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " was not healthy within " + timeout);
      }
      Thread.sleep(100);
    }
  }

  /** {@code kill -9}: the JVM (and anything it started) dies at once. */
  void kill() throws InterruptedException {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + " (pid " + pid() + ") survived SIGKILL");
    }
  }

  /** SIGKILL without waiting: for a JVM shutdown hook, so no server outlives its suite. */
  void pidKill() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
  }

  /** An orderly stop (SIGTERM runs the shutdown hook); SIGKILL if it takes over 30 s. */
  @Override
  public void close() throws InterruptedException {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      kill();
    }
  }
}

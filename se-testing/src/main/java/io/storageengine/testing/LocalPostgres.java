package io.storageengine.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server for tests: {@code initdb} into a fresh directory, started on a free
 * loopback port with password authentication for TCP, stopped and deleted on {@link #close()}.
 * Uses the machine's PostgreSQL installation ({@code /usr/lib/postgresql/<version>/bin}, the
 * Debian layout, or {@code pg_config --bindir}); PostgreSQL refuses to run as root, so as root
 * the server runs as the {@code postgres} system user through {@code runuser}.
 */
public final class LocalPostgres implements AutoCloseable {
  public static final String USER = "postgres";
  private static final long STEP_TIMEOUT_SECONDS = 120;

  private final Path bin;
  private final Path root;
  private final int port;
  private final String password;
  private final boolean asPostgresUser;

  private LocalPostgres(Path bin, Path root, int port, String password, boolean asPostgresUser) {
    this.bin = bin;
    this.root = root;
    this.port = port;
    this.password = password;
    this.asPostgresUser = asPostgresUser;
  }

  /** The directory holding {@code initdb} and {@code pg_ctl}, when PostgreSQL is installed. */
  public static Optional<Path> installation() {
    Path debian = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(debian)) {
      try (Stream<Path> versions = Files.list(debian)) {
        Optional<Path> newest = versions.map(v -> v.resolve("bin"))
            .filter(b -> Files.isExecutable(b.resolve("initdb")))
            .max(Comparator.comparing(b -> versionOf(b.getParent().getFileName().toString())));
        if (newest.isPresent()) {
          return newest;
        }
      } catch (IOException ignored) {
        // fall through to pg_config
      }
    }
    try {
      Process p = new ProcessBuilder("pg_config", "--bindir").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 && Files.isExecutable(Path.of(out, "initdb"))) {
        return Optional.of(Path.of(out));
      }
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return Optional.empty();
  }

  private static int versionOf(String name) {
    try {
      return Integer.parseInt(name.replaceAll("[^0-9].*", ""));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Starts a server; throws IllegalStateException naming what failed (with the server's log). */
  public static LocalPostgres start(String password) throws IOException, InterruptedException {
    Path bin = installation().orElseThrow(() -> new IllegalStateException(
        "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or pg_config --bindir)"));
    boolean root = "root".equals(System.getProperty("user.name"));
    // Not under a JUnit temp dir: the postgres user must be able to reach it.
    Path dir = Files.createTempDirectory(Path.of("/tmp"), "se-postgres-");
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    LocalPostgres pg = new LocalPostgres(bin, dir, port, password, root);
    try {
      Files.writeString(dir.resolve("pwfile"), password + "\n");
      Files.createDirectories(dir.resolve("socket"));
      if (root) {
        run(List.of("chmod", "755", dir.toString()), dir);
        run(List.of("chown", "-R", USER + ":" + USER, dir.toString()), dir);
      }
      pg.runAsServerUser(List.of(bin.resolve("initdb").toString(), "-D", dir.resolve("data").toString(),
          "-U", USER, "--pwfile=" + dir.resolve("pwfile"), "--auth-local=trust", "--auth-host=scram-sha-256",
          "-E", "UTF8", "--no-sync"));
      pg.runAsServerUser(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-w",
          "-t", "60", "-l", dir.resolve("server.log").toString(), "-o",
          "-p " + port + " -k " + dir.resolve("socket") + " -c listen_addresses=127.0.0.1 -c fsync=off", "start"));
      return pg;
    } catch (IOException | RuntimeException | InterruptedException e) {
      pg.close();
      throw e;
    }
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/<database>}. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  public String password() {
    return password;
  }

  public int port() {
    return port;
  }

  @Override
  public void close() {
    try {
      if (Files.exists(root.resolve("data/postmaster.pid"))) {
        runAsServerUser(List.of(bin.resolve("pg_ctl").toString(), "-D", root.resolve("data").toString(),
            "-m", "immediate", "-w", "stop"));
      }
    } catch (IOException | RuntimeException e) {
      // The directory goes anyway; a server left running dies with the test JVM's machine session.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try (Stream<Path> files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException ignored) {
        // scratch directory under /tmp
      }
    }
  }

  private void runAsServerUser(List<String> command) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgresUser) {
      full.addAll(List.of("runuser", "-u", USER, "--"));
    }
    full.addAll(command);
    run(full, root);
  }

  private static void run(List<String> command, Path dir) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " did not finish in " + STEP_TIMEOUT_SECONDS + " s");
    }
    if (p.exitValue() != 0) {
      String log = "";
      Path serverLog = dir.resolve("server.log");
      if (Files.exists(serverLog)) {
        log = "\nserver log:\n" + Files.readString(serverLog);
      }
      throw new IllegalStateException(String.join(" ", command) + " failed (exit " + p.exitValue() + "):\n" + out + log);
    }
  }
}

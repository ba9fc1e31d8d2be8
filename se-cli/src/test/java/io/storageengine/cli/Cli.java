package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Predicate;

/** Runs {@code se} commands in this JVM, capturing what they print; and starts a dev server for them. */
final class Cli {
  /** What one command returned and printed. */
  record Result(int rc, String out, String err) {}

  private Cli() {}

  /** A dev server on a free port that publishes quickly. */
  static EngineServer startServer(Path dataDir) {
    return EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dataDir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms"), Role.DEV);
  }

  static String address(EngineServer server) {
    return "http://127.0.0.1:" + server.port();
  }

  /** Runs {@code se args...}. */
  static synchronized Result run(String... args) {
    PrintStream originalOut = System.out;
    PrintStream originalErr = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int rc;
    try {
      rc = Main.execute(args);
    } finally {
      System.setOut(originalOut);
      System.setErr(originalErr);
    }
    return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Runs {@code se args...}, which must succeed; returns what it printed on stdout. */
  static String ok(String... args) {
    Result r = run(args);
    assertThat(r.rc()).as("se %s printed:%n%s%s", String.join(" ", args), r.out(), r.err()).isZero();
    return r.out();
  }

  /** Repeats {@code se args...} until its stdout satisfies {@code done} (30 s at most); returns the last stdout. */
  static String await(Predicate<String> done, String... args) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    String out = "";
    while (System.nanoTime() < deadline) {
      Result r = run(args);
      out = r.out() + r.err();
      if (r.rc() == 0 && done.test(r.out())) {
        return r.out();
      }
      Thread.sleep(200);
    }
    throw new AssertionError("se " + String.join(" ", args) + " never got there; last output:\n" + out);
  }
}

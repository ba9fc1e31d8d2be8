package io.storageengine.cli;

import java.util.concurrent.CountDownLatch;

/**
 * The one way a long-running command ({@code se dev}, {@code se start <role>}) ends: it blocks
 * until the JVM is asked to stop (Ctrl-C, SIGTERM, or the process's fatal-error path exiting),
 * when a shutdown hook closes the process once, printing an error while stopping once.
 */
final class ProcessLifecycle {
  private ProcessLifecycle() {}

  /** Prints {@code started}, then blocks until the JVM stops and the hook has closed {@code process}. */
  static int runUntilStopped(AutoCloseable process, String started) throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        process.close();
      } catch (Exception | Error e) {
        System.err.println("se: error while stopping: " + e);
      } finally {
        stopped.countDown();
      }
    }, "se-shutdown"));
    System.out.println(started);
    stopped.await();
    return 0;
  }
}

package io.storageengine.reconcile.maintenance;

import io.storageengine.common.Threads;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maintains tables continuously ({@code se dev}): a named daemon thread that every interval
 * runs {@link Maintainer#maintainAll} on one catalog (or all). It runs next to the reconcile
 * loop, never in it, so ingestion and reconciliation never wait for maintenance.
 */
public final class MaintenanceLoop implements AutoCloseable {
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);
  private static final Logger LOG = LoggerFactory.getLogger(MaintenanceLoop.class);

  private final Maintainer maintainer;
  private final String catalogId;
  private final Duration interval;
  private final Consumer<MaintenanceResult> listener;
  private final Object lock = new Object();
  private final Thread thread;
  private volatile boolean closed;
  private boolean triggered;

  /**
   * @param catalogId maintain only this catalog's tables, or all when null
   * @param listener receives every table's result on the loop thread
   */
  public MaintenanceLoop(Maintainer maintainer, String catalogId, Duration interval,
      Consumer<MaintenanceResult> listener) {
    this(maintainer, catalogId, interval, listener,
        Threads.daemonNamed("se-maintenance-loop" + (catalogId == null ? "" : "-" + catalogId)));
  }

  /**
   * @param catalogId maintain only this catalog's tables, or all when null
   * @param listener receives every table's result on the loop thread
   * @param threads makes the loop thread (a process's composition root passes threads whose
   *     uncaught throwables take its fatal-error path)
   */
  public MaintenanceLoop(Maintainer maintainer, String catalogId, Duration interval,
      Consumer<MaintenanceResult> listener, ThreadFactory threads) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("maintenance interval must be positive: " + interval);
    }
    this.maintainer = maintainer;
    this.catalogId = catalogId;
    this.interval = interval;
    this.listener = listener;
    this.thread = threads.newThread(this::loop);
    // Maintenance yields to ingestion and reconciliation when CPUs are scarce.
    this.thread.setPriority(Thread.MIN_PRIORITY);
  }

  /** Starts the thread; the first pass runs after one interval (or on {@link #trigger}). */
  public MaintenanceLoop start() {
    thread.start();
    return this;
  }

  /** Asks for a pass as soon as the current one (if any) ends. */
  public void trigger() {
    synchronized (lock) {
      triggered = true;
      lock.notifyAll();
    }
  }

  private void loop() {
    while (!closed) {
      synchronized (lock) {
        long deadline = System.nanoTime() + interval.toNanos();
        while (!closed && !triggered) {
          long waitMillis = (deadline - System.nanoTime()) / 1_000_000;
          if (waitMillis <= 0) {
            break;
          }
          try {
            lock.wait(waitMillis);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        triggered = false;
      }
      if (closed) {
        return;
      }
      try {
        for (MaintenanceResult result : maintainer.maintainAll(catalogId)) {
          try {
            listener.accept(result);
          } catch (RuntimeException e) {
            LOG.warn("maintenance listener failed: {}", e.getMessage());
          }
        }
      } catch (RuntimeException e) {
        // Listing the WAL failed (storage unavailable): try again next interval.
        LOG.warn("maintenance loop iteration failed: {}", e.getMessage());
      }
    }
  }

  /** Stops the loop after the pass in progress, if any, and waits for the thread to end. */
  @Override
  public void close() {
    closed = true;
    synchronized (lock) {
      lock.notifyAll();
    }
    if (thread.isAlive() && Thread.currentThread() != thread) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

package io.storageengine.broker;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker loop: leases tasks of the kinds it has handlers for, runs up to {@code concurrency}
 * at once, heartbeats each lease at a third of the lease duration while its handler runs, and
 * acknowledges success or failure. While the broker is unreachable it backs off and tries again.
 *
 * <p>{@link #close()} stops leasing and lets running tasks finish and acknowledge;
 * {@link #halt()} stops at once without acknowledging, as a crash would: those leases expire
 * and the broker hands the tasks to another worker.
 */
public final class Worker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

  private final BrokerClient client;
  private final Map<String, TaskHandler> handlers;
  private final int concurrency;
  private final Clock clock;
  private final Options options;
  private final String id;
  private final Semaphore slots;
  private final ExecutorService runners;
  private final ScheduledExecutorService heartbeats;
  private final Map<String, Task> running = new ConcurrentHashMap<>();
  private final AtomicInteger completed = new AtomicInteger();
  private final Thread leaser;
  private volatile boolean stopping;
  private volatile boolean halted;

  /**
   * Tuning that rarely needs changing.
   *
   * @param pollInterval pause after a lease request found nothing to do
   * @param maxBackoff longest pause while the broker is unreachable
   * @param shutdownTimeout how long {@link #close()} waits for running tasks
   */
  public record Options(Duration pollInterval, Duration maxBackoff, Duration shutdownTimeout) {
    public static Options defaults() {
      return new Options(Duration.ofMillis(500), Duration.ofSeconds(5), Duration.ofSeconds(60));
    }
  }

  public Worker(BrokerClient client, Map<String, TaskHandler> handlers, int concurrency, Clock clock) {
    this(client, handlers, concurrency, clock, Options.defaults());
  }

  public Worker(BrokerClient client, Map<String, TaskHandler> handlers, int concurrency, Clock clock,
      Options options) {
    this(client, handlers, concurrency, clock, options, null);
  }

  /**
   * @param threads makes the lease, heartbeat and task threads (a process's composition root
   *     passes threads whose uncaught throwables take its fatal-error path); an {@code Error} a
   *     handler throws ends its thread, one a heartbeat throws goes to the thread's
   *     uncaught-exception handler. Null: daemon threads named {@code se-worker-lease},
   *     {@code se-worker-heartbeat} and {@code se-worker-task-N}.
   */
  public Worker(BrokerClient client, Map<String, TaskHandler> handlers, int concurrency, Clock clock,
      Options options, ThreadFactory threads) {
    if (concurrency < 1) {
      throw SeException.invalid("worker concurrency must be >= 1, got %d", concurrency);
    }
    if (handlers.isEmpty()) {
      throw SeException.invalid("a worker needs at least one task handler");
    }
    this.client = client;
    this.handlers = Map.copyOf(handlers);
    this.concurrency = concurrency;
    this.clock = clock;
    this.options = options;
    this.id = "worker-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    this.slots = new Semaphore(concurrency);
    this.runners = Executors.newFixedThreadPool(concurrency,
        threads != null ? threads : Threads.daemon("se-worker-task"));
    this.heartbeats = Threads.scheduledPool(1, threads != null ? threads : Threads.daemonNamed("se-worker-heartbeat"));
    this.leaser = (threads != null ? threads : Threads.daemonNamed("se-worker-lease")).newThread(this::leaseLoop);
  }

  /** Starts leasing. */
  public void start() {
    LOG.info("worker {} started: kinds {}, concurrency {}", id, handlers.keySet(), concurrency);
    leaser.start();
  }

  /** This worker's id, as recorded in {@code lease_owner}. */
  public String id() {
    return id;
  }

  /** Tasks running right now, by key. */
  public Set<String> runningTasks() {
    return Set.copyOf(running.keySet());
  }

  /** Tasks acknowledged as succeeded since start. */
  public int completedTasks() {
    return completed.get();
  }

  /** Stops leasing, waits for running tasks to finish and acknowledge, then stops. */
  @Override
  public void close() {
    stopping = true;
    leaser.interrupt();
    runners.shutdown();
    try {
      if (!runners.awaitTermination(options.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("worker {}: tasks {} still running after {}; abandoning their leases", id,
            running.keySet(), options.shutdownTimeout());
        halt();
      }
      leaser.join(options.shutdownTimeout().toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    heartbeats.shutdownNow();
  }

  /** Stops at once: no more heartbeats or acknowledgements, handlers are interrupted. */
  public void halt() {
    halted = true;
    stopping = true;
    heartbeats.shutdownNow();
    leaser.interrupt();
    runners.shutdownNow();
  }

  private void leaseLoop() {
    long backoff = options.pollInterval().toMillis();
    Set<String> kinds = handlers.keySet();
    while (!stopping) {
      int want = 0;
      try {
        slots.acquire();
        want = 1 + slots.drainPermits();
        LeaseGrant grant = client.lease(id, kinds, want);
        for (Task task : grant.tasks()) {
          want--;
          running.put(task.key(), task);
          runners.execute(() -> runTask(task, grant.leaseMs()));
        }
        slots.release(want);
        want = 0;
        backoff = options.pollInterval().toMillis();
        if (grant.tasks().isEmpty()) {
          Thread.sleep(options.pollInterval().toMillis());
        }
      } catch (InterruptedException e) {
        slots.release(want);
        return;
      } catch (RuntimeException e) {
        slots.release(want);
        if (stopping) {
          return;
        }
        LOG.warn("worker {}: cannot lease tasks, retrying in {} ms: {}", id, backoff, e.getMessage());
        if (!sleep(backoff)) {
          return;
        }
        backoff = Math.min(backoff * 2, options.maxBackoff().toMillis());
      }
    }
  }

  private void runTask(Task task, long leaseMs) {
    long interval = Math.max(1, leaseMs / 3);
    long started = clock.millis();
    ScheduledFuture<?> beat =
        heartbeats.scheduleAtFixedRate(() -> heartbeat(task), interval, interval, TimeUnit.MILLISECONDS);
    Exception failure = null;
    try {
      handlers.get(task.kind()).run(task);
    } catch (Exception e) {
      failure = e;
    } finally {
      running.remove(task.key());
      beat.cancel(false);
    }
    try {
      if (halted) {
        return;
      }
      if (failure == null) {
        AckOutcome outcome = client.ackSuccess(task.key(), task.leaseId());
        completed.incrementAndGet();
        LOG.info("worker {}: task {} done in {} ms ({})", id, task.key(), clock.millis() - started, outcome);
      } else {
        String reason = reasonOf(failure);
        LOG.warn("worker {}: task {} failed (attempt {}): {}", id, task.key(), task.attempts(), reason);
        client.ackFailure(task.key(), task.leaseId(), reason, null);
      }
    } catch (SeException e) {
      // A lost lease (CONFLICT / NOT_FOUND) means the broker already handed the task on.
      LOG.warn("worker {}: cannot acknowledge task {}: {}", id, task.key(), e.getMessage());
    } finally {
      slots.release();
      if (failure instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void heartbeat(Task task) {
    if (halted || running.get(task.key()) != task) {
      return;
    }
    try {
      client.heartbeat(task.key(), task.leaseId());
    } catch (SeException e) {
      if (running.get(task.key()) != task) {
        // The task finished while this heartbeat was in flight: its lease is gone by design.
        return;
      }
      if (e.code() == ErrorCode.CONFLICT || e.code() == ErrorCode.NOT_FOUND) {
        // Another worker may run the task now; ours still finishes, and the handler is idempotent.
        LOG.warn("worker {}: lost the lease of task {}: {}", id, task.key(), e.getMessage());
      } else {
        LOG.warn("worker {}: heartbeat of task {} failed: {}", id, task.key(), e.getMessage());
      }
    }
  }

  private static String reasonOf(Exception e) {
    if (e instanceof SeException) {
      return e.getMessage();
    }
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  private boolean sleep(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }
}

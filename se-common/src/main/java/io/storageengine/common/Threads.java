package io.storageengine.common;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads of the engine's long-lived components. A component takes a {@link ThreadFactory} from
 * its composition root (the server's threads send uncaught throwables down the fatal-error path)
 * and otherwise uses the factories here, for tests and library use: daemon threads with the
 * JVM's default uncaught-exception handling.
 */
public final class Threads {
  private Threads() {}

  /**
   * An executor service that runs each task on the thread that submits it, before {@code submit}
   * or {@code execute} returns (so the future handed out is done). For a library call that takes
   * an executor for work too small to hand to other threads: Iceberg's {@code Tasks} waits for
   * tasks it handed to a pool by polling every 10 ms, so each parallel step of a commit costs at
   * least that much however little it does. Shutting it down only makes it refuse later tasks.
   */
  public static ExecutorService callingThread() {
    return new CallingThreadExecutor();
  }

  private static final class CallingThreadExecutor extends java.util.concurrent.AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      if (shutdown) {
        throw new java.util.concurrent.RejectedExecutionException("executor is shut down");
      }
      command.run();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public java.util.List<Runnable> shutdownNow() {
      shutdown = true;
      return java.util.List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, java.util.concurrent.TimeUnit unit) {
      return shutdown;
    }
  }

  /** Daemon threads named {@code name-1}, {@code name-2} ... */
  public static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> daemonThread(r, name + "-" + n.incrementAndGet());
  }

  /** Daemon threads all named {@code name} (for a component that starts one). */
  public static ThreadFactory daemonNamed(String name) {
    return r -> daemonThread(r, name);
  }

  private static Thread daemonThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * A scheduled pool of {@code threads} threads from {@code factory}. An {@code Error} thrown by a
   * task, which its future would otherwise keep unseen, goes to the running thread's
   * uncaught-exception handler, as it would from a plain thread; exceptions stay the future's.
   */
  public static ScheduledThreadPoolExecutor scheduledPool(int threads, ThreadFactory factory) {
    return new ScheduledThreadPoolExecutor(threads, factory) {
      @Override
      protected void afterExecute(Runnable task, Throwable thrown) {
        reportError(task, thrown);
      }
    };
  }

  /**
   * Passes an {@code Error} kept by {@code task}'s completed future (a pool's
   * {@code afterExecute} argument) to the current thread's uncaught-exception handler.
   */
  public static void reportError(Runnable task, Throwable thrown) {
    if (thrown != null || !(task instanceof Future<?> future) || !future.isDone() || future.isCancelled()) {
      return;
    }
    try {
      future.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Error error) {
        Thread current = Thread.currentThread();
        current.getUncaughtExceptionHandler().uncaughtException(current, error);
      }
    } catch (CancellationException e) {
      // cancelled between the check and get: not a failure
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.storageengine.server;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fatal-error path of a process: the first throwable that escapes a thread of the
 * {@link EngineContext} (an uncaught exception, an {@code Error} such as {@code OutOfMemoryError})
 * is logged as one ERROR line naming the thread and the cause, and the process stops: the context
 * is closed, then {@code exit} is called with {@link #EXIT_STATUS}. Later failures, often
 * consequences of the first, are logged at DEBUG only. The stop runs on its own thread, so the
 * failed thread, which may belong to a pool being closed, never waits for itself.
 */
final class FatalErrors implements Thread.UncaughtExceptionHandler {
  private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);
  /** The exit status of a process stopped by a fatal error. */
  static final int EXIT_STATUS = 1;

  private final IntConsumer exit;
  private final AtomicBoolean fired = new AtomicBoolean();
  private volatile Runnable stop = () -> {};

  /** @param exit ends the process ({@code System::exit}; a test observes it instead) */
  FatalErrors(IntConsumer exit) {
    this.exit = exit;
  }

  /** What stopping the process means: closing the context that owns the threads. */
  void stopWith(Runnable stop) {
    this.stop = stop;
  }

  @Override
  public void uncaughtException(Thread thread, Throwable cause) {
    if (!fired.compareAndSet(false, true)) {
      LOG.debug("thread {} failed while the process is stopping", thread.getName(), cause);
      return;
    }
    LOG.error("fatal: thread {} failed with {}; stopping the process", thread.getName(), cause.toString());
    LOG.debug("fatal failure of thread {}", thread.getName(), cause);
    Runnable shutdown = () -> {
      try {
        stop.run();
      } catch (RuntimeException | Error e) {
        LOG.warn("error while stopping after a fatal failure: {}", e.toString());
      } finally {
        exit.accept(EXIT_STATUS);
      }
    };
    try {
      new Thread(shutdown, "se-fatal-stop").start();
    } catch (Throwable noThread) {
      // Out of memory for even a thread: stop from here.
      shutdown.run();
    }
  }
}

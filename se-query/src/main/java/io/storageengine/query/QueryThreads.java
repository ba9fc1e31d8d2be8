package io.storageengine.query;

import io.storageengine.common.ThreadPriority;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The threads queries' DuckDB work runs on: each running query has a {@link Worker} of its own,
 * a thread that serves no other call while the query holds it. DuckDB runs a query on the thread
 * that calls it (and on DuckDB's own threads of its database), and the OS does not let a process
 * raise a thread's priority again once lowered ({@link ThreadPriority}): so a long query's
 * priority can be lowered ({@link Worker#lowerPriority}) without lowering a thread that later
 * serves a point query. A lowered worker's thread ends when its query gives it back; others wait
 * for the next query, at most {@link #IDLE_NANOS}. Thread-safe.
 */
final class QueryThreads implements AutoCloseable {
  static final long IDLE_NANOS = 30_000_000_000L;

  private final ThreadFactory factory;
  /** Idle workers, the most recently used first. */
  private final Deque<Worker> idle = new ArrayDeque<>();
  private boolean closed;

  QueryThreads(ThreadFactory factory) {
    this.factory = factory;
  }

  /** Work done on a worker's thread, with the caller's checked exception. */
  @FunctionalInterface
  interface Work<T, E extends Exception> {
    T run() throws E;
  }

  /** A worker for one query (an idle one, else a new thread); give it back by closing it. */
  Worker take() {
    List<Worker> expired = new ArrayList<>();
    Worker worker;
    synchronized (this) {
      long now = System.nanoTime();
      while (!idle.isEmpty() && now - idle.peekLast().idleSince > IDLE_NANOS) {
        expired.add(idle.removeLast());
      }
      worker = idle.pollFirst();
      if (worker != null) {
        worker.lent = true;
      }
    }
    expired.forEach(Worker::end);
    return worker != null ? worker : new Worker();
  }

  /** Idle workers (for tests). */
  synchronized int idleCount() {
    return idle.size();
  }

  /** Ends the idle workers' threads; workers given back later end theirs too. */
  @Override
  public void close() {
    List<Worker> ending;
    synchronized (this) {
      closed = true;
      ending = new ArrayList<>(idle);
      idle.clear();
    }
    ending.forEach(Worker::end);
  }

  /** One thread, lent to one query at a time. */
  final class Worker implements AutoCloseable {
    private final ExecutorService thread = Executors.newSingleThreadExecutor(factory);
    /** The thread's kernel id, known once it ran its first work (-1 before, or off Linux). */
    private volatile long threadId = -1;
    private volatile int loweredTo;
    private final AtomicBoolean applied = new AtomicBoolean();
    private long idleSince;
    private boolean lent = true;

    /**
     * Runs {@code work} on this worker's thread and returns its result or throws its exception.
     * Waits for the
     * work even when the calling thread is interrupted (its interrupt is kept): the work uses the
     * query's connection, which its caller closes afterwards; stop it by cancelling the query.
     */
    <T, E extends Exception> T call(Work<T, E> work) throws E {
      Future<T> result = thread.submit(() -> {
        if (threadId < 0) {
          threadId = ThreadPriority.currentThreadId().orElse(-2);
        }
        applyLowering();
        return work.run();
      });
      boolean interrupted = false;
      try {
        while (true) {
          try {
            return result.get();
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
      } catch (ExecutionException e) {
        throw QueryThreads.<E>rethrow(e.getCause());
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    /**
     * Lowers this worker's thread to {@code nice} from now on, from any thread: at once when it
     * ran work before, else when it runs its first. The thread ends when the worker is given back.
     */
    void lowerPriority(int nice) {
      loweredTo = nice;
      if (threadId >= 0) {
        applyLowering();
      }
    }

    /** Whether {@link #lowerPriority} was asked. */
    boolean lowered() {
      return loweredTo > 0;
    }

    /** The thread's kernel id once it ran work, for tests. */
    OptionalLong threadId() {
      long id = threadId;
      return id >= 0 ? OptionalLong.of(id) : OptionalLong.empty();
    }

    private void applyLowering() {
      int nice = loweredTo;
      long id = threadId;
      if (nice > 0 && id >= 0 && applied.compareAndSet(false, true)) {
        ThreadPriority.lower(List.of(id), nice);
      }
    }

    /** Gives the worker back: idle for the next query, or its thread ends when it was lowered. */
    @Override
    public void close() {
      boolean end;
      synchronized (QueryThreads.this) {
        if (!lent) {
          return;
        }
        lent = false;
        end = closed || lowered();
        if (!end) {
          idleSince = System.nanoTime();
          idle.addFirst(this);
        }
      }
      if (end) {
        end();
      }
    }

    private void end() {
      thread.shutdown();
    }
  }

  /** {@code cause} thrown as is when unchecked or of the work's type {@code E}. */
  @SuppressWarnings("unchecked")
  private static <E extends Exception> E rethrow(Throwable cause) throws E {
    if (cause instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (cause instanceof Error error) {
      throw error;
    }
    // The work declared E and threw a checked exception: E (Java cannot check it here).
    throw (E) cause;
  }
}

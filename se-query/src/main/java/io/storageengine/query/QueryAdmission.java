package io.storageengine.query;

import io.grpc.Context;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Admits queries to run: at most {@link QueryLimits#tenantConcurrency} of one tenant at once, and
 * only while the DuckDB memory of the running queries (each reserves its {@code memory_limit})
 * stays within {@link QueryLimits#totalMemoryBytes}. Other queries wait in their tenant's queue
 * of at most {@link QueryLimits#tenantQueue}, first come first served among those whose tenant
 * has a free slot, for at most {@link QueryLimits#timeout}. A full queue or a wait that runs out
 * is RESOURCE_EXHAUSTED naming the limit; a wait whose gRPC call is cancelled ends CANCELLED.
 *
 * <p>An admitted query is also given its DuckDB threads ({@link Permit#threads}) from the
 * process's {@link QueryLimits#cpuThreads}: the configured threads per query when that many are
 * free, else those free, and always at least one (so a query never waits for CPU, but runs on
 * one thread while the budget is taken). DuckDB cannot take a thread back from a running query,
 * so this is how a runaway query started first is kept from taking every core.
 * Thread-safe.
 */
final class QueryAdmission {
  private static final long WAIT_SLICE_MS = 50;

  private final QueryLimits limits;
  private final long memoryPerQuery;
  private final int threadsPerQuery;
  private final Map<String, Integer> running = new HashMap<>();
  private final Map<String, Integer> waiting = new HashMap<>();
  /** Waiters in arrival order. */
  private final Deque<Waiter> queue = new ArrayDeque<>();
  private long reserved;
  /** DuckDB threads of the running queries. */
  private int threadsInUse;

  /** One waiting query (compared by identity: two of a tenant are two waiters). */
  private static final class Waiter {
    final String tenant;

    Waiter(String tenant) {
      this.tenant = tenant;
    }
  }

  /** {@code threadsPerQuery}: the DuckDB threads a query gets when the budget has them free. */
  QueryAdmission(QueryLimits limits, long memoryPerQuery, int threadsPerQuery) {
    if (threadsPerQuery < 1) {
      throw new IllegalArgumentException("a query needs at least 1 thread, not " + threadsPerQuery);
    }
    this.limits = limits;
    this.memoryPerQuery = memoryPerQuery;
    this.threadsPerQuery = threadsPerQuery;
  }

  /** A query of {@code tenant} admitted to run; closing it (once) lets the next one in. */
  final class Permit implements AutoCloseable {
    private final String tenant;
    private final int threads;
    private boolean released;

    private Permit(String tenant, int threads) {
      this.tenant = tenant;
      this.threads = threads;
    }

    /** The DuckDB threads the query runs with (at least 1), given back when it is closed. */
    int threads() {
      return threads;
    }

    @Override
    public void close() {
      synchronized (QueryAdmission.this) {
        if (released) {
          return;
        }
        released = true;
        running.merge(tenant, -1, (a, b) -> a + b == 0 ? null : a + b);
        reserved -= memoryPerQuery;
        threadsInUse -= threads;
        QueryAdmission.this.notifyAll();
      }
    }
  }

  /**
   * Holders of admissions whose queries are not running: planned queries waiting for the DoGet
   * of their ticket. Asked to give one back before a query waits or is refused.
   */
  @FunctionalInterface
  interface IdleHolders {
    /**
     * Releases one idle admission of {@code tenant}, or of any tenant when {@code tenant} is null
     * (memory is what is short); false when it holds none. Called without this admission's lock.
     */
    boolean releaseOne(String tenant);
  }

  private final List<IdleHolders> idle = new CopyOnWriteArrayList<>();

  /** Lets {@code holders} give back idle admissions to queries that would otherwise wait. */
  void releaseIdleWith(IdleHolders holders) {
    idle.add(holders);
  }

  /**
   * Waits until a query of {@code tenant} may run (see the class comment). A query that cannot
   * run at once and is next in line first has an idle admission released that stands in its way
   * ({@link IdleHolders}): one of its own tenant when the tenant's slots are full, any when memory
   * is short.
   */
  Permit admit(String tenant) {
    long deadline = System.nanoTime() + limits.timeout().toNanos();
    Waiter me = null;
    try {
      while (true) {
        Blocker blocker;
        synchronized (this) {
          boolean next = me == null ? queue.isEmpty() : first(me);
          if (next && mayRun(tenant)) {
            return start(tenant);
          }
          blocker = next && !idle.isEmpty() ? blocker(tenant) : null;
          if (blocker == null) {
            me = me != null ? me : enqueue(tenant);
            awaitTurn(tenant, deadline);
            continue;
          }
        }
        // Outside the lock: a released query closes its permit, which takes the lock.
        if (!releaseIdle(blocker.tenant())) {
          synchronized (this) {
            me = me != null ? me : enqueue(tenant);
            if (!(first(me) && mayRun(tenant))) {
              awaitTurn(tenant, deadline);
            }
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw PreparedQuery.cancelledError();
    } finally {
      if (me != null) {
        synchronized (this) {
          if (queue.remove(me)) {
            waiting.merge(tenant, -1, (a, b) -> a + b == 0 ? null : a + b);
            notifyAll();
          }
        }
      }
    }
  }

  /** Queues a waiter of {@code tenant}, or refuses it when the tenant's queue is full. */
  private Waiter enqueue(String tenant) {
    int queued = waiting.getOrDefault(tenant, 0);
    if (queued >= limits.tenantQueue()) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "catalog `%s` has %d queries running and %d waiting, its limit (--query.tenant-concurrency %d, "
              + "--query.tenant-queue %d): retry when one has finished", tenant, running.getOrDefault(tenant, 0),
          queued, limits.tenantConcurrency(), limits.tenantQueue()));
    }
    Waiter me = new Waiter(tenant);
    waiting.merge(tenant, 1, Integer::sum);
    queue.addLast(me);
    return me;
  }

  /** Waits a slice for a change, unless the call was cancelled or the admission timed out. */
  private void awaitTurn(String tenant, long deadline) throws InterruptedException {
    if (Context.current().isCancelled()) {
      throw PreparedQuery.cancelledError();
    }
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "query waited %s for admission, its limit (--query.timeout): the server runs as many queries of "
              + "catalog `%s` (--query.tenant-concurrency %d) or in all (--query.total-memory) as it allows",
          format(limits.timeout()), tenant, limits.tenantConcurrency()));
    }
    wait(Math.max(1, Math.min(WAIT_SLICE_MS, left / 1_000_000)));
  }

  /**
   * What keeps a query from running, and so whose idle admission to release: {@code tenant}'s own
   * (its slots are full), or any tenant's (null: memory is short).
   */
  private record Blocker(String tenant) {
    static final Blocker MEMORY = new Blocker(null);
  }

  /** What keeps {@code tenant} from running, or null when nothing does. */
  private Blocker blocker(String tenant) {
    if (running.getOrDefault(tenant, 0) >= limits.tenantConcurrency()) {
      return new Blocker(tenant);
    }
    return reserved + memoryPerQuery > limits.totalMemoryBytes() ? Blocker.MEMORY : null;
  }

  /** Asks the idle holders, in turn, to release one admission of {@code tenant} (any when null). */
  private boolean releaseIdle(String tenant) {
    for (IdleHolders holders : idle) {
      if (holders.releaseOne(tenant)) {
        return true;
      }
    }
    return false;
  }

  /** DuckDB threads of the running queries (for tests). */
  synchronized int threadsInUse() {
    return threadsInUse;
  }

  /** Queries running now (for tests). */
  synchronized int running() {
    return running.values().stream().mapToInt(Integer::intValue).sum();
  }

  private boolean mayRun(String tenant) {
    return running.getOrDefault(tenant, 0) < limits.tenantConcurrency()
        && reserved + memoryPerQuery <= limits.totalMemoryBytes();
  }

  /** Whether no waiter ahead of {@code me} could run now (one whose tenant is full does not block it). */
  private boolean first(Waiter me) {
    for (Waiter ahead : queue) {
      if (ahead == me) {
        return true;
      }
      if (mayRun(ahead.tenant)) {
        return false;
      }
    }
    return true;
  }

  private Permit start(String tenant) {
    running.merge(tenant, 1, Integer::sum);
    reserved += memoryPerQuery;
    int threads = Math.max(1, Math.min(threadsPerQuery, limits.cpuThreads() - threadsInUse));
    threadsInUse += threads;
    return new Permit(tenant, threads);
  }

  static String format(Duration duration) {
    long ms = duration.toMillis();
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }
}

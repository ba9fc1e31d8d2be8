package io.storageengine.query;

import io.storageengine.common.Threads;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * Hands a query planned by {@code GetFlightInfo} to the {@code DoGet} that usually follows, so
 * the statement is not parsed, resolved, planned and set up in DuckDB a second time. Keyed by
 * the encoded ticket handle (tenant, SQL and pinned snapshots): an entry can only serve a call
 * for exactly that statement on exactly those snapshots. Each entry is taken at most once;
 * entries not taken within {@link #TTL_NANOS} (looked for on every call and every
 * {@link #SWEEP_MILLIS}), or pushed out by {@link #MAX_ENTRIES} newer ones, are cancelled
 * (their DuckDB work stops) and closed. A miss only costs the planning again.
 *
 * <p>An entry holds its query's admission (a tenant slot and its memory) while it waits, so
 * {@link #releaseOldest} gives one back when a new query of the same tenant (or any query, when
 * memory is short) would otherwise wait for it: a client that asks for FlightInfos and never
 * fetches them cannot hold its tenant's slots for the TTL.
 */
final class PlannedQueryHandoff implements AutoCloseable {
  static final int MAX_ENTRIES = 32;
  static final long TTL_NANOS = 30_000_000_000L;
  /** How often entries nobody took are looked for when no call comes (they hold a database). */
  static final long SWEEP_MILLIS = 5_000;

  private record Entry(String tenant, PreparedQuery query, long createdNanos) {}

  private final LinkedHashMap<String, List<Entry>> entries = new LinkedHashMap<>();
  private final long ttlNanos;
  private final ScheduledExecutorService sweeper;
  private int size;

  /** Sweeping on a daemon thread named {@code se-query-handoff-sweep}. */
  PlannedQueryHandoff() {
    this(Threads.daemonNamed("se-query-handoff-sweep"));
  }

  /**
   * @param threads makes the sweep thread; an {@code Error} a sweep throws goes to the thread's
   *     uncaught-exception handler
   */
  PlannedQueryHandoff(ThreadFactory threads) {
    this(TTL_NANOS, SWEEP_MILLIS, threads);
  }

  PlannedQueryHandoff(long ttlNanos, long sweepMillis) {
    this(ttlNanos, sweepMillis, Threads.daemonNamed("se-query-handoff-sweep"));
  }

  private PlannedQueryHandoff(long ttlNanos, long sweepMillis, ThreadFactory threads) {
    this.ttlNanos = ttlNanos;
    this.sweeper = Threads.scheduledPool(1, threads);
    sweeper.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
  }

  /** Closes the entries older than the TTL. */
  void sweep() {
    List<PreparedQuery> evicted = new ArrayList<>();
    synchronized (this) {
      expire(System.nanoTime(), evicted);
    }
    evicted.forEach(PlannedQueryHandoff::discard);
  }

  /** Keeps {@code query} of {@code tenant} for a later {@link #take} with the same handle; closes what it evicts. */
  void offer(byte[] handle, String tenant, PreparedQuery query) {
    List<PreparedQuery> evicted = new ArrayList<>();
    synchronized (this) {
      expire(System.nanoTime(), evicted);
      while (size >= MAX_ENTRIES) {
        evicted.add(removeEldest());
      }
      entries.computeIfAbsent(key(handle), k -> new ArrayList<>()).add(new Entry(tenant, query, System.nanoTime()));
      size++;
    }
    evicted.forEach(PlannedQueryHandoff::discard);
  }

  /** The query planned for {@code handle}, or null; the caller owns (and closes) it. */
  PreparedQuery take(byte[] handle) {
    List<PreparedQuery> evicted = new ArrayList<>();
    PreparedQuery found = null;
    synchronized (this) {
      expire(System.nanoTime(), evicted);
      List<Entry> list = entries.get(key(handle));
      if (list != null && !list.isEmpty()) {
        found = list.remove(0).query();
        size--;
        if (list.isEmpty()) {
          entries.remove(key(handle));
        }
      }
    }
    evicted.forEach(PlannedQueryHandoff::discard);
    return found;
  }

  /**
   * Cancels and closes the oldest entry of {@code tenant} (of any tenant when null), which
   * releases its admission; false when there is none.
   */
  boolean releaseOldest(String tenant) {
    PreparedQuery oldest = null;
    synchronized (this) {
      for (Iterator<Map.Entry<String, List<Entry>>> it = entries.entrySet().iterator(); it.hasNext() && oldest == null; ) {
        List<Entry> list = it.next().getValue();
        for (Iterator<Entry> e = list.iterator(); e.hasNext(); ) {
          Entry entry = e.next();
          if (tenant == null || tenant.equals(entry.tenant())) {
            oldest = entry.query();
            e.remove();
            size--;
            break;
          }
        }
        if (list.isEmpty()) {
          it.remove();
        }
      }
    }
    if (oldest == null) {
      return false;
    }
    discard(oldest);
    return true;
  }

  private void expire(long now, List<PreparedQuery> evicted) {
    for (Iterator<Map.Entry<String, List<Entry>>> it = entries.entrySet().iterator(); it.hasNext(); ) {
      List<Entry> list = it.next().getValue();
      list.removeIf(e -> {
        if (now - e.createdNanos() > ttlNanos) {
          evicted.add(e.query());
          size--;
          return true;
        }
        return false;
      });
      if (list.isEmpty()) {
        it.remove();
      }
    }
  }

  private PreparedQuery removeEldest() {
    Iterator<Map.Entry<String, List<Entry>>> it = entries.entrySet().iterator();
    List<Entry> list = it.next().getValue();
    PreparedQuery query = list.remove(0).query();
    size--;
    if (list.isEmpty()) {
      it.remove();
    }
    return query;
  }

  private static String key(byte[] handle) {
    return Base64.getEncoder().encodeToString(handle);
  }

  @Override
  public void close() {
    sweeper.shutdownNow();
    List<PreparedQuery> all = new ArrayList<>();
    synchronized (this) {
      entries.values().forEach(list -> list.forEach(e -> all.add(e.query())));
      entries.clear();
      size = 0;
    }
    all.forEach(PlannedQueryHandoff::discard);
  }

  /** Stops a query nobody took (it may still be running its start) and closes it. */
  private static void discard(PreparedQuery query) {
    query.cancel();
    query.close();
  }
}

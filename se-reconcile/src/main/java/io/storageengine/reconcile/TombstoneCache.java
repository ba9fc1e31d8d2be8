package io.storageengine.reconcile;

import io.opentelemetry.context.Context;
import io.storageengine.objectstore.ObjectStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * What the {@link TombstoneStore}s of one engine share: the tombstone files they read, kept
 * parsed and indexed by key (each file's newest entry of a key; at most {@code maxEntries}
 * entries, least recently used out, valid while a listing reports the etag read), and the I/O
 * threads that list, read and write buckets in parallel.
 * One per engine, owned by whoever built it (the process's context) and closed with it, so two
 * engines in one JVM share neither. Thread-safe.
 */
public final class TombstoneCache implements AutoCloseable {
  /**
   * Tombstones kept parsed in memory per engine (about 200 bytes each, with their files' key
   * maps): a 10 M-key table under 5% deletes holds 1.5 M, and a pass of random keys reads every
   * bucket.
   */
  public static final long DEFAULT_MAX_ENTRIES = 4_000_000;
  /** Parallel list/read/write calls: on object storage each is a round trip, on the fs store each write an fsync. */
  static final int IO_THREADS = 16;

  private final Files files;
  private final ThreadPoolExecutor io;

  /** A cache of {@code maxEntries} tombstones whose I/O threads come from {@code threads}. */
  public TombstoneCache(long maxEntries, ThreadFactory threads) {
    this.files = new Files(maxEntries);
    this.io = new ThreadPoolExecutor(IO_THREADS, IO_THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
    io.allowCoreThreadTimeOut(true);
  }

  /** A default-sized cache with daemon I/O threads named {@code se-tombstone-io-<n>} (tests, benchmarks). */
  public static TombstoneCache create() {
    AtomicInteger n = new AtomicInteger();
    return new TombstoneCache(DEFAULT_MAX_ENTRIES, r -> {
      Thread t = new Thread(r, "se-tombstone-io-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * The entries of one tombstone file: a key's newest entry (highest WAL seq) by its text, and,
   * made on first use, the same entries sorted by key for keys that are integers.
   */
  static final class Parsed {
    /** A file's integer keys, ascending, and their entries. */
    record Integers(long[] keys, TombstoneStore.Tombstone[] entries) {}

    private static final Integers NOT_INTEGERS = new Integers(new long[0], new TombstoneStore.Tombstone[0]);

    private final Map<String, TombstoneStore.Tombstone> byKey;
    /** Made on first use; {@link #NOT_INTEGERS} when some key is no integer. */
    private volatile Integers integers;

    Parsed(Map<String, TombstoneStore.Tombstone> byKey) {
      this.byKey = byKey;
    }

    /** A key's newest entry of the file, by key text. */
    Map<String, TombstoneStore.Tombstone> byKey() {
      return byKey;
    }

    /**
     * The entries sorted by key as an integer (the text of each key is its canonical decimal
     * form), or null when some key is not one.
     */
    Integers integers() {
      Integers made = integers;
      if (made == null) {
        made = sortIntegers(byKey);
        integers = made;
      }
      return made == NOT_INTEGERS ? null : made;
    }

    private static Integers sortIntegers(Map<String, TombstoneStore.Tombstone> byKey) {
      long[] keys = new long[byKey.size()];
      int i = 0;
      for (String text : byKey.keySet()) {
        Long value = TombstoneStore.canonicalInteger(text);
        if (value == null) {
          return NOT_INTEGERS;
        }
        keys[i++] = value;
      }
      java.util.Arrays.sort(keys);
      TombstoneStore.Tombstone[] entries = new TombstoneStore.Tombstone[keys.length];
      for (int j = 0; j < keys.length; j++) {
        entries[j] = byKey.get(Long.toString(keys[j]));
      }
      return new Integers(keys, entries);
    }
  }

  /** The entries of file {@code key}, if kept and read at {@code etag} (else null). */
  Parsed get(ObjectStore store, String key, String etag) {
    return files.get(store, key, etag);
  }

  /** Keeps the entries of file {@code key} as read (or written) at {@code etag}, and returns them. */
  Parsed put(ObjectStore store, String key, String etag, Collection<TombstoneStore.Tombstone> entries) {
    Map<String, TombstoneStore.Tombstone> byKey = new HashMap<>(entries.size() * 4 / 3 + 1);
    for (TombstoneStore.Tombstone t : entries) {
      byKey.merge(t.key(), t, (a, b) -> b.seq() > a.seq() ? b : a);
    }
    Parsed kept = new Parsed(Collections.unmodifiableMap(byKey));
    files.put(store, key, etag, kept);
    return kept;
  }

  /**
   * Runs {@code task} on each item, on the I/O threads when there are several, and returns the
   * results in order once all finished; the first failure is thrown after every task ended, so
   * nothing of this call is still running when it returns.
   */
  <T, R> List<R> inParallel(Collection<T> items, Function<T, R> task) {
    if (items.size() <= 1) {
      List<R> out = new ArrayList<>();
      items.forEach(item -> out.add(task.apply(item)));
      return out;
    }
    List<Future<R>> futures = new ArrayList<>();
    for (T item : items) {
      futures.add(io.submit(Context.current().wrap(() -> task.apply(item))));
    }
    List<R> out = new ArrayList<>();
    RuntimeException failure = null;
    for (Future<R> future : futures) {
      try {
        out.add(future.get());
      } catch (ExecutionException e) {
        RuntimeException cause = e.getCause() instanceof RuntimeException r ? r
            : new IllegalStateException("tombstone I/O failed", e.getCause());
        if (failure == null) {
          failure = cause;
        } else {
          failure.addSuppressed(cause);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        futures.forEach(f -> f.cancel(true));
        throw new IllegalStateException("interrupted while reading or writing tombstones", e);
      }
    }
    if (failure != null) {
      throw failure;
    }
    return out;
  }

  /** Stops the I/O threads (interrupting calls in flight) and forgets the parsed files. */
  @Override
  public void close() {
    io.shutdownNow();
    files.clear();
  }

  /** Parsed tombstone files of every store, by key and etag, least recently used out. */
  private static final class Files {
    private record Key(ObjectStore store, String key) {}

    private record Entry(String etag, Parsed entries) {}

    private final long maxEntries;
    private long size;
    private final Map<Key, Entry> files = new LinkedHashMap<>(16, 0.75f, true);

    Files(long maxEntries) {
      this.maxEntries = maxEntries;
    }

    synchronized Parsed get(ObjectStore store, String key, String etag) {
      Entry entry = files.get(new Key(store, key));
      return entry != null && etag != null && etag.equals(entry.etag()) ? entry.entries() : null;
    }

    synchronized void put(ObjectStore store, String key, String etag, Parsed entries) {
      if (etag == null || entries.byKey().size() > maxEntries) {
        return;
      }
      Entry previous = files.put(new Key(store, key), new Entry(etag, entries));
      size += entries.byKey().size() - (previous == null ? 0 : previous.entries().byKey().size());
      for (var it = files.entrySet().iterator(); size > maxEntries && it.hasNext(); ) {
        size -= it.next().getValue().entries().byKey().size();
        it.remove();
      }
    }

    synchronized void clear() {
      files.clear();
      size = 0;
    }
  }
}

package io.storageengine.reconcile;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The key indexes ({@link KeyIndex}) of the entity tables a process reconciles, one per tenant,
 * table and slice, within one memory budget for all of them. A pass {@link #take}s its index
 * (no other pass can use it meanwhile) and {@link #give}s it back with its pending change, or
 * hands a long sync of it to a thread of its own ({@link #syncInBackground}), which gives it back;
 * the least recently given back are dropped when the budget is exceeded. An index is only a cache:
 * a dropped one is rebuilt from the table's files by the next pass that wants it.
 *
 * <p>It also holds the rows of files a compaction of this process wrote ({@link #offer}), until
 * the sync that brings an index to those files takes them ({@link #rewrittenRows}) instead of
 * reading the files back. Thread-safe.
 */
final class KeyIndexes {
  /** A tenant's table (or one of its slices, -1 for the whole table). */
  record Key(String scope, UUID table, int slice) {}

  private final long budgetBytes;
  private final LinkedHashMap<Key, KeyIndex> idle = new LinkedHashMap<>(16, 0.75f, true);
  /** The indexes lent out (or being built), until {@link #give} or {@link #giveUp}. */
  private final java.util.Set<Key> lent = new java.util.HashSet<>();
  /** Of {@link #lent}, those a background sync holds ({@link #syncInBackground}). */
  private final java.util.Set<Key> syncing = new java.util.HashSet<>();
  /** Where background syncs open their DuckDB sessions (null: syncs run in the pass). */
  private volatile Background background;

  private record Background(io.storageengine.duckdb.DuckRuntime runtime, org.apache.arrow.memory.BufferAllocator allocator,
      int threads, long minRows) {}

  /** Rows of rewritten files from which a pass hands its index's sync to the background. */
  static final long BACKGROUND_SYNC_ROWS = 1_000_000;
  /** Rows of files a compaction wrote, by location, oldest first ({@link #offer}). */
  private final LinkedHashMap<String, KeyIndex.WrittenFile> rewritten = new LinkedHashMap<>();
  private long rewrittenBytes;
  private long handedOver;
  private long idleBytes;
  private long builds;
  private long reuses;
  private long reads;

  /** @param budgetBytes the memory all indexes together may take (0: no index is kept) */
  KeyIndexes(long budgetBytes) {
    this.budgetBytes = Math.max(0, budgetBytes);
  }

  /** No index kept: every pass reads the files. */
  static KeyIndexes none() {
    return new KeyIndexes(0);
  }

  /** The memory all indexes together may take. */
  long budgetBytes() {
    return budgetBytes;
  }

  /**
   * Lets a pass hand a long sync of its index (reading at least {@code minRows} rows of rewritten
   * files) to a thread of its own, with a DuckDB session of {@code threads} on {@code runtime}
   * and memory from {@code allocator}. The first call counts (reconcilers of one process share
   * their indexes).
   */
  synchronized void syncInBackgroundWith(io.storageengine.duckdb.DuckRuntime runtime,
      org.apache.arrow.memory.BufferAllocator allocator, int threads, long minRows) {
    if (background == null) {
      this.background = new Background(runtime, allocator, threads, minRows);
    }
  }

  /** The rows of rewritten files from which a sync runs in the background ({@link #syncInBackgroundWith}). */
  long backgroundSyncRows() {
    Background where = background;
    return where == null ? Long.MAX_VALUE : where.minRows();
  }

  /** Whether a pass may hand a sync to {@link #syncInBackground}. */
  boolean backgroundSyncs() {
    return background != null;
  }

  /**
   * Whether a background sync holds the index of {@code key}: a pass then reads the files rather
   * than waiting for it (or building another).
   */
  synchronized boolean syncing(Key key) {
    return syncing.contains(key);
  }

  /**
   * Runs {@code sync} (true: the index is usable) on a thread of its own with a session of the
   * key's tenant, for an index the caller took ({@link #take}) and hands over with its loan; the
   * index is given back when {@code sync} succeeds, else dropped. Meanwhile {@link #syncing}
   * tells passes of the table not to wait for it, and readers find it lent out.
   */
  void syncInBackground(Key key, KeyIndex index, java.util.function.Function<DuckSession, Boolean> sync) {
    Background where = background;
    synchronized (this) {
      syncing.add(key);
    }
    Thread thread = new Thread(() -> {
      boolean synced = false;
      try (org.apache.arrow.memory.BufferAllocator child = where.allocator().newChildAllocator("key-index-sync", 0,
          Long.MAX_VALUE); DuckSession session = new DuckSession(where.runtime(), child, where.threads(), key.scope())) {
        synced = sync.apply(session);
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(KeyIndexes.class).debug("key index of {} dropped: its sync failed: {}",
            key.table(), e.toString());
      } finally {
        synchronized (this) {
          syncing.remove(key);
        }
        if (synced) {
          give(key, index);
        } else {
          giveUp(key);
        }
      }
    }, "se-key-index-sync");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * The index of {@code key}, lent to the caller alone (null if there is none: the caller may
   * build one); waits while it is lent to another (a reader holds one for a lookup). The caller
   * ends the loan with {@link #give} or {@link #giveUp}.
   */
  synchronized KeyIndex take(Key key) throws InterruptedException {
    while (lent.contains(key)) {
      wait();
    }
    lent.add(key);
    return removeIdle(key);
  }

  /** As {@link #take} without waiting: null also when the index is lent out (for readers). */
  synchronized KeyIndex tryTake(Key key) {
    if (lent.contains(key)) {
      return null;
    }
    KeyIndex index = removeIdle(key);
    if (index != null) {
      lent.add(key);
    }
    return index;
  }

  /**
   * As {@link #tryTake(Key)}, for a reader that would otherwise read the files: while a pass
   * holds the index (its lookup, or recording its change: tenths of a second), waits for it up
   * to {@code maxWaitNanos}; never waits for a background sync ({@link #syncing}: seconds). Null
   * when there is none, the wait ran out, or the thread was interrupted (its flag kept).
   */
  synchronized KeyIndex tryTake(Key key, long maxWaitNanos) {
    long deadline = System.nanoTime() + maxWaitNanos;
    while (lent.contains(key) && !syncing.contains(key)) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      try {
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    return tryTake(key);
  }

  /** Ends a loan without an index to put back (it was dropped, or none was built). */
  synchronized void giveUp(Key key) {
    lent.remove(key);
    notifyAll();
  }

  private KeyIndex removeIdle(Key key) {
    KeyIndex index = idle.remove(key);
    if (index != null) {
      idleBytes -= index.bytes();
    }
    return index;
  }

  /**
   * Makes room for a new index of {@code bytes} by dropping idle ones, least recently used first;
   * false (nothing dropped) if it can never fit.
   */
  synchronized boolean reserve(long bytes) {
    if (bytes > budgetBytes) {
      return false;
    }
    evict(budgetBytes - bytes);
    return true;
  }

  /** Puts the index of {@code key} back, for the next pass of the same table (or slice). */
  synchronized void give(Key key, KeyIndex index) {
    lent.remove(key);
    notifyAll();
    KeyIndex previous = idle.put(key, index);
    if (previous != null) {
      idleBytes -= previous.bytes();
    }
    idleBytes += index.bytes();
    if (idleBytes > budgetBytes) {
      idle.remove(key);
      idleBytes -= index.bytes();
      evict(budgetBytes - index.bytes());
      if (index.bytes() <= budgetBytes) {
        idle.put(key, index);
        idleBytes += index.bytes();
      }
    }
  }

  /**
   * Whether rows of a compaction's files that add up to {@code rows} would be kept by
   * {@link #offer}: some index of {@code table} (tenant {@code scope}, any slice) is kept or lent
   * out, and they take at most a quarter of the budget.
   */
  synchronized boolean wantsRewritten(String scope, UUID table, long rows) {
    if (RewrittenRows.bytesFor(rows) > budgetBytes / 4) {
      return false;
    }
    for (Key k : idle.keySet()) {
      if (k.scope().equals(scope) && k.table().equals(table)) {
        return true;
      }
    }
    for (Key k : lent) {
      if (k.scope().equals(scope) && k.table().equals(table)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Keeps the rows of files a compaction committed ({@code rows}), for the next sync of the
   * table's index, within a quarter of the budget: the oldest kept are dropped to make room
   * (their files are then read back, as without them).
   */
  synchronized void offer(RewrittenRows rows) {
    for (KeyIndex.WrittenFile file : rows.files()) {
      KeyIndex.WrittenFile previous = rewritten.put(file.location(), file);
      if (previous != null) {
        rewrittenBytes -= RewrittenRows.bytesFor(previous.keys().length);
      }
      rewrittenBytes += RewrittenRows.bytesFor(file.keys().length);
    }
    Iterator<KeyIndex.WrittenFile> oldest = rewritten.values().iterator();
    while (rewrittenBytes > budgetBytes / 4 && oldest.hasNext()) {
      rewrittenBytes -= RewrittenRows.bytesFor(oldest.next().keys().length);
      oldest.remove();
    }
  }

  /** The rows {@link #offer}ed for the data file at {@code location}, handed over once (null: none). */
  synchronized KeyIndex.WrittenFile rewrittenRows(String location) {
    KeyIndex.WrittenFile rows = rewritten.remove(location);
    if (rows != null) {
      rewrittenBytes -= RewrittenRows.bytesFor(rows.keys().length);
      handedOver++;
    }
    return rows;
  }

  /** How many files' rows are kept ({@link #offer}), and how many were handed over: for tests. */
  synchronized long[] rewritten() {
    return new long[] {rewritten.size(), handedOver};
  }

  /** Counts a pass that read its current rows from an index it built, or from one it reused. */
  synchronized void used(boolean built) {
    if (built) {
      builds++;
    } else {
      reuses++;
    }
  }

  /** Counts a snapshot's reader (a WAL tail fold) that looked its keys up in an index. */
  synchronized void read() {
    reads++;
  }

  /** How many snapshot readers looked their keys up in an index: for tests. */
  synchronized long reads() {
    return reads;
  }

  /** How many passes built an index, and how many reused one: for tests and metrics. */
  synchronized long[] uses() {
    return new long[] {builds, reuses};
  }

  /** How many indexes are kept, and their bytes: for tests and metrics. */
  synchronized long[] held() {
    return new long[] {idle.size(), idleBytes};
  }

  private void evict(long until) {
    Iterator<Map.Entry<Key, KeyIndex>> it = idle.entrySet().iterator();
    while (idleBytes > until && it.hasNext()) {
      idleBytes -= it.next().getValue().bytes();
      it.remove();
    }
  }
}

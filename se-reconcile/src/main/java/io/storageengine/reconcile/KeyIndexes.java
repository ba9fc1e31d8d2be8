package io.storageengine.reconcile;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The key indexes ({@link KeyIndex}) of the entity tables a process reconciles, one per tenant,
 * table and slice, within one memory budget for all of them. A pass {@link #take}s its index
 * (no other pass can use it meanwhile) and {@link #give}s it back with its pending change; the
 * least recently given back are dropped when the budget is exceeded. An index is only a cache:
 * a dropped one is rebuilt from the table's files by the next pass that wants it. Thread-safe.
 */
final class KeyIndexes {
  /** A tenant's table (or one of its slices, -1 for the whole table). */
  record Key(String scope, UUID table, int slice) {}

  private final long budgetBytes;
  private final LinkedHashMap<Key, KeyIndex> idle = new LinkedHashMap<>(16, 0.75f, true);
  /** The indexes lent out (or being built), until {@link #give} or {@link #giveUp}. */
  private final java.util.Set<Key> lent = new java.util.HashSet<>();
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

package io.storageengine.common;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A map that keeps at most {@code maxEntries}, dropping the least recently used entry (read or
 * written) when a put goes beyond. Not thread-safe: callers synchronize, as with LinkedHashMap.
 */
public final class LruMap<K, V> extends LinkedHashMap<K, V> {
  private final int maxEntries;

  public LruMap(int maxEntries) {
    super(16, 0.75f, true);
    if (maxEntries < 1) {
      throw new IllegalArgumentException("an LRU map needs room for at least one entry, got " + maxEntries);
    }
    this.maxEntries = maxEntries;
  }

  @Override
  protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
    return size() > maxEntries;
  }
}

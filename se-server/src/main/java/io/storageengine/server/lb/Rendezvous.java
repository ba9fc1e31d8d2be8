package io.storageengine.server.lb;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * Rendezvous (highest-random-weight) hashing: every (key, node) pair gets a pseudo-random
 * weight and a key goes to the node with the highest weight. Removing a node moves only the
 * keys that were on it; adding one takes a fair share from every other node. No state is kept,
 * so every load balancer with the same view of the live nodes routes a key the same way.
 */
final class Rendezvous {
  private Rendezvous() {}

  /** The nodes in preference order for {@code key}: the first is the owner, then its fallbacks. */
  static List<String> order(String key, Collection<String> nodes) {
    List<String> sorted = new ArrayList<>(nodes);
    // Ties (two equal 64-bit weights) are broken by name so the order is total.
    sorted.sort(Comparator.comparingLong((String node) -> weight(key, node)).reversed()
        .thenComparing(Comparator.naturalOrder()));
    return sorted;
  }

  /** A 64-bit weight of the pair: FNV-1a over both strings, then a SplitMix64 finalizer. */
  static long weight(String key, String node) {
    long h = 0xcbf29ce484222325L;
    h = fnv(h, key.getBytes(StandardCharsets.UTF_8));
    h = fnv(h ^ 0xff, node.getBytes(StandardCharsets.UTF_8));
    h ^= h >>> 30;
    h *= 0xbf58476d1ce4e5b9L;
    h ^= h >>> 27;
    h *= 0x94d049bb133111ebL;
    h ^= h >>> 31;
    return h;
  }

  private static long fnv(long h, byte[] bytes) {
    for (byte b : bytes) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }
}

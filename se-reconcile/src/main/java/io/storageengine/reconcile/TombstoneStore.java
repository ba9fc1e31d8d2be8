package io.storageengine.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Remembered deletes of an entity table, so that an old upsert arriving after a newer delete
 * never resurrects the row.
 *
 * <p>Format: tombstones live on cluster storage under the table's {@code tombstones/} prefix,
 * spread over {@value #BUCKETS} buckets by a stable hash of the key ({@code String.hashCode} of
 * the canonical key text), so a pass reads only the buckets of the keys it touches. Each pass
 * that deletes rows writes one immutable JSON file per touched bucket:
 * {@code tombstones/<bucket, 3 digits>/<toSeq, 20 digits>-<fromSeq, 20 digits>.json}, content
 * {@code {"format":1,"entries":[{"k":"<key text>","v":"<version text>","s":<wal seq>,"t":<deleted at, epoch ms>}]}}.
 * The key text is the key columns cast to VARCHAR by DuckDB and joined with U+001F; the version
 * text is the version column cast to VARCHAR (DuckDB casts it back without loss).
 *
 * <p>Files are written before the commit; an entry counts only once its WAL seq is at or below
 * the table's committed high-water mark, so files of a failed attempt are harmless (a rerun over
 * the same immutable WAL range rewrites the same content). Entries older than the retention are
 * ignored, dropped when a bucket with many files is compacted into one, and removed from storage
 * by {@link #expire} (table maintenance).
 *
 * <p>The engine's {@link TombstoneCache} keeps the files read parsed in memory, valid while the
 * etag a listing reports is the one read, so a pass lists the buckets it needs and reads only
 * files that are new or changed. The buckets of a pass are listed, read, compacted and written in
 * parallel on the cache's I/O threads.
 */
public final class TombstoneStore {
  static final int BUCKETS = 128;
  private static final int COMPACT_AFTER_FILES = 8;
  /** Keys in more buckets than this are found with one listing of the whole prefix. */
  private static final int BUCKETS_LISTED_ONE_BY_ONE = 16;
  /** A file listed but gone when read. */
  private static final TombstoneCache.Parsed GONE = new TombstoneCache.Parsed(Map.of());

  private final ObjectStore store;
  private final TableWal table;
  private final TombstoneCache cache;
  /** The writer's slice: file names carry it so passes of different slices never collide (-1: none). */
  private final int slice;

  /** The tombstones of {@code table} on {@code store}, read through the engine's {@code cache}. */
  public TombstoneStore(ObjectStore store, TableWal table, TombstoneCache cache) {
    this(store, table, cache, -1);
  }

  /**
   * As {@link #TombstoneStore(ObjectStore, TableWal, TombstoneCache)}, for the passes of slice
   * {@code slice} of a sliced table: the files it writes are named
   * {@code <toSeq>-<fromSeq>.s<slice>.json}, since passes of different slices over the same WAL
   * range run concurrently.
   */
  TombstoneStore(ObjectStore store, TableWal table, TombstoneCache cache, int slice) {
    this.store = store;
    this.table = table;
    this.cache = cache;
    this.slice = slice;
  }

  /** One remembered delete. */
  public record Tombstone(String key, String version, long seq, long deletedAtMillis) {}

  /** What {@link #expire} removed: files deleted, files rewritten smaller, entries dropped. */
  public record Expiry(int filesDeleted, int filesRewritten, long entriesExpired) {}

  /**
   * The table's tombstone retention ({@code se.tombstone-retention} as {@link
   * io.storageengine.catalog.TableSettings} reads it), else {@code defaultRetention}.
   */
  public static Duration retention(org.apache.iceberg.Table table, Duration defaultRetention) {
    return io.storageengine.catalog.TableSettings.of(table).tombstoneRetention(defaultRetention);
  }

  /**
   * Removes from storage the entries older than {@code retention} (they are already ignored by
   * readers) in committed files, those whose WAL range ends at or below {@code committedSeq}: a
   * file whose entries all expired is deleted, one with some live entries is rewritten without
   * the expired ones (by compare-and-swap, so a file changed meanwhile is left for next time).
   * Files of uncommitted attempts are left alone: their entries may still be committed.
   */
  public Expiry expire(Instant now, Duration retention, long committedSeq) {
    long oldest = now.minus(retention).toEpochMilli();
    int deleted = 0;
    int rewritten = 0;
    long expired = 0;
    for (ObjectStore.ObjectInfo file : store.list(table.tombstonePrefix())) {
      String name = file.key().substring(file.key().lastIndexOf('/') + 1);
      if (!name.matches("\\d{20}-\\d{20}(\\.s\\d+)?\\.json") || Long.parseLong(name.substring(0, 20)) > committedSeq) {
        continue;
      }
      Optional<ObjectStore.Blob> blob = store.get(file.key());
      if (blob.isEmpty()) {
        continue;
      }
      List<Tombstone> entries = decode(blob.get().data());
      List<Tombstone> live = new ArrayList<>();
      for (Tombstone t : entries) {
        if (t.deletedAtMillis() >= oldest) {
          live.add(t);
        }
      }
      if (live.size() == entries.size()) {
        continue;
      }
      if (live.isEmpty()) {
        store.delete(file.key());
        deleted++;
      } else if (store.putIfMatch(file.key(), encode(live), blob.get().etag()).isPresent()) {
        rewritten++;
      } else {
        continue;
      }
      expired += entries.size() - live.size();
    }
    return new Expiry(deleted, rewritten, expired);
  }

  static int bucket(String key) {
    return Math.floorMod(key.hashCode(), BUCKETS);
  }

  private String bucketPrefix(int bucket) {
    return table.tombstonePrefix() + String.format("%03d/", bucket);
  }

  /**
   * The newest live tombstone of each of {@code keys} among entries with seq at most
   * {@code committedSeq}, not older than {@code retention}. Each key is looked up in the files
   * of its own bucket (kept by key in the cache), so the cost grows with the keys asked and
   * their buckets' files, not with the tombstones stored.
   */
  Map<String, Tombstone> load(Collection<String> keys, long committedSeq, Instant now, Duration retention) {
    Map<Integer, Set<String>> byBucket = new TreeMap<>();
    for (String k : keys) {
      byBucket.computeIfAbsent(bucket(k), b -> new HashSet<>()).add(k);
    }
    long oldest = now.minus(retention).toEpochMilli();
    Function<Integer, List<ObjectStore.ObjectInfo>> files = lister(byBucket.size());
    Map<String, Tombstone> result = new HashMap<>();
    for (Map<String, Tombstone> found : cache.inParallel(byBucket.entrySet(), e -> loadBucket(e.getKey(),
        e.getValue(), files.apply(e.getKey()), committedSeq, oldest))) {
      result.putAll(found); // buckets hold disjoint keys
    }
    return result;
  }

  /**
   * As {@link #load}, for a key of one {@code int} or {@code long} column: {@code keys} are the
   * keys' values (the text of each is its decimal form), looked up with no text made for them
   * (a batch of millions of keys took longer to turn into strings than to look up).
   */
  Map<String, Tombstone> loadIntegers(long[] keys, long committedSeq, Instant now, Duration retention) {
    int[] counts = new int[BUCKETS];
    int[] buckets = new int[keys.length];
    for (int i = 0; i < keys.length; i++) {
      buckets[i] = Math.floorMod(textHash(keys[i]), BUCKETS);
      counts[buckets[i]]++;
    }
    long[][] byBucket = new long[BUCKETS][];
    List<Integer> touched = new ArrayList<>();
    for (int b = 0; b < BUCKETS; b++) {
      if (counts[b] > 0) {
        byBucket[b] = new long[counts[b]];
        touched.add(b);
        counts[b] = 0;
      }
    }
    for (int i = 0; i < keys.length; i++) {
      byBucket[buckets[i]][counts[buckets[i]]++] = keys[i];
    }
    long oldest = now.minus(retention).toEpochMilli();
    Function<Integer, List<ObjectStore.ObjectInfo>> files = lister(touched.size());
    Map<String, Tombstone> result = new HashMap<>();
    for (Map<String, Tombstone> found : cache.inParallel(touched, b -> loadIntegerBucket(b, byBucket[b],
        files.apply(b), committedSeq, oldest))) {
      result.putAll(found);
    }
    return result;
  }

  /**
   * The files of a bucket: with keys in many buckets, from one listing of every bucket made now,
   * else a listing of the bucket itself when asked.
   */
  private Function<Integer, List<ObjectStore.ObjectInfo>> lister(int buckets) {
    if (buckets <= BUCKETS_LISTED_ONE_BY_ONE) {
      return b -> store.list(bucketPrefix(b));
    }
    Map<Integer, List<ObjectStore.ObjectInfo>> listed = filesByBucket(store.list(table.tombstonePrefix()));
    return b -> listed.getOrDefault(b, List.of());
  }

  private Map<String, Tombstone> loadIntegerBucket(int bucket, long[] keys, List<ObjectStore.ObjectInfo> files,
      long committedSeq, long oldest) {
    Arrays.sort(keys);
    Map<String, Tombstone> result = new HashMap<>();
    for (ObjectStore.ObjectInfo file : files) {
      TombstoneCache.Parsed parsed = readFile(file);
      TombstoneCache.Parsed.Integers integers = parsed.integers();
      if (integers == null) { // a key written as other text: look each key up by its text
        for (long k : keys) {
          Tombstone t = parsed.byKey().get(Long.toString(k));
          if (t != null) {
            keep(result, t, committedSeq, oldest);
          }
        }
        continue;
      }
      // Both sorted: the smaller side searched in the larger.
      long[] entryKeys = integers.keys();
      if (entryKeys.length < keys.length) {
        for (int i = 0; i < entryKeys.length; i++) {
          if (Arrays.binarySearch(keys, entryKeys[i]) >= 0) {
            keep(result, integers.entries()[i], committedSeq, oldest);
          }
        }
      } else {
        for (long k : keys) {
          int at = Arrays.binarySearch(entryKeys, k);
          if (at >= 0) {
            keep(result, integers.entries()[at], committedSeq, oldest);
          }
        }
      }
    }
    if (files.size() > COMPACT_AFTER_FILES) {
      compact(bucket, files, committedSeq, oldest);
    }
    return result;
  }

  /** {@code String.valueOf(value).hashCode()}, without the string. */
  static int textHash(long value) {
    if (value == Long.MIN_VALUE) {
      return Long.toString(value).hashCode();
    }
    int h = 0;
    long v = value;
    if (v < 0) {
      h = '-';
      v = -v;
    }
    long place = 1;
    while (place <= v / 10) {
      place *= 10;
    }
    for (; place > 0; place /= 10) {
      h = 31 * h + ('0' + (int) (v / place % 10));
    }
    return h;
  }

  /** The integer whose canonical decimal text {@code text} is (as DuckDB casts one), else null. */
  static Long canonicalInteger(String text) {
    if (text.isEmpty() || text.length() > 20) {
      return null;
    }
    try {
      long value = Long.parseLong(text);
      return Long.toString(value).equals(text) ? value : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The listed tombstone files by bucket (the directory after the tombstone prefix). */
  private Map<Integer, List<ObjectStore.ObjectInfo>> filesByBucket(List<ObjectStore.ObjectInfo> files) {
    int at = table.tombstonePrefix().length();
    Map<Integer, List<ObjectStore.ObjectInfo>> out = new HashMap<>();
    for (ObjectStore.ObjectInfo file : files) {
      String key = file.key();
      if (key.length() > at + 4 && key.charAt(at + 3) == '/') {
        try {
          out.computeIfAbsent(Integer.parseInt(key.substring(at, at + 3)), b -> new ArrayList<>()).add(file);
        } catch (NumberFormatException e) {
          // not a bucket directory: not ours
        }
      }
    }
    return out;
  }

  private Map<String, Tombstone> loadBucket(int bucket, Set<String> keys, List<ObjectStore.ObjectInfo> files,
      long committedSeq, long oldest) {
    Map<String, Tombstone> result = new HashMap<>();
    for (ObjectStore.ObjectInfo file : files) {
      // A file holds one entry per key (a pass's deletes, or a compaction's newest of each key),
      // so its newest entry of a key is the only one that can count.
      Map<String, Tombstone> entries = readFile(file).byKey();
      if (entries.size() < keys.size()) {
        entries.forEach((key, t) -> {
          if (keys.contains(key)) {
            keep(result, t, committedSeq, oldest);
          }
        });
      } else {
        for (String key : keys) {
          Tombstone t = entries.get(key);
          if (t != null) {
            keep(result, t, committedSeq, oldest);
          }
        }
      }
    }
    if (files.size() > COMPACT_AFTER_FILES) {
      compact(bucket, files, committedSeq, oldest);
    }
    return result;
  }

  private static void keep(Map<String, Tombstone> result, Tombstone t, long committedSeq, long oldest) {
    if (t.seq() <= committedSeq && t.deletedAtMillis() >= oldest) {
      result.merge(t.key(), t, (a, b) -> b.seq() > a.seq() ? b : a);
    }
  }

  /** True when the table has any tombstone file (one listing). */
  boolean isEmpty() {
    return store.list(table.tombstonePrefix()).isEmpty();
  }

  /** Persists the tombstones produced by the pass over WAL range {@code fromSeq..toSeq}. */
  public void write(long fromSeq, long toSeq, List<Tombstone> tombstones) {
    Map<Integer, List<Tombstone>> byBucket = new TreeMap<>();
    for (Tombstone t : tombstones) {
      byBucket.computeIfAbsent(bucket(t.key()), b -> new ArrayList<>()).add(t);
    }
    // Written through the cache: the next pass (and a query's fold) reads them from memory.
    cache.inParallel(byBucket.entrySet(), e -> {
      String key = fileKey(e.getKey(), toSeq, fromSeq);
      cache.put(store, key, store.put(key, encode(e.getValue())), List.copyOf(e.getValue()));
      return null;
    });
  }

  private String fileKey(int bucket, long toSeq, long fromSeq) {
    return bucketPrefix(bucket) + String.format("%020d-%020d", toSeq, fromSeq) + (slice < 0 ? "" : ".s" + slice)
        + ".json";
  }

  /**
   * Merges the committed files of a bucket into one, dropping expired entries. The merged file
   * is written before the old ones are deleted, so a concurrent reader never misses an entry.
   */
  private void compact(int bucket, List<ObjectStore.ObjectInfo> files, long committedSeq, long oldest) {
    List<ObjectStore.ObjectInfo> merged = new ArrayList<>();
    Map<String, Tombstone> live = new HashMap<>();
    long minFrom = Long.MAX_VALUE;
    long maxTo = 0;
    for (ObjectStore.ObjectInfo file : files) {
      String name = file.key().substring(file.key().lastIndexOf('/') + 1);
      long to = Long.parseLong(name.substring(0, 20));
      long from = Long.parseLong(name.substring(21, 41));
      if (to > committedSeq) {
        continue;
      }
      merged.add(file);
      minFrom = Math.min(minFrom, from);
      maxTo = Math.max(maxTo, to);
      for (Tombstone t : readFile(file).byKey().values()) {
        if (t.deletedAtMillis() >= oldest) {
          live.merge(t.key(), t, (a, b) -> b.seq() > a.seq() ? b : a);
        }
      }
    }
    if (merged.size() < 2) {
      return;
    }
    String target = fileKey(bucket, maxTo, minFrom);
    if (!live.isEmpty()) {
      List<Tombstone> entries = List.copyOf(live.values());
      cache.put(store, target, store.put(target, encode(entries)), entries);
    }
    for (ObjectStore.ObjectInfo file : merged) {
      if (!file.key().equals(target) || live.isEmpty()) {
        store.delete(file.key());
      }
    }
  }

  /** The entries of a listed file, from the cache while its etag is the listed one. */
  private TombstoneCache.Parsed readFile(ObjectStore.ObjectInfo file) {
    TombstoneCache.Parsed cached = cache.get(store, file.key(), file.etag());
    if (cached != null) {
      return cached;
    }
    Optional<ObjectStore.Blob> blob = store.get(file.key());
    if (blob.isEmpty()) {
      return GONE; // compacted or expired since it was listed
    }
    return cache.put(store, file.key(), blob.get().etag(), decode(blob.get().data()));
  }

  private static byte[] encode(List<Tombstone> tombstones) {
    ObjectNode root = Json.object();
    root.put("format", 1);
    ArrayNode entries = root.putArray("entries");
    for (Tombstone t : tombstones) {
      ObjectNode e = entries.addObject();
      e.put("k", t.key());
      e.put("v", t.version());
      e.put("s", t.seq());
      e.put("t", t.deletedAtMillis());
    }
    return Json.toBytes(root);
  }

  private static List<Tombstone> decode(byte[] data) {
    JsonNode root = Json.parse(data);
    List<Tombstone> result = new ArrayList<>();
    for (JsonNode e : root.path("entries")) {
      result.add(new Tombstone(e.path("k").asText(), e.path("v").isNull() ? null : e.path("v").asText(),
          e.path("s").asLong(), e.path("t").asLong()));
    }
    return result;
  }
}

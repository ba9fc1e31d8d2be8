package io.storageengine.objectstore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/** An in-process store for tests. All operations are atomic through the map's own CAS. */
public final class MemoryObjectStore implements ObjectStore {
  private final ConcurrentSkipListMap<String, Stored> blobs = new ConcurrentSkipListMap<>();
  private final AtomicLong versions = new AtomicLong();

  /** A version of a key's content (its etag unique to it) and when it was written. */
  private record Stored(byte[] data, String etag, Instant written) {
    ObjectInfo info(String key) {
      return new ObjectInfo(key, data.length, etag, written);
    }
  }

  @Override
  public Optional<Blob> get(String key) {
    Stored b = blobs.get(Keys.check(key));
    return b == null ? Optional.empty() : Optional.of(new Blob(b.data().clone(), b.etag()));
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    Keys.checkRange(Keys.check(key), offset, length);
    Stored b = blobs.get(key);
    if (b == null) {
      return Optional.empty();
    }
    int from = (int) Math.min(offset, b.data().length);
    int to = (int) Math.min((long) from + length, b.data().length);
    return Optional.of(Arrays.copyOfRange(b.data(), from, to));
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    Stored b = blobs.get(Keys.check(key));
    return b == null ? Optional.empty() : Optional.of(b.info(key));
  }

  @Override
  public String put(String key, byte[] data) {
    Stored b = newBlob(Keys.check(key), data);
    blobs.put(key, b);
    return b.etag();
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    Stored b = newBlob(Keys.check(key), data);
    return blobs.putIfAbsent(key, b) == null ? Optional.of(b.etag()) : Optional.empty();
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    Keys.checkData(Keys.check(key), data);
    if (etag == null) {
      return Optional.empty();
    }
    Stored current = blobs.get(key);
    if (current == null || !current.etag().equals(etag)) {
      return Optional.empty();
    }
    Stored b = newBlob(key, data);
    return blobs.replace(key, current, b) ? Optional.of(b.etag()) : Optional.empty();
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> out = new ArrayList<>();
    for (Map.Entry<String, Stored> e : blobs.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      out.add(e.getValue().info(e.getKey()));
    }
    return out;
  }

  @Override
  public Children listChildren(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> objects = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    Map.Entry<String, Stored> e = blobs.ceilingEntry(prefix);
    while (e != null && e.getKey().startsWith(prefix)) {
      String key = e.getKey();
      int slash = key.indexOf('/', prefix.length());
      if (slash < 0) {
        objects.add(e.getValue().info(key));
        e = blobs.higherEntry(key);
      } else {
        directories.add(key.substring(0, slash + 1));
        // Every key below "d/" sorts before "d0" ('0' follows '/'): skip the whole directory.
        e = blobs.ceilingEntry(key.substring(0, slash) + '0');
      }
    }
    return new Children(objects, directories);
  }

  @Override
  public void delete(String key) {
    blobs.remove(Keys.check(key));
  }

  @Override
  public String describe() {
    return "memory";
  }

  private Stored newBlob(String key, byte[] data) {
    return new Stored(Keys.checkData(key, data).clone(), "m" + versions.incrementAndGet(), Instant.now());
  }
}

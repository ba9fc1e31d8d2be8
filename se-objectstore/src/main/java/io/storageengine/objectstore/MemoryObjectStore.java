package io.storageengine.objectstore;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/** An in-process store for tests. All operations are atomic through the map's own CAS. */
public final class MemoryObjectStore implements ObjectStore {
  private final ConcurrentSkipListMap<String, Blob> blobs = new ConcurrentSkipListMap<>();
  private final AtomicLong versions = new AtomicLong();

  @Override
  public Optional<Blob> get(String key) {
    Blob b = blobs.get(Keys.check(key));
    return b == null ? Optional.empty() : Optional.of(new Blob(b.data().clone(), b.etag()));
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    Keys.checkRange(Keys.check(key), offset, length);
    Blob b = blobs.get(key);
    if (b == null) {
      return Optional.empty();
    }
    int from = (int) Math.min(offset, b.data().length);
    int to = (int) Math.min((long) from + length, b.data().length);
    return Optional.of(Arrays.copyOfRange(b.data(), from, to));
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    Blob b = blobs.get(Keys.check(key));
    return b == null ? Optional.empty() : Optional.of(new ObjectInfo(key, b.data().length, b.etag()));
  }

  @Override
  public String put(String key, byte[] data) {
    Blob b = newBlob(Keys.check(key), data);
    blobs.put(key, b);
    return b.etag();
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    Blob b = newBlob(Keys.check(key), data);
    return blobs.putIfAbsent(key, b) == null ? Optional.of(b.etag()) : Optional.empty();
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    Keys.checkData(Keys.check(key), data);
    if (etag == null) {
      return Optional.empty();
    }
    Blob current = blobs.get(key);
    if (current == null || !current.etag().equals(etag)) {
      return Optional.empty();
    }
    Blob b = newBlob(key, data);
    return blobs.replace(key, current, b) ? Optional.of(b.etag()) : Optional.empty();
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> out = new ArrayList<>();
    for (Map.Entry<String, Blob> e : blobs.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      out.add(new ObjectInfo(e.getKey(), e.getValue().data().length, e.getValue().etag()));
    }
    return out;
  }

  @Override
  public Children listChildren(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> objects = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    Map.Entry<String, Blob> e = blobs.ceilingEntry(prefix);
    while (e != null && e.getKey().startsWith(prefix)) {
      String key = e.getKey();
      int slash = key.indexOf('/', prefix.length());
      if (slash < 0) {
        objects.add(new ObjectInfo(key, e.getValue().data().length, e.getValue().etag()));
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

  private Blob newBlob(String key, byte[] data) {
    return new Blob(Keys.checkData(key, data).clone(), "m" + versions.incrementAndGet());
  }
}

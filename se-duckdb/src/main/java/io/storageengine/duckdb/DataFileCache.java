package io.storageengine.duckdb;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Local copies of remote data files, least recently used evicted first once the cache holds more
 * than its byte budget. Data files are immutable, so a copy never goes stale. A file in use by a
 * running query or reconcile pass is leased and not evicted until the lease is released; the budget may be exceeded
 * while every file is leased.
 *
 * <p>Copies are kept in one directory per scope (the tenant), so a query's DuckDB database can be
 * allowed to read the copies of its own tenant and no other. Copies are found by the file's
 * location within its scope, so reconcile passes and queries of a tenant share them.
 */
public final class DataFileCache {
  private final Path directory;
  private final long maxBytes;
  private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
  private long totalBytes;

  private static final class Entry {
    final Path path;
    final long bytes;
    int leases;

    Entry(Path path, long bytes) {
      this.path = path;
      this.bytes = bytes;
    }
  }

  /** Holds a cached file until closed. */
  public interface Lease extends AutoCloseable {
    /** The local copy; valid until the lease is closed. */
    Path path();

    @Override
    void close();
  }

  /** A lease on a file that is not the cache's (a local data file read in place); closing it does nothing. */
  public static Lease inPlace(Path path) {
    return new Lease() {
      @Override
      public Path path() {
        return path;
      }

      @Override
      public void close() {}
    };
  }

  /** A cache below {@code directory} (emptied now) holding at most about {@code maxBytes}. */
  public DataFileCache(Path directory, long maxBytes) {
    this.directory = directory;
    this.maxBytes = maxBytes;
    try {
      Files.createDirectories(directory);
      // Copies from an earlier run are not indexed; start empty rather than exceed the budget.
      try (Stream<Path> old = Files.walk(directory)) {
        for (Path file : (Iterable<Path>) old.sorted(java.util.Comparator.reverseOrder())::iterator) {
          if (!file.equals(directory)) {
            Files.deleteIfExists(file);
          }
        }
      }
    } catch (IOException e) {
      throw SeException.internal("cannot prepare the data file cache directory", e);
    }
  }

  /** The directory holding the copies of {@code scope} (it may not exist yet). */
  public Path directory(String scope) {
    return directory.resolve(key(scope));
  }

  /** A leased local copy of {@code location} for {@code scope}, downloaded through {@code io} when absent. */
  public Lease acquire(String scope, FileIO io, String location) {
    return acquire(scope, location, temp -> {
      InputFile input = io.newInputFile(location);
      try (SeekableInputStream in = input.newStream(); InputStream stream = in) {
        Files.copy(stream, temp, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException | UncheckedIOException e) {
        throw SeException.unavailable("cannot read data file of the table", e);
      }
    });
  }

  /** Writes a file the cache keeps: the whole file at {@code target}, or throws. */
  @FunctionalInterface
  public interface FileMaker {
    void make(Path target);
  }

  /**
   * A leased local file named {@code name} within {@code scope}, made by {@code maker} when
   * absent: for files that, like data files, never change once made (such as the staged form of
   * an immutable WAL segment). Shares the byte budget and eviction with the copies.
   */
  public Lease acquire(String scope, String name, FileMaker maker) {
    Path scopeDirectory = directory(scope);
    String hashed = key(name);
    String key = scopeDirectory.getFileName() + "/" + hashed;
    synchronized (this) {
      Entry entry = entries.get(key);
      if (entry != null) {
        return lease(entry);
      }
    }
    Path target = scopeDirectory.resolve(hashed + ".parquet");
    Path temp = scopeDirectory.resolve(hashed + "." + UUID.randomUUID() + ".tmp");
    long bytes;
    try {
      Files.createDirectories(scopeDirectory);
      maker.make(temp);
      bytes = Files.size(temp);
    } catch (IOException | RuntimeException e) {
      deleteQuietly(temp);
      throw e instanceof IOException io ? SeException.internal("cannot store a file in the data file cache", io)
          : (RuntimeException) e;
    }
    synchronized (this) {
      Entry entry = entries.get(key);
      if (entry != null) {
        deleteQuietly(temp);
        return lease(entry);
      }
      try {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        deleteQuietly(temp);
        throw SeException.internal("cannot store a data file in the data file cache", e);
      }
      entry = new Entry(target, bytes);
      entries.put(key, entry);
      totalBytes += bytes;
      Lease lease = lease(entry);
      evict();
      return lease;
    }
  }

  /**
   * A lease on a new path for a file of {@code scope} that is not the cache's: in the scope's
   * directory (so whatever may read the scope's files may read it), never shared, not counted in
   * the byte budget, and deleted (if it was written) when the lease is closed. For a file made
   * for one reader that reads it once.
   */
  public Lease scratch(String scope) {
    Path scopeDirectory = directory(scope);
    try {
      Files.createDirectories(scopeDirectory);
    } catch (IOException e) {
      throw SeException.internal("cannot prepare the data file cache directory", e);
    }
    Path path = scopeDirectory.resolve("scratch-" + UUID.randomUUID() + ".parquet");
    return new Lease() {
      @Override
      public Path path() {
        return path;
      }

      @Override
      public void close() {
        deleteQuietly(path);
      }
    };
  }

  /**
   * A lease on the file named {@code name} within {@code scope} when the cache holds it (see
   * {@link #acquire(String, String, FileMaker)}), else empty; never makes it.
   */
  public java.util.Optional<Lease> leaseIfPresent(String scope, String name) {
    String key = directory(scope).getFileName() + "/" + key(name);
    synchronized (this) {
      Entry entry = entries.get(key);
      return entry == null ? java.util.Optional.empty() : java.util.Optional.of(lease(entry));
    }
  }

  public synchronized long totalBytes() {
    return totalBytes;
  }

  public synchronized int size() {
    return entries.size();
  }

  private Lease lease(Entry entry) {
    entry.leases++;
    return new Lease() {
      private boolean closed;

      @Override
      public Path path() {
        return entry.path;
      }

      @Override
      public void close() {
        synchronized (DataFileCache.this) {
          if (!closed) {
            closed = true;
            entry.leases--;
            evict();
          }
        }
      }
    };
  }

  private void evict() {
    Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator();
    while (totalBytes > maxBytes && it.hasNext()) {
      Entry entry = it.next().getValue();
      if (entry.leases == 0) {
        it.remove();
        totalBytes -= entry.bytes;
        deleteQuietly(entry.path);
      }
    }
  }

  private static String key(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 20);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException ignored) {
      // A leftover copy is removed at the next start.
    }
  }
}

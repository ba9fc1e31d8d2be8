package io.storageengine.duckdb;

import io.storageengine.catalog.LocationConfinement;
import io.storageengine.common.SeException;
import io.storageengine.common.ThreadPriority;
import io.storageengine.common.config.Setting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBConnection;

/**
 * The DuckDB side of one engine process: the databases reconcile and queries run on, the local
 * copies of remote data files and the Parquet footers read from them. Created once by the
 * composition root, passed to whatever runs DuckDB, and closed with the process: closing it
 * closes every database it started. Two runtimes share nothing, so two engines in one JVM stay
 * apart. Thread-safe.
 *
 * <p>Everything lives below one private directory: {@code data-files/} (the copies, see
 * {@link DataFileCache}), {@code spill/} (the query databases' spill files) and
 * {@code reconcile-spill/}.
 */
public final class DuckRuntime implements AutoCloseable {
  /** Default upper bound of the local copies of remote data files. */
  public static final long DEFAULT_FILE_CACHE_BYTES = 1L << 30;
  /** The bound of the local copies, {@code duckdb.file-cache-size}. */
  public static final Setting<Long> FILE_CACHE_SIZE = Setting.size("duckdb.file-cache-size", "1GiB",
      "local copies of remote data files kept for reconcile and queries (LRU by bytes)");
  /** Default DuckDB {@code memory_limit} of each shared database ({@link #connectShared}). */
  public static final long DEFAULT_SHARED_MEMORY_BYTES = 4L << 30;
  /** Least {@code duckdb.shared-memory-limit} accepted. */
  static final long MIN_SHARED_MEMORY_BYTES = 64L << 20;
  /**
   * The DuckDB {@code memory_limit} of each shared database, {@code duckdb.shared-memory-limit}:
   * without one DuckDB takes up to 80% of the machine's memory per database, next to the JVM's
   * heap and the query databases, and a full-speed entity load got the process killed by the
   * kernel.
   */
  public static final Setting<Long> SHARED_MEMORY_LIMIT = Setting.size("duckdb.shared-memory-limit", "4GiB",
      "DuckDB memory_limit of each shared database (one per thread count) of reconcile and maintenance passes and"
          + " entity WAL tail folds, and of the background database compactions run on (beyond it their large"
          + " operators and tables spill to disk)");
  /** Every setting of the DuckDB runtime. */
  public static final List<Setting<?>> SETTINGS = List.of(FILE_CACHE_SIZE, SHARED_MEMORY_LIMIT);

  private final Path directory;
  private final boolean ownsDirectory;
  private final DataFileCache files;
  private final ParquetFooters footers = new ParquetFooters(ParquetFooters.DEFAULT_MAX_ENTRIES);
  private final Map<Integer, DuckDBConnection> sharedByThreads = new HashMap<>();
  private final Map<String, QueryDatabasePool> queryPools = new HashMap<>();
  private final long sharedMemoryBytes;
  private boolean closed;

  private DuckRuntime(Path directory, boolean ownsDirectory, long fileCacheBytes, long sharedMemoryBytes) {
    if (fileCacheBytes < 0) {
      throw SeException.invalid("data file cache size %d: must not be negative", fileCacheBytes);
    }
    if (sharedMemoryBytes < MIN_SHARED_MEMORY_BYTES) {
      throw SeException.invalid("%s %d bytes: must be at least 64MiB", SHARED_MEMORY_LIMIT.key(), sharedMemoryBytes);
    }
    this.directory = directory;
    this.ownsDirectory = ownsDirectory;
    this.sharedMemoryBytes = sharedMemoryBytes;
    this.files = new DataFileCache(directory.resolve("data-files"), fileCacheBytes);
  }

  /**
   * A runtime working below {@code directory}, which it must have to itself (copies left there
   * by an earlier run are deleted).
   */
  public static DuckRuntime open(Path directory, long fileCacheBytes) {
    return open(directory, fileCacheBytes, DEFAULT_SHARED_MEMORY_BYTES);
  }

  /** As {@link #open(Path, long)}, each shared database limited to {@code sharedMemoryBytes}. */
  public static DuckRuntime open(Path directory, long fileCacheBytes, long sharedMemoryBytes) {
    return new DuckRuntime(directory, false, fileCacheBytes, sharedMemoryBytes);
  }

  /** A runtime working below a new temporary directory, deleted when it closes. */
  public static DuckRuntime temporary(long fileCacheBytes) {
    return temporary(fileCacheBytes, DEFAULT_SHARED_MEMORY_BYTES);
  }

  /** As {@link #temporary(long)}, each shared database limited to {@code sharedMemoryBytes}. */
  public static DuckRuntime temporary(long fileCacheBytes, long sharedMemoryBytes) {
    try {
      return new DuckRuntime(Files.createTempDirectory("se-duckdb-"), true, fileCacheBytes, sharedMemoryBytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Local copies of remote data files, by tenant and location. */
  public DataFileCache files() {
    return files;
  }

  /**
   * A local path DuckDB can read for a data file of {@code table} at {@code location}, held until
   * the lease is closed: the file itself when the warehouse is local (see
   * {@link DataFileLocations#localPath}), else a copy from {@link #files()} for the tenant
   * {@code scope}, downloaded through the table's FileIO when absent. The location must lie under
   * the tenant's storage root: DuckDB reads local files past the FileIO that would refuse it.
   */
  public DataFileCache.Lease localCopy(String scope, Table table, String location) {
    LocationConfinement.of(table).check(location, "data file");
    Path local = DataFileLocations.localPath(location);
    return local != null ? DataFileCache.inPlace(local) : files.acquire(scope, table.io(), location);
  }

  /** Schemas (with field ids) of data files, by location. */
  public ParquetFooters footers() {
    return footers;
  }

  /**
   * A new connection to the runtime's shared in-memory database with {@code threads} worker
   * threads, for work that creates only temporary objects (reconcile and maintenance passes),
   * except the states of entity WAL tail folds (tables of one schema, which their owner drops,
   * see {@code WalTailRows.newEntityState}; they go with the database when it is discarded).
   * Temporary tables, registered Arrow streams and session settings belong to the connection;
   * sharing the database bounds DuckDB's threads and memory per process instead of per pass, and
   * a connection costs about a millisecond where starting a database costs tens.
   */
  public synchronized DuckDBConnection connectShared(int threads) throws SQLException {
    checkOpen();
    DuckDBConnection base = sharedByThreads.get(threads);
    if (base == null || base.isClosed()) {
      base = openShared(threads, "threads-" + threads);
      sharedByThreads.put(threads, base);
    }
    return base.duplicate();
  }

  /** The kernel name of the background databases' worker threads ({@link #connectBackground}). */
  public static final String BACKGROUND_THREAD_NAME = "se-duck-backgr";

  /**
   * As {@link #connectShared}, a connection to the runtime's <em>background</em> database with
   * {@code threads} worker threads, for long maintenance work that should take only the cores the
   * foreground leaves: a database of its own (its worker threads shared with no pass or query)
   * whose worker threads run at nice {@code nice} (1..19; Linux, see {@link ThreadPriority}). A
   * statement also runs on the thread that executes it, whose priority is the caller's. Discard
   * it with {@link #discardShared} of {@code -threads}.
   */
  public synchronized DuckDBConnection connectBackground(int threads, int nice) throws SQLException {
    checkOpen();
    DuckDBConnection base = sharedByThreads.get(-threads);
    if (base == null || base.isClosed()) {
      // DuckDB's worker threads start when the thread count is set and inherit the kernel name of
      // the thread setting it: named so, they are found and lowered right after.
      Thread caller = Thread.currentThread();
      String callerName = caller.getName();
      caller.setName(BACKGROUND_THREAD_NAME);
      try {
        base = openShared(threads, "background-" + threads);
      } finally {
        caller.setName(callerName);
      }
      ThreadPriority.lower(ThreadPriority.threadsNamed(BACKGROUND_THREAD_NAME), nice);
      sharedByThreads.put(-threads, base);
    }
    return base.duplicate();
  }

  /**
   * Forgets the shared database behind {@code threads} after DuckDB reported it unusable (a fatal
   * error invalidates a database for every connection), so the next connection gets a new one.
   * Connections still open on the old database keep it alive until they close.
   */
  public synchronized void discardShared(int threads) {
    closeQuietly(sharedByThreads.remove(threads));
  }

  /**
   * The pool of locked per-tenant query databases with the given {@code memory_limit} and worker
   * threads (one pool per distinct pair, created on first use, closed with the runtime).
   */
  public QueryDatabasePool queryDatabases(String memoryLimit, int threads) {
    return queryDatabases(memoryLimit, threads, null);
  }

  /**
   * As {@link #queryDatabases(String, int)}, each database also spilling at most
   * {@code spillLimit} (DuckDB {@code max_temp_directory_size}; null: DuckDB's default) below
   * {@code spill/}.
   */
  public synchronized QueryDatabasePool queryDatabases(String memoryLimit, int threads, String spillLimit) {
    checkOpen();
    return queryPools.computeIfAbsent(memoryLimit + "/" + threads + "/" + spillLimit,
        key -> new QueryDatabasePool(memoryLimit, threads, directory.resolve("spill"), spillLimit));
  }

  /** Whether {@link #close} was called. */
  public synchronized boolean isClosed() {
    return closed;
  }

  /** Closes every database of the runtime; a temporary runtime also deletes its directory. */
  @Override
  public void close() {
    List<DuckDBConnection> shared;
    List<QueryDatabasePool> pools;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      shared = new ArrayList<>(sharedByThreads.values());
      sharedByThreads.clear();
      pools = new ArrayList<>(queryPools.values());
      queryPools.clear();
    }
    shared.forEach(DuckRuntime::closeQuietly);
    pools.forEach(QueryDatabasePool::close);
    if (ownsDirectory) {
      deleteRecursively(directory);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw SeException.unavailable("DuckDB is shut down: the process is stopping", null);
    }
  }

  private DuckDBConnection openShared(int threads, String spillName) throws SQLException {
    Path spill;
    try {
      spill = Files.createDirectories(directory.resolve("reconcile-spill").resolve(spillName));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DuckDBConnection base = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
    try (Statement st = base.createStatement()) {
      // Global settings: worker threads, the memory bound and where large operators spill.
      st.execute("SET threads = " + threads);
      st.execute("SET memory_limit = '" + (sharedMemoryBytes >> 20) + "MiB'");
      st.execute("SET temp_directory = " + SqlQuoting.literal(spill.toString()));
    } catch (SQLException e) {
      base.close();
      throw e;
    }
    return base;
  }

  private static void closeQuietly(DuckDBConnection connection) {
    if (connection == null) {
      return;
    }
    try {
      connection.close();
    } catch (SQLException e) {
      // Closing a database that is being dropped; nothing more to do.
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // Best effort: scratch data only.
    }
  }
}

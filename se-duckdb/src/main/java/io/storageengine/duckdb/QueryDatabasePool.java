package io.storageengine.duckdb;

import io.storageengine.common.SeException;
import io.storageengine.common.ThreadPriority;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.duckdb.DuckDBConnection;

/**
 * Locked DuckDB databases kept per tenant, so a query does not pay for starting and stopping a
 * database (tens of milliseconds each).
 *
 * <p>A database is locked when it is created: external access off, reads allowed only below its
 * {@linkplain #acquire allowed directories} (the directories of data files of the tenant that
 * queries needed so far) and its own spill directory (also its temporary, home and secret
 * directory, so no setting names a server directory beyond it), no persistent secrets, and
 * every setting frozen. DuckDB cannot
 * widen that list later, so a query that needs a directory the idle databases of its tenant do
 * not allow gets a new database allowing the union. DuckDB's {@code threads} is frozen with the
 * rest, so a query asks for its thread count ({@link #acquire(String, Set, int)}) and gets a
 * database made with that many. A database serves one query at a time and only queries of the
 * tenant it was created for.
 *
 * <p>Between queries the query's connection (with its temporary objects) is closed and the
 * in-memory catalog {@code default} holding the query's views and tables is detached. Before a
 * database goes back to the pool it must show no attached catalog, table, view or schema other
 * than DuckDB's own; otherwise, or after any error, or when its threads' priority was lowered
 * for a long query ({@link Lease#lowerPriority}), it is closed instead. A query that finds no idle
 * database but one being reset that would serve it waits for that one (a few milliseconds) rather
 * than open another, at most {@link #RESET_WAIT_NANOS}. A database that passes
 * gets the next query's connection set up at once (a fresh, empty {@code default} attached and in
 * use), so the next query does not wait for it. At most
 * {@link #MAX_IDLE_PER_TENANT} databases per tenant and {@link #MAX_IDLE} in all stay idle, each
 * for at most {@link #IDLE_TTL_NANOS}; databases in use are not limited (as many as queries run).
 * Pools are made and closed by {@link DuckRuntime#queryDatabases}.
 *
 * <p>Each database also keeps one connection that materializes results instead of streaming
 * them ({@link Lease#materializing}), set up before its settings were frozen: DuckDB's JDBC
 * driver loses the message of a streamed statement that fails before its first batch, and
 * running the statement there reports it.
 */
public final class QueryDatabasePool implements AutoCloseable {
  /** The in-memory catalog a query's views live in; detached when the query ends. */
  public static final String QUERY_CATALOG = "default";
  /** Schema of the query catalog for the engine's own tables (deleted positions, DESCRIBE rows). */
  public static final String META_SCHEMA = "__se_meta";
  static final int MAX_IDLE_PER_TENANT = 2;
  static final int MAX_IDLE = 8;
  static final long IDLE_TTL_NANOS = 300_000_000_000L;
  /** Above this many known directories a tenant's databases allow only what the query needs. */
  static final int MAX_REMEMBERED_DIRECTORIES = 256;
  /** Kernel names of DuckDB's threads of a database: this prefix and a number (at most 15 bytes). */
  static final String THREAD_NAME_PREFIX = "se-qdb-";
  private static final AtomicLong THREAD_NAMES = new AtomicLong();

  /** One row per object a query could have left behind; one statement, one pass over each list. */
  private static final String LEFTOVERS_SQL = "SELECT count(*) FROM ("
      + "SELECT 1 FROM duckdb_databases() WHERE NOT internal AND database_name <> 'memory' "
      + "UNION ALL SELECT 1 FROM duckdb_tables() WHERE NOT internal "
      + "UNION ALL SELECT 1 FROM duckdb_views() WHERE NOT internal "
      + "UNION ALL SELECT 1 FROM duckdb_schemas() WHERE NOT internal "
      + "UNION ALL SELECT 1 FROM duckdb_sequences())";
  /**
   * How long a query that finds no idle database waits for one of its tenant being reset by the
   * query before (a few milliseconds) rather than opening another (tens of milliseconds).
   */
  static final long RESET_WAIT_NANOS = 100_000_000L;

  private final String memoryLimit;
  private final int threads;
  private final String spillLimit;
  private final Path spillRoot;
  private final Map<String, Deque<Database>> idle = new HashMap<>();
  private final Map<String, Set<String>> knownDirectories = new HashMap<>();
  /** Per tenant, the databases whose lease is closing (being reset); guarded by this. */
  private final Map<String, List<Database>> resetting = new HashMap<>();
  private int idleCount;
  private long created;
  /**
   * Runs in a lease's close once its database is marked as being reset, its query's connection
   * closed and its {@link Lease#afterQuery} actions run (tests pause the reset there).
   */
  volatile Runnable beforeReset = () -> { };
  private boolean closed;

  /** A pool whose databases spill as much as DuckDB's default allows. */
  QueryDatabasePool(String memoryLimit, int threads, Path spillRoot) {
    this(memoryLimit, threads, spillRoot, null);
  }

  /**
   * @param memoryLimit DuckDB {@code memory_limit} of one database, e.g. {@code 1GB}
   * @param threads DuckDB worker threads of a database unless its query asks for another count
   * @param spillRoot below it each database gets its own spill directory
   * @param spillLimit DuckDB {@code max_temp_directory_size} of one database, e.g. {@code 10GB}
   *     (null: DuckDB's default)
   */
  QueryDatabasePool(String memoryLimit, int threads, Path spillRoot, String spillLimit) {
    this.memoryLimit = memoryLimit;
    this.threads = threads;
    this.spillRoot = spillRoot;
    this.spillLimit = spillLimit;
  }

  /** A database of one tenant, locked to its allowed directories. */
  private final class Database {
    final String tenant;
    final DuckDBConnection admin;
    final Set<String> allowed;
    final Path spill;
    final int threads;
    /** Materializes results (see the class comment); made before the settings were frozen. */
    DuckDBConnection materializing;
    long idleSince;
    /** The connection the next query gets, set up while the database was idle (or null). */
    DuckDBConnection ready;
    /** While it is being reset: the query's thread waiting for it, or null (guarded by the pool). */
    Thread awaitedBy;
    /** The kernel name DuckDB's threads of this database carry (see {@link Lease#lowerPriority}). */
    final String threadName;
    /** Set once its threads' priority was lowered: it is closed after its query, never reused. */
    volatile boolean lowered;

    Database(String tenant, DuckDBConnection admin, Set<String> allowed, Path spill, int threads, String threadName) {
      this.tenant = tenant;
      this.admin = admin;
      this.allowed = allowed;
      this.spill = spill;
      this.threads = threads;
      this.threadName = threadName;
    }

    boolean serves(Set<String> directories, int threadCount) {
      return threads == threadCount && allowed.containsAll(directories);
    }

    void close() {
      try {
        if (ready != null) {
          ready.close();
        }
        if (materializing != null) {
          materializing.close();
        }
        admin.close();
      } catch (SQLException ignored) {
        // Closing a database that failed; nothing else holds it.
      }
      deleteRecursively(spill);
    }
  }

  /** A database lent to one query. Closing it resets the database and returns it to the pool. */
  public final class Lease implements AutoCloseable {
    private final Database database;
    private final DuckDBConnection connection;
    private final List<Runnable> afterQuery = new ArrayList<>();
    private boolean released;

    private Lease(Database database, DuckDBConnection connection) {
      this.database = database;
      this.connection = connection;
    }

    /**
     * The query's own connection, with an empty in-memory catalog {@value #QUERY_CATALOG} attached
     * and in use and its schema {@value #META_SCHEMA} created; its temporary objects end with it.
     */
    public DuckDBConnection connection() {
      return connection;
    }

    /**
     * The database's connection that materializes results rather than streaming them, in use of
     * {@value #QUERY_CATALOG}, for one statement at a time; give it back with
     * {@link #endMaterializing}. It sees the query's views, not its temporary objects.
     */
    public DuckDBConnection materializing() throws SQLException {
      execute(database.materializing, "USE \"" + QUERY_CATALOG + "\"");
      return database.materializing;
    }

    /**
     * Lowers the scheduling priority of DuckDB's own threads of this database to {@code nice}
     * (see {@link ThreadPriority}): a long query's worker threads then yield to other work. The
     * database is closed rather than reused when the lease ends, since the OS does not let the
     * process raise their priority again. False when not all were lowered (not Linux, no
     * {@code renice}, or a thread ended meanwhile).
     */
    public boolean lowerPriority(int nice) {
      database.lowered = true;
      return ThreadPriority.lower(ThreadPriority.threadsNamed(database.threadName), nice);
    }

    /**
     * Runs {@code action} in {@link #close}, once the query's connection is closed and before the
     * database is reset for the next query: the query's DuckDB work is over then, and what the
     * reset takes (a few milliseconds) is the pool's, not the query's. So a query's admission
     * (its share of the process's DuckDB threads) can end there, and a client's next query,
     * sent the moment it has this one's result, starts with its full share. Actions run in
     * order, once, also when the close fails; an action that throws does not stop the others.
     */
    public synchronized void afterQuery(Runnable action) {
      afterQuery.add(action);
    }

    /** Ends a use of {@link #materializing}, so the query catalog can be detached. */
    public void endMaterializing() {
      try {
        execute(database.materializing, "USE memory");
      } catch (SQLException e) {
        // The lease's close finds the database unusable or not clean and closes it.
      }
    }

    @Override
    public void close() {
      if (released) {
        return;
      }
      released = true;
      resetting(database);
      boolean clean;
      try {
        try {
          connection.close();
        } finally {
          runAfterQuery();
        }
        beforeReset.run();
        clean = detachQueryCatalog(database.admin) == 0;
        if (clean && !database.lowered) {
          // Set up the next query's connection now, after this query's client has its answer.
          database.ready = queryConnection(database.admin);
        }
      } catch (SQLException | RuntimeException e) {
        clean = false;
      }
      release(database, clean);
    }

    private void runAfterQuery() {
      List<Runnable> actions;
      synchronized (this) {
        actions = List.copyOf(afterQuery);
        afterQuery.clear();
      }
      for (Runnable action : actions) {
        try {
          action.run();
        } catch (RuntimeException e) {
          // One failed action (a permit already given back) must not keep the others from running.
        }
      }
    }
  }

  /**
   * A database of {@code tenant} whose reads are allowed below every directory of
   * {@code directories} (absolute paths ending in {@code /}), with a fresh connection on it and
   * the pool's DuckDB threads.
   */
  public Lease acquire(String tenant, Set<String> directories) {
    return acquire(tenant, directories, threads);
  }

  /**
   * As {@link #acquire(String, Set)}, on a database with {@code threadCount} DuckDB threads
   * (at least 1): its queries run on the calling thread and {@code threadCount - 1} of DuckDB's.
   */
  public Lease acquire(String tenant, Set<String> directories, int threadCount) {
    if (threadCount < 1) {
      throw new IllegalArgumentException("a query database needs at least 1 thread, not " + threadCount);
    }
    Database reused = null;
    List<Database> stale = new ArrayList<>();
    Set<String> allowed;
    synchronized (this) {
      if (closed) {
        throw SeException.unavailable("the query engine is shutting down", null);
      }
      expire(System.nanoTime(), stale);
      awaitReset(tenant, directories, threadCount);
      if (closed) {
        throw SeException.unavailable("the query engine is shutting down", null);
      }
      Deque<Database> queue = idle.get(tenant);
      reused = idleServing(tenant, directories, threadCount);
      if (reused != null) {
        queue.remove(reused);
        idleCount--;
      }
      Set<String> known = knownDirectories.computeIfAbsent(tenant, k -> new LinkedHashSet<>());
      if (!known.containsAll(directories)) {
        known.addAll(directories);
        if (known.size() > MAX_REMEMBERED_DIRECTORIES) {
          known.clear();
          known.addAll(directories);
        }
        // Idle databases of the tenant allow too little now; newer ones will allow the union.
        if (queue != null) {
          idleCount -= queue.size();
          stale.addAll(queue);
          queue.clear();
        }
      }
      allowed = Set.copyOf(known);
    }
    stale.forEach(Database::close);
    Database database = reused != null ? reused : open(tenant, allowed, threadCount);
    try {
      DuckDBConnection connection = database.ready != null ? database.ready : queryConnection(database.admin);
      database.ready = null;
      return new Lease(database, connection);
    } catch (SQLException e) {
      database.close();
      throw SeException.internal("cannot start the query engine", e);
    }
  }

  /** Databases created so far (for tests). */
  public synchronized long created() {
    return created;
  }

  /** The number in the kernel thread name of the newest database's DuckDB threads (for tests). */
  static long threadNames() {
    return THREAD_NAMES.get();
  }

  /** Databases idle in the pool (for tests). */
  public synchronized int idleCount() {
    return idleCount;
  }

  /**
   * While no idle database of {@code tenant} serves the request but one being reset would, and
   * no other query waits for that one, waits for it (at most {@link #RESET_WAIT_NANOS}); the
   * caller then takes an idle database as usual, or opens one. Holds this pool's lock.
   */
  private void awaitReset(String tenant, Set<String> directories, int threadCount) {
    Database awaited = null;
    long deadline = System.nanoTime() + RESET_WAIT_NANOS;
    try {
      while (!closed && idleServing(tenant, directories, threadCount) == null) {
        List<Database> candidates = resetting.getOrDefault(tenant, List.of());
        if (awaited == null || !candidates.contains(awaited)) {
          awaited = null;
          for (Database candidate : candidates) {
            if (candidate.awaitedBy == null && candidate.serves(directories, threadCount)) {
              awaited = candidate;
              break;
            }
          }
          if (awaited == null) {
            return;
          }
          awaited.awaitedBy = Thread.currentThread();
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    } finally {
      if (awaited != null && awaited.awaitedBy == Thread.currentThread()) {
        awaited.awaitedBy = null;
      }
    }
  }

  /** The first idle database of {@code tenant} that serves the request (left idle), or null. */
  private Database idleServing(String tenant, Set<String> directories, int threadCount) {
    Deque<Database> queue = idle.get(tenant);
    if (queue != null) {
      for (Database candidate : queue) {
        if (candidate.serves(directories, threadCount)) {
          return candidate;
        }
      }
    }
    return null;
  }

  /** Marks {@code database} as being reset by its lease's close (see {@link #awaitReset}). */
  private synchronized void resetting(Database database) {
    resetting.computeIfAbsent(database.tenant, k -> new ArrayList<>()).add(database);
  }

  private void release(Database database, boolean clean) {
    List<Database> toClose = new ArrayList<>();
    synchronized (this) {
      List<Database> reset = resetting.get(database.tenant);
      if (reset != null) {
        reset.remove(database);
        if (reset.isEmpty()) {
          resetting.remove(database.tenant);
        }
      }
      database.awaitedBy = null;
      notifyAll();
      if (!clean || closed || database.lowered
          || !knownDirectories.getOrDefault(database.tenant, Set.of()).containsAll(database.allowed)) {
        toClose.add(database);
      } else {
        database.idleSince = System.nanoTime();
        Deque<Database> queue = idle.computeIfAbsent(database.tenant, k -> new ArrayDeque<>());
        queue.addFirst(database);
        idleCount++;
        while (queue.size() > MAX_IDLE_PER_TENANT) {
          toClose.add(queue.removeLast());
          idleCount--;
        }
        while (idleCount > MAX_IDLE) {
          toClose.add(removeOldestIdle());
        }
      }
    }
    toClose.forEach(Database::close);
  }

  private Database removeOldestIdle() {
    Deque<Database> oldestQueue = null;
    for (Deque<Database> queue : idle.values()) {
      if (!queue.isEmpty() && (oldestQueue == null || queue.peekLast().idleSince < oldestQueue.peekLast().idleSince)) {
        oldestQueue = queue;
      }
    }
    idleCount--;
    return oldestQueue.removeLast();
  }

  private void expire(long now, List<Database> out) {
    for (Deque<Database> queue : idle.values()) {
      while (!queue.isEmpty() && now - queue.peekLast().idleSince > IDLE_TTL_NANOS) {
        out.add(queue.removeLast());
        idleCount--;
      }
    }
  }

  private Database open(String tenant, Set<String> allowed, int threadCount) {
    Properties properties = new Properties();
    properties.setProperty("autoload_known_extensions", "false");
    properties.setProperty("autoinstall_known_extensions", "false");
    properties.setProperty("allow_community_extensions", "false");
    properties.setProperty("jdbc_stream_results", "true");
    Path spill = spillRoot.resolve(UUID.randomUUID().toString());
    DuckDBConnection admin;
    try {
      // DuckDB creates only the last level of its temp directory when a query first spills: on a
      // fresh data directory the spill root does not exist yet.
      Files.createDirectories(spill);
    } catch (IOException e) {
      throw SeException.internal("cannot create the query spill directory", e);
    }
    // DuckDB's threads start while the database opens and when its thread count is set: they
    // inherit the kernel name of the thread that starts them, so a name of this database's own
    // finds them later (Lease#lowerPriority). The calling thread's own name is restored below.
    Thread caller = Thread.currentThread();
    String callerName = caller.getName();
    String threadName = THREAD_NAME_PREFIX + Long.toString(THREAD_NAMES.incrementAndGet(), 36);
    caller.setName(threadName);
    Database database;
    try {
      try {
        admin = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", properties);
      } catch (SQLException e) {
        throw SeException.internal("cannot start the query engine", e);
      }
      database = new Database(tenant, admin, allowed, spill, threadCount, threadName);
      configure(database);
    } finally {
      caller.setName(callerName);
    }
    synchronized (this) {
      created++;
    }
    return database;
  }

  /** Sets up and locks a new database (see the class comment). */
  private void configure(Database database) {
    DuckDBConnection admin = database.admin;
    Path spill = database.spill;
    try {
      StringJoiner directories = new StringJoiner(", ", "[", "]");
      database.allowed.forEach(directory -> directories.add(SqlQuoting.literal(directory)));
      directories.add(SqlQuoting.literal(spill + "/"));
      execute(admin, "SET allowed_directories = " + directories);
      execute(admin, "SET temp_directory = " + SqlQuoting.literal(spill.toString()));
      // Nothing of the server's home: DuckDB defaults these to directories below it.
      execute(admin, "SET home_directory = " + SqlQuoting.literal(spill.toString()));
      execute(admin, "SET secret_directory = " + SqlQuoting.literal(spill.resolve("secrets").toString()));
      execute(admin, "SET allow_persistent_secrets = false");
      execute(admin, "SET allow_community_extensions = false");
      execute(admin, "SET memory_limit = " + SqlQuoting.literal(memoryLimit));
      if (spillLimit != null) {
        execute(admin, "SET max_temp_directory_size = " + SqlQuoting.literal(spillLimit));
      }
      execute(admin, "SET threads = " + database.threads);
      execute(admin, "SET TimeZone = 'UTC'");
      // Iceberg data files never change once written: their Parquet footers are read once per
      // database, not once per bind and scan of every query.
      execute(admin, "SET parquet_metadata_cache = true");
      execute(admin, "SET autoload_known_extensions = false");
      execute(admin, "SET autoinstall_known_extensions = false");
      execute(admin, "SET enable_external_access = false");
      database.materializing = (DuckDBConnection) admin.duplicate();
      execute(database.materializing, "SET jdbc_stream_results = false");
      execute(admin, "SET lock_configuration = true");
    } catch (SQLException e) {
      database.close();
      throw SeException.internal("cannot start the query engine", e);
    }
  }

  /** A new connection on {@code admin}'s database with the query catalog attached and in use. */
  private static DuckDBConnection queryConnection(DuckDBConnection admin) throws SQLException {
    DuckDBConnection connection = (DuckDBConnection) admin.duplicate();
    try {
      // One call: DuckDB's fixed cost per call is a third of a millisecond here.
      execute(connection, "ATTACH ':memory:' AS \"" + QUERY_CATALOG + "\"; USE \"" + QUERY_CATALOG + "\"; "
          + "CREATE SCHEMA " + META_SCHEMA);
      return connection;
    } catch (SQLException e) {
      connection.close();
      throw e;
    }
  }

  /**
   * Detaches the query catalog (if attached) and counts what is left beyond a fresh database's
   * own objects ({@link #LEFTOVERS_SQL}), in one call.
   */
  private static long detachQueryCatalog(DuckDBConnection admin) throws SQLException {
    try (Statement statement = admin.createStatement();
        ResultSet rows = statement.executeQuery("DETACH DATABASE IF EXISTS \"" + QUERY_CATALOG + "\"; " + LEFTOVERS_SQL)) {
      rows.next();
      return rows.getLong(1);
    }
  }

  private static void execute(DuckDBConnection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private static void deleteRecursively(Path directory) {
    if (!Files.exists(directory)) {
      return;
    }
    try (Stream<Path> files = Files.walk(directory)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException ignored) {
      // Spill files are scratch data; a failed cleanup only costs disk until restart.
    }
  }

  @Override
  public void close() {
    List<Database> all = new ArrayList<>();
    synchronized (this) {
      closed = true;
      notifyAll();
      idle.values().forEach(all::addAll);
      idle.clear();
      idleCount = 0;
    }
    all.forEach(Database::close);
  }
}

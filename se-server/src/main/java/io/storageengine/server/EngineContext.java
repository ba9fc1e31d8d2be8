package io.storageengine.server;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.common.Threads;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.reconcile.ReconcileHooks;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TableGate;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.server.observability.ServerObservability;
import io.storageengine.wal.ObjectStoreWal;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one engine process shares, built once by the composition root and handed to the
 * role it runs ({@link EngineServer}, {@link WorkerProcess}, {@link ReconcileRunner},
 * {@link BrokerProcess}, {@code LoadBalancer}): telemetry, cluster storage (always traced), the
 * root allocator (limited) and one named child allocator per subsystem, the thread factory of
 * every pool, authentication and authorization ({@link Access}, from {@link AuthConfig} with the
 * default mode of the {@linkplain Builder#launch launch}), the WAL with this process's writer id, the tombstone cache, and the reconciler and
 * maintainers built from them. Nothing of it lives in a static field, so two engines in one JVM
 * share nothing.
 *
 * <p>Ownership: the context closes what it built and what a role handed to {@link #own}, in the
 * reverse order of both, exactly once. A throwable escaping one of its threads takes the
 * fatal-error path ({@link FatalErrors}): one ERROR line, the context closed, the process exited
 * with a non-zero status.
 */
public final class EngineContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineContext.class);

  /** The subsystems with a child allocator of their own. */
  public enum Subsystem {
    /** Flight's incoming messages and ingestion streams (each a child of this one). */
    INGEST,
    /** Flight SQL results and query execution. */
    QUERY,
    /** Reconcile passes (each a child of this one). */
    RECONCILE,
    /** Compactions of table maintenance. */
    MAINTENANCE
  }

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final ServerConfig config;
  private final FatalErrors fatal;
  private final ServerObservability observability;
  private final ClusterStorage storage;
  private final BufferAllocator root;
  private final BufferAllocator[] allocators = new BufferAllocator[Subsystem.values().length];
  private final ObjectStoreWal wal;
  private final DuckRuntime duckdb;
  private final TombstoneCache tombstones;
  private final Reconciler reconciler;
  private final Access access;
  private final ClusterToken clusterToken;
  private final TlsConfig tls;
  private boolean closed;

  private EngineContext(Builder builder) {
    this.fatal = new FatalErrors(builder.exit);
    boolean ok = false;
    try {
      // First: a role with a missing or mismatched certificate or key refuses to start.
      this.tls = builder.config.tls();
      this.observability = own(ServerObservability.start(builder.telemetry));
      // se dev generates the file store's key on first start; the other roles need one configured.
      this.config = builder.devKey ? ClusterStorage.withDevKey(builder.config) : builder.config;
      this.storage = own(ClusterStorage.open(config, builder.store, observability.catalogListener(),
          observability.telemetry(), raw -> observability.traced(raw, "cluster")));
      AuthConfig auth = config.auth(builder.launch);
      // Every role is refused mode none on an address others can reach (workers only check the
      // configured address; they do not listen).
      auth.checkListenAddress(builder.launch, config.serverAddress());
      this.access = Access.open(auth, storage.secrets());
      this.clusterToken = new ClusterToken(auth.mode(), AuthConfig.clusterToken(config.source()));
      this.root = own(new RootAllocator(builder.memoryLimit));
      observability.watchAllocator("root", root);
      for (Subsystem subsystem : Subsystem.values()) {
        String name = subsystem.name().toLowerCase(java.util.Locale.ROOT);
        BufferAllocator child = own(root.newChildAllocator(name, 0, builder.memoryLimit));
        observability.watchAllocator(name, child);
        allocators[subsystem.ordinal()] = child;
      }
      // One DuckDB runtime for reconcile, maintenance and queries: they share its databases and
      // its copies of remote data files.
      long fileCacheBytes = config.value(DuckRuntime.FILE_CACHE_SIZE);
      long sharedMemoryBytes = config.value(DuckRuntime.SHARED_MEMORY_LIMIT);
      this.duckdb = own(builder.duckdbDirectory == null
          ? DuckRuntime.temporary(fileCacheBytes, sharedMemoryBytes)
          : DuckRuntime.open(builder.duckdbDirectory, fileCacheBytes, sharedMemoryBytes));
      this.wal = new ObjectStoreWal(storage.store(), builder.writerPrefix + "-" + ProcessHandle.current().pid()
          + "-" + UUID.randomUUID().toString().substring(0, 8), observability.telemetry());
      this.tombstones = own(new TombstoneCache(TombstoneCache.DEFAULT_MAX_ENTRIES, threads("se-tombstone-io")));
      this.reconciler = new Reconciler(storage.registry(), wal, storage.store(), tombstones,
          allocator(Subsystem.RECONCILE), duckdb, config.reconcile(), ReconcileHooks.NONE,
          observability.telemetry());
      fatal.stopWith(this::close);
      ok = true;
    } finally {
      if (!ok) {
        close();
      }
    }
  }

  /** A context for {@code config}; see {@link Builder} for what can be changed. */
  public static Builder builder(ServerConfig config) {
    return new Builder(config);
  }

  public ServerConfig config() {
    return config;
  }

  public ServerObservability observability() {
    return observability;
  }

  /** Cluster storage, traced: every call is a span and in the metrics. */
  public ObjectStore store() {
    return storage.store();
  }

  public TenantCatalogRegistry registry() {
    return storage.registry();
  }

  public ClusterStorage storage() {
    return storage;
  }

  /** Who is calling and what they may touch: the one authenticator and authorizer of the process. */
  public Access access() {
    return access;
  }

  /** The token of the broker API, which servers and workers send to it. */
  public ClusterToken clusterToken() {
    return clusterToken;
  }

  /** The listener's certificate (if any) and what this process trusts when it calls other roles. */
  public TlsConfig tls() {
    return tls;
  }

  /** The child allocator of {@code subsystem}; closed by the context, after everything a role owns. */
  public BufferAllocator allocator(Subsystem subsystem) {
    return allocators[subsystem.ordinal()];
  }

  /** The WAL, writing as this process's one writer id. */
  public ObjectStoreWal wal() {
    return wal;
  }

  /** The DuckDB runtime: databases, local copies of remote data files, Parquet footers. */
  public DuckRuntime duckdb() {
    return duckdb;
  }

  public TombstoneCache tombstones() {
    return tombstones;
  }

  /** The process's reconciler (thread-safe, one for every loop and task). */
  public Reconciler reconciler() {
    return reconciler;
  }

  /** A maintainer with the default policy, no hooks and no gate ({@code se maintain}, workers). */
  public Maintainer maintainer() {
    return maintainer(MaintenanceHooks.NONE, TableGate.NONE);
  }

  /** A maintainer whose compactions run through {@code gate} (the reconcile loop of {@code se dev}). */
  public Maintainer maintainer(MaintenanceHooks hooks, TableGate gate) {
    return new Maintainer(storage.registry(), wal, storage.store(), tombstones, allocator(Subsystem.MAINTENANCE),
        duckdb, config.reconcile(), config.maintenance(), hooks, gate);
  }

  /**
   * Named daemon threads ({@code name-1}, {@code name-2} ...) whose uncaught throwables take the
   * fatal-error path.
   */
  public ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      t.setUncaughtExceptionHandler(fatal);
      return t;
    };
  }

  /**
   * A pool of {@link #threads} growing as needed, idle threads ending, owned by the context. An
   * {@code Error} thrown by a task (which its future would otherwise keep) takes the fatal-error
   * path; exceptions stay the submitter's.
   */
  public ExecutorService cachedPool(String name) {
    ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), threads(name)) {
      @Override
      protected void afterExecute(Runnable task, Throwable thrown) {
        // The pool's threads are this context's, so their handler is the fatal-error path.
        Threads.reportError(task, thrown);
      }
    };
    return own(pool);
  }

  /** As {@link #cachedPool}, one thread for delayed and periodic tasks. */
  public ScheduledExecutorService scheduler(String name) {
    ScheduledThreadPoolExecutor pool = Threads.scheduledPool(1, threads(name));
    pool.setRemoveOnCancelPolicy(true);
    return own(pool);
  }

  /**
   * Makes the context close {@code resource} (an {@link AutoCloseable} or an
   * {@link ExecutorService}) before everything registered so far. Returns it.
   */
  public synchronized <T> T own(T resource) {
    if (resource instanceof AutoCloseable c) {
      resources.push(c);
    } else if (resource instanceof ExecutorService es) {
      resources.push(es::shutdownNow);
    }
    return resource;
  }

  /** True once {@link #close} ran (by the role, a shutdown hook or the fatal-error path). */
  public synchronized boolean isClosed() {
    return closed;
  }

  /** Closes everything owned, last registered first; later calls do nothing. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    while (true) {
      AutoCloseable c;
      synchronized (this) {
        if (resources.isEmpty()) {
          return;
        }
        c = resources.pop();
      }
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("error while shutting down {}", c, e);
      }
    }
  }

  /** What differs between processes; everything else comes from the config. */
  public static final class Builder {
    private final ServerConfig config;
    private ObjectStore store;
    private boolean devKey;
    private String writerPrefix = "se";
    private long memoryLimit = defaultMemoryLimit();
    private IntConsumer exit = System::exit;
    private Path duckdbDirectory;
    private Telemetry telemetry;
    private AuthConfig.Launch launch = AuthConfig.Launch.START;

    private Builder(ServerConfig config) {
      this.config = config;
    }

    /** Cluster storage to use instead of the configured one (tests); not closed by the context. */
    public Builder store(ObjectStore store) {
      this.store = store;
      return this;
    }

    /** {@code se dev}: generate the file secret store's key into the data dir when none is configured. */
    public Builder devKey(boolean devKey) {
      this.devKey = devKey;
      return this;
    }

    /**
     * The engine's telemetry (tests); not closed by the context. Default: one built from the
     * environment, owned and closed by the context.
     */
    public Builder telemetry(Telemetry telemetry) {
      this.telemetry = telemetry;
      return this;
    }

    /** The WAL writer id starts with this ({@code se}, {@code se-worker}, {@code se-reconcile}). */
    public Builder writerPrefix(String writerPrefix) {
      this.writerPrefix = writerPrefix;
      return this;
    }

    /** Arrow memory of the whole process, in bytes (default: the JVM's direct memory limit). */
    public Builder memoryLimit(long bytes) {
      if (bytes <= 0) {
        throw new IllegalArgumentException("memory limit must be positive, got " + bytes);
      }
      this.memoryLimit = bytes;
      return this;
    }

    /**
     * Where the DuckDB runtime keeps data file copies and spill files, a directory it has to itself
     * (servers: under the data dir, so copies survive nothing but stay on a known disk). Default: a
     * new temporary directory, deleted on close.
     */
    public Builder duckdbDirectory(Path directory) {
      this.duckdbDirectory = directory;
      return this;
    }

    /**
     * How the process was launched: {@code se dev} defaults to {@code --auth.mode none}, a cluster
     * role ({@code se start}, the default) to {@code tokens}.
     */
    public Builder launch(AuthConfig.Launch launch) {
      this.launch = java.util.Objects.requireNonNull(launch, "launch");
      return this;
    }

    /** How the fatal-error path ends the process (default {@code System::exit}; tests observe it). */
    public Builder exit(IntConsumer exit) {
      this.exit = exit;
      return this;
    }

    /** Opens everything; on a failure closes what was opened and throws. */
    public EngineContext build() {
      return new EngineContext(this);
    }
  }

  /**
   * What direct memory may grow to in this JVM: {@code -XX:MaxDirectMemorySize} when set, else
   * the heap maximum (the JVM's own default for it). Arrow's buffers are direct memory, so past
   * this limit an allocation fails as Arrow's {@code OutOfMemoryException} in the subsystem that
   * asked instead of as a process-wide direct-memory error.
   */
  static long defaultMemoryLimit() {
    try {
      String value = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
          .getVMOption("MaxDirectMemorySize").getValue();
      long configured = Long.parseLong(value);
      if (configured > 0) {
        return configured;
      }
    } catch (RuntimeException e) {
      LOG.debug("MaxDirectMemorySize unknown, using the heap maximum: {}", e.toString());
    }
    return Runtime.getRuntime().maxMemory();
  }
}

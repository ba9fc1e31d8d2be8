package io.storageengine.server;

import com.linecorp.armeria.server.HttpService;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.ingest.IngestService;
import io.storageengine.query.ContextPropagatingExecutorService;
import io.storageengine.query.QueryConfig;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.ReconcileLoop;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenanceLoop;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.server.lb.ServerRegistration;
import io.storageengine.server.observability.ServerObservability;
import io.storageengine.wal.ObjectStoreWal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.UUID;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds cluster storage, the secret store, the tenant registry, the WAL,
 * ingestion, queries and (in {@link Role#DEV}) the reconcile loop, starts the one listener, and
 * shuts everything down in reverse order.
 */
public final class EngineServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineServer.class);

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final ObjectStore store;
  private final TenantCatalogRegistry registry;
  private final Listener listener;
  private final IngestService ingest;
  private final ReconcileLoop reconcileLoop;

  private EngineServer(ServerConfig config, Role role, ObjectStore injectedStore) {
    boolean ok = false;
    try {
      ServerObservability observability = own(ServerObservability.start());
      // se dev generates the file store's key on first start; the other roles need one configured.
      ClusterStorage storage = own(ClusterStorage.open(role == Role.DEV ? ClusterStorage.withDevKey(config) : config,
          injectedStore, observability.catalogListener(),
          raw -> observability.traced(raw, "cluster")));
      this.store = storage.store();
      this.registry = storage.registry();
      if (role == Role.DEV) {
        ensureDevCatalog(config.get(ConfigKey.DEFAULT_CATALOG), storage.embeddedRoot().isPresent());
      }
      BufferAllocator allocator = own(new RootAllocator());
      observability.watchAllocator("root", allocator);
      // One DuckDB runtime for reconcile and queries; its data file copies stay where queries kept them.
      DuckRuntime duckdb = own(DuckRuntime.open(config.dataDir().resolve("query-cache"),
          DuckRuntime.DEFAULT_FILE_CACHE_BYTES));
      ObjectStoreWal wal = new ObjectStoreWal(store, writerId());
      ReconcileLoop loop = null;
      if (role == Role.DEV) {
        Reconciler reconciler = new Reconciler(registry, wal, store, allocator, duckdb, ReconcileOptions.defaults());
        loop = own(new ReconcileLoop(reconciler, wal, null, config.duration(ConfigKey.RECONCILE_INTERVAL),
            EngineServer::logResult).withStatusStore(new ReconcileStatusStore(store)).start());
        Maintainer maintainer = new Maintainer(registry, wal, store, allocator, duckdb, ReconcileOptions.defaults(),
            MaintenancePolicy.defaults(), MaintenanceHooks.NONE, loop);
        own(new MaintenanceLoop(maintainer, null, config.duration(ConfigKey.MAINTENANCE_INTERVAL),
            EngineServer::logMaintenance).start());
      }
      this.reconcileLoop = loop;
      IngestConfig ingestConfig = IngestConfig.defaults()
          .withFlushInterval(config.duration(ConfigKey.INGEST_FLUSH_INTERVAL))
          .withFlushBytes(config.bytes(ConfigKey.INGEST_FLUSH_BYTES))
          .withGlobalBytes(config.bytes(ConfigKey.INGEST_MEMORY_LIMIT));
      ReconcileLoop triggerTarget = loop;
      ReconcileScheduler scheduler = role == Role.SERVER ? own(new ReconcileScheduler(store)) : null;
      this.ingest = own(new IngestService(allocator, registry, wal, ingestConfig,
          (table, seq, rows, bytes) -> {
            if (triggerTarget != null) {
              triggerTarget.trigger(table);
            } else {
              scheduler.segmentWritten(table);
            }
          }));
      ExecutorService flightExecutor = own(namedPool("se-flight"));
      EngineFlightProducer producer = own(new EngineFlightProducer(allocator, registry, duckdb, QueryConfig.defaults(), ingest));
      Map<String, HttpService> routes = new LinkedHashMap<>();
      ReconcileStatusStore reconcileStatuses = new ReconcileStatusStore(store);
      routes.put("/health", new HealthHttpService(reconcileStatuses));
      routes.put("/metrics", observability.metricsService());
      CatalogHttpService catalogs = new CatalogHttpService(registry, reconcileStatuses);
      routes.put("/catalogs", catalogs);
      routes.put("prefix:/catalogs/", catalogs);
      this.listener = own(Listener.start(config.serverAddress(), routes, allocator, producer,
          observability.propagating(new ContextPropagatingExecutorService(flightExecutor)),
          List.of(ingest.doPutGuard(), new QueryMetadataInterceptor(), observability.flightInterceptor())));
      if (role == Role.SERVER) {
        // Last, so a load balancer never discovers a server that is not listening yet.
        own(ServerRegistration.start(store, advertisedAddress(config, listener.port()), Clock.systemUTC()));
      }
      ok = true;
    } finally {
      if (!ok) {
        close();
      }
    }
  }

  /** Starts a process of the given role. */
  public static EngineServer start(ServerConfig config, Role role) {
    return new EngineServer(config, role, null);
  }

  /** Starts with a given cluster store (tests: memory or fault-injecting stores). */
  public static EngineServer start(ServerConfig config, Role role, ObjectStore store) {
    return new EngineServer(config, role, store);
  }

  public int port() {
    return listener.port();
  }

  public TenantCatalogRegistry registry() {
    return registry;
  }

  public ObjectStore store() {
    return store;
  }

  /** The reconcile loop of a {@link Role#DEV} process; empty for {@link Role#SERVER}. */
  public Optional<ReconcileLoop> reconcileLoop() {
    return Optional.ofNullable(reconcileLoop);
  }

  /** Where load balancers reach this server: the configured host (this machine's name for a wildcard). */
  static String advertisedAddress(ServerConfig config, int port) {
    InetSocketAddress address = config.serverAddress();
    String host = address.getHostString();
    if (address.getAddress() != null && address.getAddress().isAnyLocalAddress()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        throw new SeException(ErrorCode.INVALID_ARGUMENT, "--server.address " + host
            + " listens on every interface and this machine has no resolvable name to advertise; "
            + "give the address load balancers should use");
      }
    }
    return host + ":" + port;
  }

  private static String writerId() {
    return "se-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static void logResult(ReconcileResult result) {
    if (result.outcome() == ReconcileResult.Outcome.FAILED) {
      // The loop logs a table's change to failing once at WARN; every failed pass only here.
      LOG.debug("reconcile {}", result);
    } else if (result.outcome() == ReconcileResult.Outcome.COMMITTED) {
      LOG.info("reconcile {}", result);
    } else {
      LOG.debug("reconcile {}", result);
    }
  }

  private static void logMaintenance(MaintenanceResult result) {
    if (result.outcome() == MaintenanceResult.Outcome.FAILED || result.outcome() == MaintenanceResult.Outcome.PARTIAL) {
      LOG.warn("maintenance {}", result);
    } else if (result.didWork()) {
      LOG.info("maintenance {}", result);
    }
  }

  private void ensureDevCatalog(String id, boolean haveEmbeddedRoot) {
    if (!haveEmbeddedRoot) {
      LOG.info("no embedded catalog '{}': the embedded catalog needs the fs object store", id);
      return;
    }
    try {
      registry.config(id);
    } catch (SeException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
      registry.create(id, CatalogConfig.embedded());
      LOG.info("created the embedded catalog '{}'", id);
    }
  }

  static ExecutorService namedPool(String name) {
    AtomicInteger n = new AtomicInteger();
    return Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  private <T> T own(T resource) {
    if (resource instanceof AutoCloseable c) {
      resources.push(c);
    } else if (resource instanceof ExecutorService es) {
      resources.push(es::shutdownNow);
    }
    return resource;
  }

  @Override
  public void close() {
    while (!resources.isEmpty()) {
      AutoCloseable c = resources.pop();
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("error while shutting down {}", c, e);
      }
    }
  }
}

package io.storageengine.server;

import com.linecorp.armeria.server.HttpService;
import io.storageengine.auth.Action;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.ingest.IngestService;
import io.storageengine.query.ContextPropagatingExecutorService;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.ReconcileLoop;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenanceLoop;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.server.lb.ServerRegistration;
import io.storageengine.server.observability.ServerObservability;
import io.storageengine.wal.ObjectStoreWal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of {@code se dev} and {@code se start server}: on the process's
 * {@link EngineContext} (cluster storage, the secret store, the tenant registry, the WAL,
 * allocators, threads) builds ingestion, queries and (in {@link Role#DEV}) the reconcile and
 * maintenance loops, starts the one listener, and shuts everything down in reverse order.
 */
public final class EngineServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineServer.class);

  private final EngineContext context;
  private final ObjectStore store;
  private final TenantCatalogRegistry registry;
  private final Listener listener;
  private final IngestService ingest;
  private final ReconcileLoop reconcileLoop;
  private final List<String> routes;

  private EngineServer(EngineContext context, Role role) {
    this.context = context;
    boolean ok = false;
    try {
      ServerConfig config = context.config();
      ServerObservability observability = context.observability();
      Access access = context.access();
      this.store = context.store();
      this.registry = context.registry();
      if (role == Role.DEV) {
        ensureDevCatalog(config.get(ConfigKey.DEFAULT_CATALOG), context.storage().embeddedRoot().isPresent());
      }
      ObjectStoreWal wal = context.wal();
      ReconcileLoop loop = null;
      if (role == Role.DEV) {
        // Started once ingestion exists: its passes defer to bursts of stream admission.
        loop = context.own(new ReconcileLoop(context.reconciler(), wal, null,
            config.duration(ConfigKey.RECONCILE_INTERVAL), EngineServer::logResult, context.threads("se-reconcile"))
            .withStatusStore(new ReconcileStatusStore(store)));
      }
      this.reconcileLoop = loop;
      IngestConfig ingestConfig = config.ingest();
      ReconcileLoop triggerTarget = loop;
      ReconcileScheduler scheduler = role == Role.SERVER
          ? context.own(new ReconcileScheduler(store, context.scheduler("se-reconcile-scheduler"),
          context.clusterToken().value(), context.tls().trust())) : null;
      BufferAllocator ingestAllocator = context.allocator(EngineContext.Subsystem.INGEST);
      // Inside a Flight call, ingestion looks a catalog up only for a caller who may write to it.
      this.ingest = context.own(new IngestService(ingestAllocator, access.forCallers(registry, Action.WRITE), wal,
          ingestConfig,
          (table, seq, rows, bytes) -> {
            if (triggerTarget != null) {
              triggerTarget.trigger(table);
            } else {
              scheduler.segmentWritten(table);
            }
          }, context.threads("se-ingest-flush"), observability.telemetry()));
      if (loop != null) {
        loop.withAdmissionPressure(ingest.admissionPressure(),
            config.duration(ConfigKey.RECONCILE_ADMISSION_DEFERRAL)).start();
        context.own(new MaintenanceLoop(context.maintainer(MaintenanceHooks.NONE, loop), null,
            config.duration(ConfigKey.MAINTENANCE_INTERVAL), EngineServer::logMaintenance,
            context.threads("se-maintenance")).start());
      }
      ExecutorService flightExecutor = context.cachedPool("se-flight");
      EngineFlightProducer producer = context.own(new EngineFlightProducer(
          context.allocator(EngineContext.Subsystem.QUERY), registry, context.duckdb(), config.query(), ingest,
          context.threads("se-query"), access, new WalPendingSegments(wal, store), wal,
          new WalTailRows(context.duckdb(), context.allocator(EngineContext.Subsystem.QUERY), store,
              context.tombstones(), config.reconcile().withDuckdbThreads(config.query().duckdbThreads()))
              .sharingKeyIndexesOf(context.reconciler())));
      Map<String, HttpService> routes = new LinkedHashMap<>();
      ReconcileStatusStore reconcileStatuses = new ReconcileStatusStore(store);
      routes.put("/health", new HealthHttpService(reconcileStatuses, context.cachedPool("se-health")));
      // Metrics name catalogs and tables: cluster admins only.
      routes.put("/metrics", access.adminOnly(observability.metricsService()));
      CatalogHttpService catalogs = new CatalogHttpService(registry, reconcileStatuses, store, access,
          config.integer(ConfigKey.REST_PLAN_PAGE_SIZE));
      routes.put("/catalogs", catalogs);
      routes.put("prefix:/catalogs/", catalogs);
      AccessHttpService principals = new AccessHttpService(access);
      routes.put("/principals", principals);
      routes.put("prefix:/principals/", principals);
      routes.put("prefix:/admins/", principals);
      // One decorator authenticates every route (/health stays open, see Access.OPEN_PATHS).
      routes.replaceAll((path, service) -> access.decorate(service));
      this.routes = List.copyOf(routes.keySet());
      // Flight's incoming messages are mostly ingestion's, so the listener allocates from its allocator.
      this.listener = context.own(Listener.start(config.serverAddress(), routes, ingestAllocator, producer,
          observability.propagating(new ContextPropagatingExecutorService(flightExecutor)),
          flight -> ingest.serveDoPut(flight, producer::admitBulkIngest),
          // The last runs first: tracing sees every call, then the caller is established.
          List.of(ingest.doPutGuard(), new QueryMetadataInterceptor(), access.flightInterceptor(),
              observability.flightInterceptor()), context.tls()));
      if (role == Role.SERVER) {
        // Last, so a load balancer never discovers a server that is not listening yet.
        context.own(ServerRegistration.start(store, advertisedAddress(config, listener.port(), context.tls()),
            Clock.systemUTC(),
            context.scheduler("se-server-registration")));
      }
      ok = true;
    } finally {
      if (!ok) {
        close();
      }
    }
  }

  /**
   * Starts a process of {@code role} on {@code context}, which the server then owns: closing the
   * server closes the context (and the fatal-error path closing the context stops the server).
   */
  public static EngineServer start(EngineContext context, Role role) {
    return new EngineServer(context, role);
  }

  /**
   * What {@code se dev} and {@code se start server} run: ingestion's warm-up of
   * {@code --server.warmup-streams} streams ({@link IngestWarmup}) while the process's context is
   * built, then the server on it, so the listener opens (and a server registers for the load
   * balancer) only once the ingest path is compiled. Embedded servers and tests use
   * {@link #start}, without the warm-up.
   */
  public static EngineServer launch(ServerConfig config, Role role) {
    CompletableFuture<Integer> warmup = CompletableFuture.supplyAsync(
        () -> IngestWarmup.run(config.integer(ConfigKey.SERVER_WARMUP_STREAMS), config.ingest()),
        runnable -> Threads.daemon("se-warmup").newThread(runnable).start());
    EngineContext context = context(config, role, null);
    try {
      warmup.join();
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
    return start(context, role);
  }

  /** Starts a process of the given role. */
  public static EngineServer start(ServerConfig config, Role role) {
    return start(config, role, null);
  }

  /** Starts with a given cluster store (tests: memory or fault-injecting stores). */
  public static EngineServer start(ServerConfig config, Role role, ObjectStore store) {
    return start(context(config, role, store), role);
  }

  private static EngineContext context(ServerConfig config, Role role, ObjectStore store) {
    return EngineContext.builder(config).store(store).devKey(role == Role.DEV)
        .launch(role == Role.DEV ? AuthConfig.Launch.DEV : AuthConfig.Launch.START)
        .duckdbDirectory(config.duckdbDirectory()).build();
  }

  /** What this server runs on (tests: check what it owns). */
  public EngineContext context() {
    return context;
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

  /** Whether the listener is admitting a burst of ingest streams now (tests wait for one to begin). */
  boolean admittingBurst() {
    return ingest.admissionPressure().high();
  }

  /** The HTTP routes of the listener, in Armeria's syntax ({@code /health}, {@code prefix:/catalogs/}); tests enumerate them. */
  List<String> routes() {
    return routes;
  }

  /** The reconcile loop of a {@link Role#DEV} process; empty for {@link Role#SERVER}. */
  public Optional<ReconcileLoop> reconcileLoop() {
    return Optional.ofNullable(reconcileLoop);
  }

  /**
   * Where load balancers reach this server: the configured host (this machine's name for a
   * wildcard), {@code https://host:port} when the listener serves TLS.
   */
  static String advertisedAddress(ServerConfig config, int port, TlsConfig tls) {
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
    return (tls.serves() ? "https://" : "") + host + ":" + port;
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

  /** Stops the listener and everything else, in reverse order of starting, by closing the context. */
  @Override
  public void close() {
    context.close();
  }
}

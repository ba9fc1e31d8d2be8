package io.storageengine.server;

import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStoreConfig;
import io.storageengine.objectstore.ObjectStores;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.secretstore.MemorySecretStore;
import io.storageengine.secretstore.SecretStore;
import java.nio.file.Path;
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

  private EngineServer(ServerConfig config, Role role, ObjectStore injectedStore) {
    boolean ok = false;
    try {
      this.store = injectedStore != null ? injectedStore : own(openStore(config));
      SecretStore secrets = config.get(ConfigKey.SECRET_STORE_TYPE).equals("memory")
          ? new MemorySecretStore() : new FileSecretStore(store);
      Optional<Path> embeddedRoot = store instanceof FsObjectStore
          ? Optional.of(config.objectStoreRoot().resolve("embedded")) : Optional.empty();
      this.registry = own(new TenantCatalogRegistry(secrets, embeddedRoot));
      if (role == Role.DEV) {
        ensureDevCatalog(config.get(ConfigKey.DEFAULT_CATALOG), embeddedRoot.isPresent());
      }
      BufferAllocator allocator = own(new RootAllocator());
      ExecutorService flightExecutor = own(namedPool("se-flight"));
      Map<String, HttpService> routes = new LinkedHashMap<>();
      routes.put("/health", (ctx, req) -> HttpResponse.of(ResponseHeaders.of(HttpStatus.OK)));
      CatalogHttpService catalogs = new CatalogHttpService(registry);
      routes.put("/catalogs", catalogs);
      routes.put("prefix:/catalogs/", catalogs);
      this.listener = own(Listener.start(config.serverAddress(), routes, allocator,
          new org.apache.arrow.flight.NoOpFlightProducer(), new GrpcContextExecutorService(flightExecutor),
          List.of()));
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

  static ObjectStore openStore(ServerConfig config) {
    return ObjectStores.create(new ObjectStoreConfig(
        ObjectStoreConfig.Type.parse(config.get(ConfigKey.OBJECT_STORE_TYPE)),
        config.objectStoreRoot(),
        config.get(ConfigKey.OBJECT_STORE_BUCKET),
        config.get(ConfigKey.OBJECT_STORE_PREFIX),
        config.get(ConfigKey.OBJECT_STORE_ENDPOINT),
        config.get(ConfigKey.OBJECT_STORE_REGION)));
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

package io.storageengine.server;

import io.storageengine.catalog.OperationListener;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStoreConfig;
import io.storageengine.objectstore.ObjectStores;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.secretstore.MemorySecretStore;
import io.storageengine.secretstore.SecretStore;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * What every process opens first: cluster storage, the secret store on it, and the tenant
 * registry over the secret store. Closing closes the registry, then the store (unless the
 * store was handed in by the caller).
 */
public final class ClusterStorage implements AutoCloseable {
  private final ObjectStore raw;
  private final ObjectStore store;
  private final boolean ownsStore;
  private final TenantCatalogRegistry registry;
  private final Optional<Path> embeddedRoot;

  private ClusterStorage(ObjectStore raw, boolean ownsStore, ServerConfig config, OperationListener listener,
      UnaryOperator<ObjectStore> decorate) {
    this.raw = raw;
    this.store = decorate.apply(raw);
    this.ownsStore = ownsStore;
    SecretStore secrets = config.get(ConfigKey.SECRET_STORE_TYPE).equals("memory")
        ? new MemorySecretStore() : new FileSecretStore(store);
    this.embeddedRoot = raw instanceof FsObjectStore
        ? Optional.of(config.objectStoreRoot().resolve("embedded")) : Optional.empty();
    this.registry = TenantCatalogRegistry.builder(secrets).embeddedRoot(embeddedRoot).listener(listener)
        .clusterStorage(raw instanceof FsObjectStore ? config.objectStoreRoot().toAbsolutePath().normalize().toUri().toString() : null)
        .build();
  }

  /** Opens the configured store, or uses {@code store} when it is not null (tests). */
  public static ClusterStorage open(ServerConfig config, ObjectStore store) {
    return open(config, store, OperationListener.NONE, UnaryOperator.identity());
  }

  /**
   * As {@link #open(ServerConfig, ObjectStore)}, with every catalog operation reported to
   * {@code listener} and the store wrapped by {@code decorate} (tracing) before anything uses it.
   */
  public static ClusterStorage open(ServerConfig config, ObjectStore store, OperationListener listener,
      UnaryOperator<ObjectStore> decorate) {
    if (store != null) {
      return new ClusterStorage(store, false, config, listener, decorate);
    }
    ObjectStore opened = ObjectStores.create(new ObjectStoreConfig(
        ObjectStoreConfig.Type.parse(config.get(ConfigKey.OBJECT_STORE_TYPE)),
        config.objectStoreRoot(),
        config.get(ConfigKey.OBJECT_STORE_BUCKET),
        config.get(ConfigKey.OBJECT_STORE_PREFIX),
        config.get(ConfigKey.OBJECT_STORE_ENDPOINT),
        config.get(ConfigKey.OBJECT_STORE_REGION)));
    try {
      return new ClusterStorage(opened, true, config, listener, decorate);
    } catch (RuntimeException e) {
      opened.close();
      throw e;
    }
  }

  public ObjectStore store() {
    return store;
  }

  public TenantCatalogRegistry registry() {
    return registry;
  }

  /** Where embedded catalogs live: only with the fs store. */
  public Optional<Path> embeddedRoot() {
    return embeddedRoot;
  }

  @Override
  public void close() {
    registry.close();
    if (ownsStore) {
      raw.close();
    }
  }
}

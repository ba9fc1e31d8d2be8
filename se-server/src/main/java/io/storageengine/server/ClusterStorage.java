package io.storageengine.server;

import io.storageengine.catalog.OperationListener;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStoreConfig;
import io.storageengine.objectstore.ObjectStores;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.secretstore.MemorySecretStore;
import io.storageengine.secretstore.ReferenceResolver;
import io.storageengine.secretstore.SecretStore;
import io.storageengine.secretstore.SecretStoreKey;
import io.storageengine.secretstore.SecretStoreOptions;
import java.nio.file.Files;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * What every process opens first: cluster storage, the secret store on it, and the tenant
 * registry over the secret store. Closing closes the registry, then the store (unless the
 * store was handed in by the caller).
 */
public final class ClusterStorage implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterStorage.class);
  private final ObjectStore raw;
  private final ObjectStore store;
  private final boolean ownsStore;
  private final TenantCatalogRegistry registry;
  private final Optional<Path> embeddedRoot;
  private final SecretStore secrets;
  private final ReferenceResolver references;

  private ClusterStorage(ObjectStore raw, boolean ownsStore, ServerConfig config, OperationListener listener,
      Telemetry telemetry, UnaryOperator<ObjectStore> decorate) {
    this.raw = raw;
    this.store = decorate.apply(raw);
    this.ownsStore = ownsStore;
    SecretStore secrets = openSecrets(config, store);
    this.secrets = secrets;
    this.references = new ReferenceResolver(config.secretStoreOptions());
    this.embeddedRoot = raw instanceof FsObjectStore
        ? Optional.of(config.objectStoreRoot().resolve("embedded")) : Optional.empty();
    this.registry = TenantCatalogRegistry.builder(secrets).embeddedRoot(embeddedRoot).listener(listener)
        .telemetry(telemetry)
        .secretResolver(references)
        .clusterStorage(raw instanceof FsObjectStore ? config.objectStoreRoot().toAbsolutePath().normalize().toUri().toString() : null)
        .build();
  }

  /**
   * The configured secret store: {@code memory}, {@code aws-sm}, {@code azure-kv}, {@code gcp-sm},
   * {@code vault}, or {@code file} on {@code store}, encrypting with the key of {@link #fileKey}.
   * Without a key the file store only reads (old plaintext documents) and refuses writes, saying
   * how to configure one.
   */
  static SecretStore openSecrets(ServerConfig config, ObjectStore store) {
    SecretStoreOptions options = config.secretStoreOptions();
    SecretStore secrets = switch (options.type()) {
      case "memory" -> new MemorySecretStore();
      case "file" -> fileKey(config).<SecretStore>map(key -> new FileSecretStore(store, key)).orElseGet(() -> {
        LOG.warn("file secret store has no encryption key: catalogs cannot be created or changed; {}",
            "set SE_SECRET_STORE_KEY or --secret-store.file.key-file");
        return FileSecretStore.withoutKey(store);
      });
      default -> options.openExternal(options.type());
    };
    LOG.info("secret store: {}", secrets.describe());
    return secrets;
  }

  /**
   * The file store's key: {@code --secret-store.key} / {@code SE_SECRET_STORE_KEY}, else the file
   * {@code --secret-store.file.key-file}, else {@code <data-dir>/secret-store.key} when it exists;
   * empty when none is configured. A malformed key or missing key file is INVALID_ARGUMENT.
   */
  public static Optional<SecretStoreKey> fileKey(ServerConfig config) {
    String key = config.get(ConfigKey.SECRET_STORE_KEY);
    if (!key.isBlank()) {
      return Optional.of(SecretStoreKey.parse(key, ConfigKey.SECRET_STORE_KEY.environmentVariable()
          + " / --" + ConfigKey.SECRET_STORE_KEY.flag()));
    }
    String file = config.get(ConfigKey.SECRET_STORE_FILE_KEY_FILE);
    if (!file.isBlank()) {
      return Optional.of(SecretStoreKey.readFile(Path.of(file)));
    }
    Path generated = defaultKeyFile(config);
    return Files.exists(generated) ? Optional.of(SecretStoreKey.readFile(generated)) : Optional.empty();
  }

  /** {@code <data-dir>/secret-store.key}: where {@code se dev} keeps the key it generates. */
  public static Path defaultKeyFile(ServerConfig config) {
    return config.dataDir().resolve(SecretStoreKey.DEFAULT_FILE_NAME);
  }

  /**
   * For {@code se dev}: when the file store has no key configured, generates one into
   * {@link #defaultKeyFile} (mode 0600) unless it exists, and returns {@code config} pointing at it.
   */
  public static ServerConfig withDevKey(ServerConfig config) {
    if (!config.get(ConfigKey.SECRET_STORE_TYPE).equals("file") || fileKey(config).isPresent()) {
      return config;
    }
    Path file = defaultKeyFile(config);
    SecretStoreKey key = SecretStoreKey.readOrGenerate(file);
    LOG.info("se dev: file secret store key {} in {}", key.id(), file);
    return config.with(ConfigKey.SECRET_STORE_FILE_KEY_FILE, file.toString());
  }

  /** Opens the configured store, or uses {@code store} when it is not null (tests). */
  public static ClusterStorage open(ServerConfig config, ObjectStore store) {
    return open(config, store, OperationListener.NONE, Telemetry.none(), UnaryOperator.identity());
  }

  /**
   * As {@link #open(ServerConfig, ObjectStore)}, with every catalog operation reported to
   * {@code listener}, the catalogs' table storage calls to {@code telemetry}, and the store
   * wrapped by {@code decorate} (tracing) before anything uses it.
   */
  public static ClusterStorage open(ServerConfig config, ObjectStore store, OperationListener listener,
      Telemetry telemetry, UnaryOperator<ObjectStore> decorate) {
    if (store != null) {
      return new ClusterStorage(store, false, config, listener, telemetry, decorate);
    }
    ObjectStore opened = ObjectStores.create(new ObjectStoreConfig(
        ObjectStoreConfig.Type.parse(config.get(ConfigKey.OBJECT_STORE_TYPE)),
        config.objectStoreRoot(),
        config.get(ConfigKey.OBJECT_STORE_BUCKET),
        config.get(ConfigKey.OBJECT_STORE_PREFIX),
        config.get(ConfigKey.OBJECT_STORE_ENDPOINT),
        config.get(ConfigKey.OBJECT_STORE_REGION)));
    try {
      return new ClusterStorage(opened, true, config, listener, telemetry, decorate);
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

  /** The secret store: catalog configs, and the token and grant documents of authentication. */
  public SecretStore secrets() {
    return secrets;
  }

  /** Where embedded catalogs live: only with the fs store. */
  public Optional<Path> embeddedRoot() {
    return embeddedRoot;
  }

  @Override
  public void close() {
    registry.close();
    references.close();
    secrets.close();
    if (ownsStore) {
      raw.close();
    }
  }
}

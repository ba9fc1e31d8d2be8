package io.storageengine.catalog;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.Ids;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.secretstore.SecretStore;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tenants of a cluster: catalog configs persisted in the {@link SecretStore} under
 * {@code catalog/<id>}, and the live Iceberg catalogs built from them.
 *
 * <p>Configs survive restarts and are shared by every process over the same secret store. A live
 * catalog is built on first use by {@link CatalogFactory}, wrapped in a {@link LoggingCatalog},
 * and cached. Before a cached catalog is handed out, the stored config's version is compared
 * (at most once per {@code revalidateAfter}, default one second, so a hot path does not read the
 * secret store on every call): a changed config rebuilds the catalog, a deleted one closes it.
 * Changes made through this registry take effect at once.
 *
 * <p>A catalog replaced or deleted is closed right away; an operation still running on it may
 * fail and should be retried with a fresh {@link #catalog}.
 *
 * <p>Errors: invalid id INVALID_ARGUMENT, unknown id NOT_FOUND, duplicate create ALREADY_EXISTS.
 * Failures of the secret store or of the catalog backend are UNAVAILABLE or INTERNAL with a
 * message that carries no backend detail or credential; the detail is logged, redacted.
 */
public final class TenantCatalogRegistry implements TenantCatalogs, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TenantCatalogRegistry.class);
  static final String KEY_PREFIX = "catalog/";

  private final SecretStore secrets;
  private final CatalogFactory factory;
  private final OperationListener listener;
  private final Clock clock;
  private final long revalidateAfterMillis;
  private final ConcurrentMap<String, Live> live = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Object> locks = new ConcurrentHashMap<>();
  private final String clusterStorage;
  private final Telemetry telemetry;
  private final TracingFileIO.Binding telemetryBinding;
  private volatile boolean closed;

  /** A live catalog, the secret version it was built from, and when that version was last checked. */
  private record Live(String version, LoggingCatalog catalog, long checkedAtMillis) {}

  /** A registry over {@code secrets}; {@code embeddedRoot} enables embedded catalogs (fs store only). */
  public TenantCatalogRegistry(SecretStore secrets, Optional<Path> embeddedRoot) {
    this(builder(secrets).embeddedRoot(embeddedRoot));
  }

  private TenantCatalogRegistry(Builder b) {
    this.secrets = Objects.requireNonNull(b.secrets, "secrets");
    this.telemetry = b.telemetry;
    this.telemetryBinding = TracingFileIO.bind(b.telemetry);
    this.factory = new CatalogFactory(b.embeddedRoot, b.secretResolver, telemetryBinding.id());
    this.listener = b.listener;
    this.clock = b.clock;
    this.revalidateAfterMillis = b.revalidateAfter.toMillis();
    this.clusterStorage = b.clusterStorage;
  }

  public static Builder builder(SecretStore secrets) {
    return new Builder(secrets);
  }

  /**
   * Stores the config of a new catalog. INVALID_ARGUMENT for an invalid id or an embedded config
   * without a local embedded root, ALREADY_EXISTS when {@code catalogId} is taken. The backend is
   * not contacted: a wrong uri surfaces on first use of {@link #catalog}.
   */
  public CatalogConfig create(String catalogId, CatalogConfig config) {
    Ids.requireCatalogId(catalogId);
    Objects.requireNonNull(config, "config");
    factory.checkSupported(catalogId, config);
    Optional<String> root = factory.storageRoot(catalogId, config);
    root.ifPresent(r -> checkRootIsFree(catalogId, r, config.type() != CatalogConfig.Type.EMBEDDED));
    boolean created = secretStore(catalogId, "create",
        () -> secrets.create(key(catalogId), config.toBytes()));
    if (!created) {
      throw new SeException(ErrorCode.ALREADY_EXISTS, "catalog '" + catalogId + "' already exists");
    }
    root.ifPresent(r -> updateRootIndex(index -> index.put(catalogId, r)));
    LOG.info("catalog {} created: type {}", catalogId, config.type().wireName());
    return config;
  }

  /** The stored config of {@code catalogId}; NOT_FOUND when there is none. */
  public CatalogConfig config(String catalogId) {
    Ids.requireCatalogId(catalogId);
    SecretStore.Secret secret = secretStore(catalogId, "read", () -> secrets.get(key(catalogId)))
        .orElseThrow(() -> notFound(catalogId));
    return decode(catalogId, secret.value());
  }

  /** Removes the catalog's config and closes its live catalog; succeeds when already absent. */
  public void delete(String catalogId) {
    Ids.requireCatalogId(catalogId);
    synchronized (lock(catalogId)) {
      secretStore(catalogId, "delete", () -> {
        secrets.delete(key(catalogId));
        return null;
      });
      updateRootIndex(index -> index.remove(catalogId));
      Live removed = live.remove(catalogId);
      if (removed != null) {
        closeQuietly(catalogId, removed.catalog());
        LOG.info("catalog {} deleted", catalogId);
      }
    }
  }

  /**
   * The live catalog of {@code catalogId}: the same instance until its stored config changes.
   * Operations on it are logged and reported to the registry's {@link OperationListener}.
   */
  @Override
  public Catalog catalog(String catalogId) {
    Ids.requireCatalogId(catalogId);
    Live cached = live.get(catalogId);
    if (cached != null && clock.millis() - cached.checkedAtMillis() < revalidateAfterMillis) {
      return cached.catalog();
    }
    synchronized (lock(catalogId)) {
      if (closed) {
        throw new SeException(ErrorCode.UNAVAILABLE, "catalog registry is closed");
      }
      cached = live.get(catalogId);
      long now = clock.millis();
      if (cached != null && now - cached.checkedAtMillis() < revalidateAfterMillis) {
        return cached.catalog();
      }
      Optional<SecretStore.Secret> secret =
          secretStore(catalogId, "read", () -> secrets.get(key(catalogId)));
      if (secret.isEmpty()) {
        if (cached != null) {
          live.remove(catalogId);
          closeQuietly(catalogId, cached.catalog());
        }
        throw notFound(catalogId);
      }
      String version = secret.get().version();
      if (cached != null && cached.version().equals(version)) {
        live.put(catalogId, new Live(version, cached.catalog(), now));
        return cached.catalog();
      }
      CatalogConfig config = decode(catalogId, secret.get().value());
      LoggingCatalog built = new LoggingCatalog(catalogId, build(catalogId, config), listener,
          new TableLocationPolicy(confinement(catalogId, config)));
      live.put(catalogId, new Live(version, built, now));
      if (cached != null) {
        LOG.info("catalog {} config changed: rebuilt", catalogId);
        closeQuietly(catalogId, cached.catalog());
      }
      return built;
    }
  }

  /** Closes every live catalog. Configs stay in the secret store. */
  @Override
  public void close() {
    closed = true;
    for (String id : live.keySet()) {
      synchronized (lock(id)) {
        Live removed = live.remove(id);
        if (removed != null) {
          closeQuietly(id, removed.catalog());
        }
      }
    }
    telemetryBinding.close();
  }

  /** Where the catalogs' table storage calls are reported ({@link Builder#telemetry}). */
  public Telemetry telemetry() {
    return telemetry;
  }

  public CatalogFactory factory() {
    return factory;
  }

  private static CatalogConfig decode(String catalogId, byte[] stored) {
    try {
      return CatalogConfig.parse(stored);
    } catch (SeException e) {
      // The message may quote a field of the stored document; keep it in the log only.
      LOG.error("catalog {}: stored config is unreadable: {}", catalogId, CatalogRedaction.text(e.getMessage()));
      throw new SeException(ErrorCode.INTERNAL, "catalog '" + catalogId + "': stored config is unreadable");
    }
  }

  /**
   * A new tenant's storage root must be its own: well formed, not overlapping the root of any
   * other catalog in the {@value #ROOT_INDEX} index, not inside the parts of cluster storage that
   * hold other tenants' data and secrets, and not containing cluster storage (embedded catalogs,
   * which the engine places there itself, excepted). INVALID_ARGUMENT
   * otherwise, naming neither the other catalog nor its root.
   */
  private void checkRootIsFree(String catalogId, String root, boolean declared) {
    LocationConfinement.under(root);
    if (declared && clusterStorage != null) {
      String base = clusterStorage.endsWith("/") ? clusterStorage.substring(0, clusterStorage.length() - 1) : clusterStorage;
      boolean reserved = LocationConfinement.isUnder(base, root);
      for (String dir : List.of("embedded", "tenants", "secrets", "broker")) {
        reserved |= LocationConfinement.overlaps(root, base + "/" + dir);
      }
      if (reserved) {
        throw SeException.invalid("catalog '%s': storage root '%s' overlaps the engine's cluster storage; "
            + "give the catalog a warehouse of its own", catalogId, root);
      }
    }
    for (Map.Entry<String, String> other : readRootIndex().entrySet()) {
      if (!other.getKey().equals(catalogId) && LocationConfinement.overlaps(root, other.getValue())) {
        throw SeException.invalid("catalog '%s': storage root '%s' overlaps the storage root of another catalog; "
            + "tenants never share storage", catalogId, root);
      }
    }
  }

  /** Secret-store key of the index of declared storage roots (catalog id to root); holds no credentials. */
  static final String ROOT_INDEX = "index/storage-roots";

  private Map<String, String> readRootIndex() {
    Optional<SecretStore.Secret> stored = secretStore("index", "read", () -> secrets.get(ROOT_INDEX));
    if (stored.isEmpty()) {
      return new java.util.TreeMap<>();
    }
    try {
      return new java.util.TreeMap<>(io.storageengine.common.Json.MAPPER.readValue(stored.get().value(),
          new com.fasterxml.jackson.core.type.TypeReference<Map<String, String>>() {}));
    } catch (java.io.IOException e) {
      LOG.error("storage-root index is unreadable: {}", e.getMessage());
      throw new SeException(ErrorCode.INTERNAL, "the storage-root index is unreadable");
    }
  }

  /** Read-modify-write of the index; catalogs are created and deleted rarely, by an operator. */
  private synchronized void updateRootIndex(java.util.function.Consumer<Map<String, String>> change) {
    Map<String, String> index = readRootIndex();
    change.accept(index);
    secretStore("index", "write", () -> {
      secrets.put(ROOT_INDEX, io.storageengine.common.Json.toBytes(index));
      return null;
    });
  }

  /** Where the tenant's tables must live; see {@link CatalogFactory#storageRoot}. */
  private LocationConfinement confinement(String catalogId, CatalogConfig config) {
    return factory.storageRoot(catalogId, config).map(LocationConfinement::under)
        .orElse(LocationConfinement.unconfined());
  }

  private Catalog build(String catalogId, CatalogConfig config) {
    try {
      return factory.build(catalogId, config);
    } catch (SeException e) {
      if (e.code().category() == ErrorCode.Category.USER) {
        throw e;
      }
      LOG.warn("catalog {}: cannot build {} catalog: {}", catalogId, config.type().wireName(),
          CatalogRedaction.describe(e));
      throw new SeException(e.code(), "catalog '" + catalogId + "' is unavailable: cannot reach its backend");
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("catalog {}: cannot build {} catalog: {}", catalogId, config.type().wireName(),
          CatalogRedaction.describe(e));
      throw new SeException(ErrorCode.UNAVAILABLE,
          "catalog '" + catalogId + "' is unavailable: cannot reach its backend");
    }
  }

  private <T> T secretStore(String catalogId, String action, Supplier<T> body) {
    try {
      return body.get();
    } catch (SeException e) {
      if (e.code().category() == ErrorCode.Category.USER) {
        throw e;
      }
      LOG.warn("catalog {}: secret store {} failed ({}): {}", catalogId, action, secrets.describe(),
          CatalogRedaction.describe(e));
      ErrorCode code = e.code() == ErrorCode.UNAVAILABLE ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL;
      throw new SeException(code, "catalog '" + catalogId + "': secret store " + action + " failed");
    } catch (RuntimeException e) {
      LOG.warn("catalog {}: secret store {} failed ({}): {}", catalogId, action, secrets.describe(),
          CatalogRedaction.describe(e));
      throw new SeException(ErrorCode.INTERNAL, "catalog '" + catalogId + "': secret store " + action + " failed");
    }
  }

  private Object lock(String catalogId) {
    return locks.computeIfAbsent(catalogId, id -> new Object());
  }

  private static String key(String catalogId) {
    return KEY_PREFIX + catalogId;
  }

  private static SeException notFound(String catalogId) {
    return SeException.notFound("catalog '%s' not found", catalogId);
  }

  private static void closeQuietly(String catalogId, LoggingCatalog catalog) {
    try {
      catalog.close();
    } catch (Exception e) {
      LOG.warn("catalog {}: close failed: {}", catalogId, CatalogRedaction.describe(e));
    }
  }

  /** Options of a {@link TenantCatalogRegistry}. */
  public static final class Builder {
    private final SecretStore secrets;
    private Optional<Path> embeddedRoot = Optional.empty();
    private OperationListener listener = OperationListener.NONE;
    private Telemetry telemetry = Telemetry.none();
    private Clock clock = Clock.systemUTC();
    private Duration revalidateAfter = Duration.ofSeconds(1);
    private String clusterStorage;
    private io.storageengine.secretstore.SecretResolver secretResolver = io.storageengine.secretstore.SecretResolver.NONE;

    private Builder(SecretStore secrets) {
      this.secrets = secrets;
    }

    /** The local directory for embedded catalogs ({@code <fs root>/embedded}); empty disables them. */
    public Builder embeddedRoot(Optional<Path> root) {
      this.embeddedRoot = Objects.requireNonNull(root, "root");
      return this;
    }

    /** Called around every operation on a live catalog (tracing). */
    public Builder listener(OperationListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Receives the table storage spans and metrics of the catalogs' FileIOs; {@link Telemetry#none()} by default. */
    public Builder telemetry(Telemetry telemetry) {
      this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** How long a cached catalog is trusted before its stored version is checked again; zero checks every call. */
    public Builder revalidateAfter(Duration interval) {
      if (interval.isNegative()) {
        throw new IllegalArgumentException("revalidateAfter must not be negative");
      }
      this.revalidateAfter = interval;
      return this;
    }

    /**
     * The location of cluster storage ({@code file:/data/.se}, {@code s3://bucket/prefix}): no
     * tenant's storage root may contain it or overlap the parts that hold tenants' data.
     */
    public Builder clusterStorage(String location) {
      this.clusterStorage = location;
      return this;
    }

    /** Reads the {@code secret-ref:} property values of configs when catalogs are built; none by default. */
    public Builder secretResolver(io.storageengine.secretstore.SecretResolver resolver) {
      this.secretResolver = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    public TenantCatalogRegistry build() {
      return new TenantCatalogRegistry(this);
    }
  }
}

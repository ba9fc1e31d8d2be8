package io.storageengine.catalog;

import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretReference;
import io.storageengine.secretstore.SecretResolver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.ResolvingFileIO;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Builds the live Iceberg catalog a {@link CatalogConfig} describes.
 *
 * <ul>
 *   <li>{@code rest}: a {@code RESTCatalog} with {@code uri}, optional {@code warehouse} and the
 *       properties passed through unchanged ({@code credential}, {@code token},
 *       {@code oauth2-server-uri}, {@code scope}, {@code header.*}, {@code s3.*}, ...).</li>
 *   <li>{@code sql}: a {@code JdbcCatalog} on {@code uri} with {@code warehouse}; the driver gets
 *       the {@code jdbc.*} properties without their prefix.</li>
 *   <li>{@code embedded}: a SQLite {@code JdbcCatalog} at {@code <embeddedRoot>/<id>/catalog.db}
 *       with warehouse {@code <embeddedRoot>/<id>/warehouse}; refused when there is no root.</li>
 * </ul>
 *
 * <p>Property values of the form {@code secret-ref:<store>://<name>} are replaced by the secret
 * they point to, read through the factory's {@link SecretResolver} at build time.
 *
 * <p>Files are reached through {@code ResolvingFileIO} unless the properties name an
 * {@code io-impl}: it picks {@code S3FileIO} for {@code s3://} and {@code HadoopFileIO} for
 * local ({@code file:}) paths, so one catalog may use either. Either way the catalog's
 * {@code io-impl} is {@link TracingFileIO}, which wraps that FileIO (named in
 * {@value TracingFileIO#DELEGATE_IMPL}) and traces every call to table storage.
 */
public final class CatalogFactory {
  /** Written by JdbcCatalog as the newest layout; it also enables views. */
  static final String JDBC_SCHEMA_VERSION = "jdbc.schema-version";
  static final String SQLITE_BUSY_TIMEOUT_MS = "30000";

  private final Path embeddedRoot;
  private final SecretResolver secrets;
  private final String telemetryBinding;

  /** {@code embeddedRoot}: the local directory holding embedded catalogs, if cluster storage is local. */
  public CatalogFactory(Optional<Path> embeddedRoot) {
    this(embeddedRoot, SecretResolver.NONE);
  }

  /** As {@link #CatalogFactory(Optional)}, reading {@code secret-ref:} property values through {@code secrets}. */
  public CatalogFactory(Optional<Path> embeddedRoot, SecretResolver secrets) {
    this(embeddedRoot, secrets, null);
  }

  /**
   * As {@link #CatalogFactory(Optional, SecretResolver)}, the catalogs' FileIOs reporting to the
   * telemetry of {@code telemetryBinding} (a {@link TracingFileIO#bind} id; null: none).
   */
  public CatalogFactory(Optional<Path> embeddedRoot, SecretResolver secrets, String telemetryBinding) {
    this.telemetryBinding = telemetryBinding;
    this.embeddedRoot = embeddedRoot.map(p -> p.toAbsolutePath().normalize()).orElse(null);
    this.secrets = java.util.Objects.requireNonNull(secrets, "secrets");
  }

  public Optional<Path> embeddedRoot() {
    return Optional.ofNullable(embeddedRoot);
  }

  /** True when this factory can build catalogs of {@code type}. */
  public boolean supports(CatalogConfig.Type type) {
    return type != CatalogConfig.Type.EMBEDDED || embeddedRoot != null;
  }

  /** Throws INVALID_ARGUMENT when {@code config} is of a type this deployment cannot build. */
  public void checkSupported(String catalogId, CatalogConfig config) {
    if (!supports(config.type())) {
      throw SeException.invalid(
          "catalog '%s': type embedded needs cluster storage on a local file system "
              + "(the fs object store); use type rest or sql", catalogId);
    }
  }

  /**
   * A new, initialized catalog named {@code catalogId}. The caller owns it and must close it.
   * Failures to reach the backend surface as the catalog library's own exceptions.
   */
  public Catalog build(String catalogId, CatalogConfig config) {
    checkSupported(catalogId, config);
    Map<String, String> properties = catalogProperties(catalogId, config);
    return switch (config.type()) {
      case REST -> initialize(new RESTCatalog(), catalogId, properties);
      case SQL, EMBEDDED -> initialize(new JdbcCatalog(), catalogId, properties);
    };
  }

  /** The properties handed to the Iceberg catalog's {@code initialize}; visible for tests. */
  Map<String, String> catalogProperties(String catalogId, CatalogConfig config) {
    Map<String, String> props = new LinkedHashMap<>(config.properties());
    resolveReferences(catalogId, props);
    tracedFileIO(props);
    switch (config.type()) {
      case REST -> {
        props.put(CatalogProperties.URI, config.uri());
        if (config.warehouse() != null) {
          props.put(CatalogProperties.WAREHOUSE_LOCATION, config.warehouse());
        }
      }
      case SQL -> {
        props.put(CatalogProperties.URI, config.uri());
        props.put(CatalogProperties.WAREHOUSE_LOCATION, config.warehouse());
        jdbcDefaults(props, config.uri());
      }
      case EMBEDDED -> {
        Path dir = embeddedDirectory(catalogId);
        props.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
        props.put(CatalogProperties.WAREHOUSE_LOCATION, fileLocation(dir.resolve("warehouse")));
        jdbcDefaults(props, props.get(CatalogProperties.URI));
      }
      default -> throw new IllegalStateException("unhandled type " + config.type());
    }
    storageRoot(catalogId, config).ifPresentOrElse(
        root -> props.put(LocationConfinement.ROOT_PROPERTY, root),
        () -> props.remove(LocationConfinement.ROOT_PROPERTY));
    return props;
  }

  /**
   * The storage root every table location and file of the tenant must lie under: the warehouse of
   * {@code sql} and {@code embedded} catalogs (a property of the same name is ignored), and for
   * {@code rest} the {@value LocationConfinement#ROOT_PROPERTY} property or else a warehouse that
   * is a location (an absolute path or a URI with a bucket); empty for a {@code rest} catalog whose
   * upstream alone decides locations.
   */
  public Optional<String> storageRoot(String catalogId, CatalogConfig config) {
    return switch (config.type()) {
      case EMBEDDED -> Optional.of(fileLocation(embeddedDirectory(catalogId).resolve("warehouse")));
      case SQL -> Optional.of(config.warehouse());
      case REST -> {
        String declared = config.properties().get(LocationConfinement.ROOT_PROPERTY);
        if (declared != null && !declared.isBlank()) {
          yield Optional.of(declared);
        }
        String warehouse = config.warehouse();
        yield warehouse != null && (warehouse.startsWith("/") || warehouse.contains("://") || warehouse.startsWith("file:"))
            ? Optional.of(warehouse) : Optional.empty();
      }
    };
  }

  /**
   * Replaces every {@code secret-ref:} value by the secret it points to, read now (the value is
   * never stored). INVALID_ARGUMENT naming the catalog, the property and the reference when the
   * reference cannot be resolved; UNAVAILABLE when its store cannot be reached.
   */
  private void resolveReferences(String catalogId, Map<String, String> props) {
    for (Map.Entry<String, String> e : props.entrySet()) {
      if (SecretReference.isReference(e.getValue())) {
        SecretReference ref = SecretReference.parse(e.getValue());
        try {
          e.setValue(secrets.resolve(ref));
        } catch (SeException x) {
          throw new SeException(x.code(), "catalog '" + catalogId + "': property '" + e.getKey() + "': " + x.getMessage());
        }
      }
    }
  }

  /**
   * Makes {@link TracingFileIO} the catalog's FileIO, wrapping the one the configuration names
   * ({@code ResolvingFileIO} when none). A configuration that already names TracingFileIO keeps
   * its own {@value TracingFileIO#DELEGATE_IMPL}. The FileIO reports to this factory's telemetry
   * binding.
   */
  private void tracedFileIO(Map<String, String> props) {
    if (telemetryBinding != null) {
      props.put(TracingFileIO.TELEMETRY_BINDING, telemetryBinding);
    }
    String ioImpl = props.getOrDefault(CatalogProperties.FILE_IO_IMPL, ResolvingFileIO.class.getName());
    if (!ioImpl.equals(TracingFileIO.class.getName())) {
      props.put(TracingFileIO.DELEGATE_IMPL, ioImpl);
    }
    props.put(CatalogProperties.FILE_IO_IMPL, TracingFileIO.class.getName());
  }

  /** {@code <embeddedRoot>/<id>}: where an embedded catalog keeps its database and warehouse. */
  public Path embeddedDirectory(String catalogId) {
    if (embeddedRoot == null) {
      throw SeException.invalid("catalog '%s': no local directory for embedded catalogs", catalogId);
    }
    return embeddedRoot.resolve(catalogId);
  }

  private static void jdbcDefaults(Map<String, String> props, String uri) {
    // V1 adds the record-type column that views need; V0 only logs a warning on every start.
    props.putIfAbsent(JDBC_SCHEMA_VERSION, "V1");
    if (uri.startsWith("jdbc:sqlite:")) {
      // Several threads (pool connections) and processes share one database file: WAL lets
      // readers proceed during a commit, and the busy timeout makes a writer wait for the file
      // lock instead of failing at once with SQLITE_BUSY. The driver reads these as pragmas.
      props.putIfAbsent("jdbc.journal_mode", "WAL");
      props.putIfAbsent("jdbc.busy_timeout", SQLITE_BUSY_TIMEOUT_MS);
      // SQLite has one writer at a time; more pooled connections only add lock waits.
      props.putIfAbsent(CatalogProperties.CLIENT_POOL_SIZE, "2");
    }
  }

  private Catalog initialize(Catalog catalog, String catalogId, Map<String, String> properties) {
    if (catalog instanceof JdbcCatalog && properties.get(CatalogProperties.URI).startsWith("jdbc:sqlite:")) {
      createSqliteParent(properties.get(CatalogProperties.URI));
    }
    try {
      // Hadoop's Configuration is what HadoopFileIO (file: paths) needs; one per catalog since
      // Configuration is not safe to share for writes.
      if (catalog instanceof JdbcCatalog jdbc) {
        jdbc.setConf(new Configuration());
      } else if (catalog instanceof RESTCatalog rest) {
        rest.setConf(new Configuration());
      }
      catalog.initialize(catalogId, properties);
      return catalog;
    } catch (RuntimeException e) {
      closeQuietly(catalog, e);
      throw e;
    }
  }

  private static void createSqliteParent(String uri) {
    String path = uri.substring("jdbc:sqlite:".length());
    if (path.startsWith("file:") || path.contains(":memory:") || path.isEmpty()) {
      return;
    }
    int query = path.indexOf('?');
    Path parent = Path.of(query < 0 ? path : path.substring(0, query)).toAbsolutePath().getParent();
    try {
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create directory for the SQLite catalog", e);
    }
  }

  static String fileLocation(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create warehouse directory", e);
    }
    String uri = dir.toAbsolutePath().normalize().toUri().toString();
    return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
  }

  private static void closeQuietly(Catalog catalog, Throwable primary) {
    if (catalog instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        primary.addSuppressed(e);
      }
    }
  }
}

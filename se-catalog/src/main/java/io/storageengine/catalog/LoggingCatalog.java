package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.LoadContext;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps a tenant's catalog so that every operation is logged with the catalog id, operation
 * name, duration and outcome, and reported to an {@link OperationListener}. Arguments are never
 * logged (namespace and table properties may hold credentials).
 *
 * <p>Success is logged at DEBUG. An operation that fails only because the object it names does
 * not exist or already exists (the routine answer to a lookup) is logged at DEBUG with outcome
 * {@code not_found} / {@code already_exists}; every other failure at WARN with its class and
 * redacted message.
 *
 * <p>Every method of {@link Catalog} and {@link SupportsNamespaces}, default ones included, is
 * delegated so the wrapped catalog's own implementations are used. Tables returned by the
 * catalog are the delegate's: their commits go through their own table operations.
 */
public final class LoggingCatalog implements Catalog, SupportsNamespaces, Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(LoggingCatalog.class);

  private final String catalogId;
  private final Catalog delegate;
  private final OperationListener listener;
  private final TableLocationPolicy policy;

  /** A wrapper that checks names and locations with no storage root (tests, tools). */
  public LoggingCatalog(String catalogId, Catalog delegate, OperationListener listener) {
    this(catalogId, delegate, listener, new TableLocationPolicy(LocationConfinement.unconfined()));
  }

  /**
   * A wrapper whose table creations, renames and namespace changes are checked by {@code policy}
   * (names are names, locations under the tenant's root, no shared table storage) before they
   * reach {@code delegate}.
   */
  public LoggingCatalog(String catalogId, Catalog delegate, OperationListener listener, TableLocationPolicy policy) {
    this.catalogId = Objects.requireNonNull(catalogId, "catalogId");
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.listener = listener == null ? OperationListener.NONE : listener;
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** The names-and-locations rules this catalog's writes are held to. */
  public TableLocationPolicy locationPolicy() {
    return policy;
  }

  /** The wrapped catalog, for features outside these interfaces (views); its calls are not logged. */
  public Catalog delegate() {
    return delegate;
  }

  public String catalogId() {
    return catalogId;
  }

  // ---- Catalog ----

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void initialize(String name, Map<String, String> properties) {
    run("initialize", () -> delegate.initialize(name, properties));
  }

  @Override
  public List<TableIdentifier> listTables(Namespace namespace) {
    return call("listTables", () -> delegate.listTables(namespace));
  }

  @Override
  public Table createTable(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, String location,
      Map<String, String> properties) {
    return buildTable(identifier, schema).withPartitionSpec(spec).withLocation(location)
        .withProperties(properties).create();
  }

  @Override
  public Table createTable(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties) {
    return createTable(identifier, schema, spec, null, properties);
  }

  @Override
  public Table createTable(TableIdentifier identifier, Schema schema, PartitionSpec spec) {
    return createTable(identifier, schema, spec, null, null);
  }

  @Override
  public Table createTable(TableIdentifier identifier, Schema schema) {
    return createTable(identifier, schema, PartitionSpec.unpartitioned(), null, null);
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, String location,
      Map<String, String> properties) {
    return buildTable(identifier, schema).withPartitionSpec(spec).withLocation(location)
        .withProperties(properties).createTransaction();
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties) {
    return newCreateTableTransaction(identifier, schema, spec, null, properties);
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec) {
    return newCreateTableTransaction(identifier, schema, spec, null, null);
  }

  @Override
  public Transaction newCreateTableTransaction(TableIdentifier identifier, Schema schema) {
    return newCreateTableTransaction(identifier, schema, PartitionSpec.unpartitioned(), null, null);
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, String location,
      Map<String, String> properties, boolean orCreate) {
    TableBuilder builder = buildTable(identifier, schema).withPartitionSpec(spec).withLocation(location)
        .withProperties(properties);
    return orCreate ? builder.createOrReplaceTransaction() : builder.replaceTransaction();
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties,
      boolean orCreate) {
    return newReplaceTableTransaction(identifier, schema, spec, null, properties, orCreate);
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, boolean orCreate) {
    return newReplaceTableTransaction(identifier, schema, spec, null, null, orCreate);
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, boolean orCreate) {
    return newReplaceTableTransaction(identifier, schema, PartitionSpec.unpartitioned(), null, null, orCreate);
  }

  @Override
  public boolean tableExists(TableIdentifier identifier) {
    return call("tableExists", () -> delegate.tableExists(identifier));
  }

  @Override
  public boolean dropTable(TableIdentifier identifier) {
    return call("dropTable", () -> delegate.dropTable(identifier));
  }

  @Override
  public boolean dropTable(TableIdentifier identifier, boolean purge) {
    return call("dropTable", () -> delegate.dropTable(identifier, purge));
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    TableLocationPolicy.checkIdentifier(to);
    run("renameTable", () -> delegate.renameTable(from, to));
  }

  @Override
  public Table loadTable(TableIdentifier identifier) {
    return call("loadTable", () -> delegate.loadTable(identifier));
  }

  @Override
  public Table loadTable(TableIdentifier identifier, LoadContext context) {
    return call("loadTable", () -> delegate.loadTable(identifier, context));
  }

  @Override
  public void invalidateTable(TableIdentifier identifier) {
    run("invalidateTable", () -> delegate.invalidateTable(identifier));
  }

  @Override
  public Table registerTable(TableIdentifier identifier, String metadataFileLocation) {
    TableLocationPolicy.checkIdentifier(identifier);
    policy.checkRegister(metadataFileLocation);
    return call("registerTable", () -> delegate.registerTable(identifier, metadataFileLocation));
  }

  @Override
  public Table registerTable(TableIdentifier identifier, String metadataFileLocation, boolean overwrite) {
    TableLocationPolicy.checkIdentifier(identifier);
    policy.checkRegister(metadataFileLocation);
    return call("registerTable",
        () -> delegate.registerTable(identifier, metadataFileLocation, overwrite));
  }

  @Override
  public TableBuilder buildTable(TableIdentifier identifier, Schema schema) {
    TableLocationPolicy.checkIdentifier(identifier);
    return new LoggingTableBuilder(identifier, delegate.buildTable(identifier, schema));
  }

  // ---- SupportsNamespaces ----

  @Override
  public void createNamespace(Namespace namespace) {
    TableLocationPolicy.checkNamespace(namespace);
    run("createNamespace", () -> namespaces().createNamespace(namespace));
  }

  @Override
  public void createNamespace(Namespace namespace, Map<String, String> metadata) {
    TableLocationPolicy.checkNamespace(namespace);
    policy.checkNamespaceProperties(metadata);
    run("createNamespace", () -> namespaces().createNamespace(namespace, metadata));
  }

  @Override
  public List<Namespace> listNamespaces() {
    return call("listNamespaces", () -> namespaces().listNamespaces());
  }

  @Override
  public List<Namespace> listNamespaces(Namespace namespace) {
    return call("listNamespaces", () -> namespaces().listNamespaces(namespace));
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(Namespace namespace) {
    return call("loadNamespaceMetadata", () -> namespaces().loadNamespaceMetadata(namespace));
  }

  @Override
  public boolean dropNamespace(Namespace namespace) {
    return call("dropNamespace", () -> namespaces().dropNamespace(namespace));
  }

  @Override
  public boolean setProperties(Namespace namespace, Map<String, String> properties) {
    policy.checkNamespaceProperties(properties);
    return call("setNamespaceProperties", () -> namespaces().setProperties(namespace, properties));
  }

  @Override
  public boolean removeProperties(Namespace namespace, Set<String> properties) {
    return call("removeNamespaceProperties", () -> namespaces().removeProperties(namespace, properties));
  }

  @Override
  public boolean namespaceExists(Namespace namespace) {
    return call("namespaceExists", () -> namespaces().namespaceExists(namespace));
  }

  // ---- lifecycle ----

  /** Closes the wrapped catalog (its connection pool or HTTP client). */
  @Override
  public void close() throws IOException {
    if (delegate instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (IOException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
    }
  }

  @Override
  public String toString() {
    return "LoggingCatalog[" + catalogId + "]";
  }

  private SupportsNamespaces namespaces() {
    if (delegate instanceof SupportsNamespaces namespaces) {
      return namespaces;
    }
    throw new UnsupportedOperationException("catalog '" + catalogId + "' does not support namespaces");
  }

  private void run(String operation, Runnable body) {
    call(operation, () -> {
      body.run();
      return null;
    });
  }

  private <T> T call(String operation, Supplier<T> body) {
    OperationListener.Operation traced = begin(operation);
    long start = System.nanoTime();
    try {
      T result = body.get();
      try {
        traced.result(result);
      } catch (RuntimeException listenerFailure) {
        LOG.debug("operation listener failed on the result of {}", operation, listenerFailure);
      }
      LOG.debug("catalog {} {} ok in {} ms", catalogId, operation, millisSince(start));
      end(traced, operation, null);
      return result;
    } catch (RuntimeException | Error e) {
      long millis = millisSince(start);
      String outcome = outcome(e);
      if (outcome == null) {
        LOG.warn("catalog {} {} failed in {} ms: {}",
            catalogId, operation, millis, CatalogRedaction.describe(e));
      } else {
        LOG.debug("catalog {} {} {} in {} ms", catalogId, operation, outcome, millis);
      }
      end(traced, operation, e);
      throw e;
    }
  }

  private OperationListener.Operation begin(String operation) {
    try {
      OperationListener.Operation op = listener.begin(catalogId, operation);
      return op == null ? OperationListener.Operation.NONE : op;
    } catch (RuntimeException e) {
      LOG.debug("catalog {} {}: operation listener failed to begin: {}", catalogId, operation, e.toString());
      return OperationListener.Operation.NONE;
    }
  }

  private void end(OperationListener.Operation traced, String operation, Throwable failure) {
    try {
      traced.end(failure);
    } catch (RuntimeException e) {
      LOG.debug("catalog {} {}: operation listener failed to end: {}", catalogId, operation, e.toString());
    }
  }

  /** The expected negative answers, or null for a real failure. */
  private static String outcome(Throwable e) {
    if (e instanceof NoSuchTableException || e instanceof NoSuchNamespaceException
        || e instanceof NoSuchViewException) {
      return "not_found";
    }
    if (e instanceof AlreadyExistsException) {
      return "already_exists";
    }
    return null;
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  /**
   * Logs the terminal operations of a table builder and holds them to the {@link
   * TableLocationPolicy}: the location and path properties when they are set, and, once a table
   * is created, that it shares storage with no other table (else it is dropped again).
   */
  private final class LoggingTableBuilder implements TableBuilder {
    private final TableIdentifier identifier;
    private final TableBuilder builder;
    private final Map<String, String> properties = new java.util.HashMap<>();
    private String location;

    LoggingTableBuilder(TableIdentifier identifier, TableBuilder builder) {
      this.identifier = identifier;
      this.builder = builder;
    }

    @Override
    public TableBuilder withPartitionSpec(PartitionSpec spec) {
      builder.withPartitionSpec(spec);
      return this;
    }

    @Override
    public TableBuilder withSortOrder(SortOrder sortOrder) {
      builder.withSortOrder(sortOrder);
      return this;
    }

    @Override
    public TableBuilder withLocation(String newLocation) {
      policy.checkTableLocation(newLocation);
      builder.withLocation(newLocation);
      this.location = newLocation;
      return this;
    }

    @Override
    public TableBuilder withProperties(Map<String, String> newProperties) {
      if (newProperties != null) {
        policy.checkTableProperties(newProperties, null);
        builder.withProperties(newProperties);
        properties.putAll(newProperties);
      }
      return this;
    }

    @Override
    public TableBuilder withProperty(String key, String value) {
      policy.checkTableProperties(Map.of(key, value), null);
      builder.withProperty(key, value);
      properties.put(key, value);
      return this;
    }

    @Override
    public Table create() {
      Table table = call("createTable", builder::create);
      try {
        policy.checkTableProperties(properties, table.location());
        policy.checkNoOverlap(table);
      } catch (SeException refused) {
        try {
          // Purge deletes only what the new table's own metadata references: its first metadata file.
          delegate.dropTable(identifier, true);
        } catch (RuntimeException e) {
          refused.addSuppressed(e);
        }
        LOG.info("catalog {}: table {} refused after creation: {}", catalogId, identifier, refused.getMessage());
        throw refused;
      }
      return table;
    }

    @Override
    public Transaction createTransaction() {
      return call("newCreateTableTransaction", builder::createTransaction);
    }

    @Override
    public Transaction replaceTransaction() {
      return call("newReplaceTableTransaction", builder::replaceTransaction);
    }

    @Override
    public Transaction createOrReplaceTransaction() {
      return call("newReplaceTableTransaction", builder::createOrReplaceTransaction);
    }
  }
}

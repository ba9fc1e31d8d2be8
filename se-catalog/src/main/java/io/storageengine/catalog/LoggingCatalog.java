package io.storageengine.catalog;

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

  public LoggingCatalog(String catalogId, Catalog delegate, OperationListener listener) {
    this.catalogId = Objects.requireNonNull(catalogId, "catalogId");
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.listener = listener == null ? OperationListener.NONE : listener;
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
    return call("createTable", () -> delegate.createTable(identifier, schema, spec, location, properties));
  }

  @Override
  public Table createTable(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties) {
    return call("createTable", () -> delegate.createTable(identifier, schema, spec, properties));
  }

  @Override
  public Table createTable(TableIdentifier identifier, Schema schema, PartitionSpec spec) {
    return call("createTable", () -> delegate.createTable(identifier, schema, spec));
  }

  @Override
  public Table createTable(TableIdentifier identifier, Schema schema) {
    return call("createTable", () -> delegate.createTable(identifier, schema));
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, String location,
      Map<String, String> properties) {
    return call("newCreateTableTransaction",
        () -> delegate.newCreateTableTransaction(identifier, schema, spec, location, properties));
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties) {
    return call("newCreateTableTransaction",
        () -> delegate.newCreateTableTransaction(identifier, schema, spec, properties));
  }

  @Override
  public Transaction newCreateTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec) {
    return call("newCreateTableTransaction",
        () -> delegate.newCreateTableTransaction(identifier, schema, spec));
  }

  @Override
  public Transaction newCreateTableTransaction(TableIdentifier identifier, Schema schema) {
    return call("newCreateTableTransaction", () -> delegate.newCreateTableTransaction(identifier, schema));
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, String location,
      Map<String, String> properties, boolean orCreate) {
    return call("newReplaceTableTransaction", () -> delegate.newReplaceTableTransaction(
        identifier, schema, spec, location, properties, orCreate));
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, Map<String, String> properties,
      boolean orCreate) {
    return call("newReplaceTableTransaction",
        () -> delegate.newReplaceTableTransaction(identifier, schema, spec, properties, orCreate));
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, PartitionSpec spec, boolean orCreate) {
    return call("newReplaceTableTransaction",
        () -> delegate.newReplaceTableTransaction(identifier, schema, spec, orCreate));
  }

  @Override
  public Transaction newReplaceTableTransaction(
      TableIdentifier identifier, Schema schema, boolean orCreate) {
    return call("newReplaceTableTransaction",
        () -> delegate.newReplaceTableTransaction(identifier, schema, orCreate));
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
    return call("registerTable", () -> delegate.registerTable(identifier, metadataFileLocation));
  }

  @Override
  public Table registerTable(TableIdentifier identifier, String metadataFileLocation, boolean overwrite) {
    return call("registerTable",
        () -> delegate.registerTable(identifier, metadataFileLocation, overwrite));
  }

  @Override
  public TableBuilder buildTable(TableIdentifier identifier, Schema schema) {
    return new LoggingTableBuilder(delegate.buildTable(identifier, schema));
  }

  // ---- SupportsNamespaces ----

  @Override
  public void createNamespace(Namespace namespace) {
    run("createNamespace", () -> namespaces().createNamespace(namespace));
  }

  @Override
  public void createNamespace(Namespace namespace, Map<String, String> metadata) {
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

  /** Logs the terminal operations of a table builder; the {@code with*} calls only configure it. */
  private final class LoggingTableBuilder implements TableBuilder {
    private final TableBuilder builder;

    LoggingTableBuilder(TableBuilder builder) {
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
    public TableBuilder withLocation(String location) {
      builder.withLocation(location);
      return this;
    }

    @Override
    public TableBuilder withProperties(Map<String, String> properties) {
      builder.withProperties(properties);
      return this;
    }

    @Override
    public TableBuilder withProperty(String key, String value) {
      builder.withProperty(key, value);
      return this;
    }

    @Override
    public Table create() {
      return call("createTable", builder::create);
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

package io.storageengine.ingest;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.SupportedTypes;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Ids;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds (or, for bulk ingest, creates) the target table in its tenant's catalog and turns it into
 * an {@link IngestTarget}. Catalog failures other than "not found" are UNAVAILABLE: the catalog
 * may come back, and nothing was written.
 *
 * <p>Every lookup asks the catalog for the table's current metadata (a stream never validates
 * against a table state older than its own start), but a table of a JDBC catalog looked up
 * before is <em>refreshed</em> instead of loaded again (see {@link #refreshable}): the catalog is asked where the table's metadata is,
 * and the metadata file is read and parsed only when that changed. With a JDBC catalog a stream
 * open then costs one catalog query, not a query, a file read and a JSON parse; a burst of streams
 * on one table shares one refresh (a lookup waits for a refresh that started after it arrived
 * and takes its result). What a lookup returns is pinned to the metadata it found: later
 * refreshes do not change it under its caller. The access check of {@link TenantCatalogs} runs on
 * every lookup; at most {@value #MAX_TABLES} tables are kept (least recently used dropped), and
 * an entry is used only with the catalog instance it was loaded from (a catalog whose config
 * changed starts afresh).
 */
final class TableResolver {
  private static final Logger LOG = LoggerFactory.getLogger(TableResolver.class);
  static final int MAX_TABLES = 1024;
  private static final Set<String> REFRESHABLE_OPERATIONS = Set.of("org.apache.iceberg.jdbc.JdbcTableOperations");

  private record Key(String catalogId, TableIdentifier identifier) {}

  private final TenantCatalogs catalogs;
  private final Map<Key, KnownTable> known = new LruMap<>(MAX_TABLES);

  TableResolver(TenantCatalogs catalogs) {
    this.catalogs = catalogs;
  }

  /** Loads the table; empty when it does not exist. */
  Optional<Table> find(String catalogId, TableIdentifier identifier) {
    Catalog catalog = catalog(catalogId);
    Key key = new Key(catalogId, identifier);
    try {
      KnownTable table = known(key);
      if (table != null && table.catalog() == catalog) {
        try {
          return Optional.of(table.current(System.nanoTime()));
        } catch (RuntimeException e) {
          // Dropped, or dropped and created again (Iceberg refuses a refresh to another table's
          // metadata), or the catalog failed: a fresh load answers, with its own error.
          forget(key);
        }
      }
      Table loaded = catalog.loadTable(identifier);
      if (refreshable(loaded)) {
        KnownTable made = new KnownTable(catalog, loaded);
        remember(key, made);
        return Optional.of(made.loaded());
      }
      return Optional.of(loaded);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      forget(key);
      return Optional.empty();
    } catch (SeException e) {
      forget(key);
      throw e;
    } catch (RuntimeException e) {
      forget(key);
      throw unavailable(catalogId, identifier, e);
    }
  }

  /**
   * Whether {@code table}'s operations are known to answer a refresh of a dropped table with
   * {@link NoSuchTableException} and of a dropped and re-created one with an error or the new
   * table's metadata. Iceberg's JDBC catalog (the {@code sql} and {@code embedded} catalog types)
   * does; others are loaded again on every lookup (Iceberg's in-memory catalog, for one, keeps
   * a dropped table's last metadata on refresh, and a REST catalog's refresh is a full load).
   */
  private static boolean refreshable(Table table) {
    return table instanceof HasTableOperations ops
        && REFRESHABLE_OPERATIONS.contains(ops.operations().getClass().getName());
  }

  /**
   * A table loaded before from {@code catalog}, refreshed on every use. {@link #current} is
   * serialized per table; a caller that arrived before a refresh started takes that refresh's
   * result instead of starting its own.
   */
  private static final class KnownTable {
    private final Catalog catalog;
    private final Table live;
    private final TableOperations ops;
    private long refreshStartedNanos;
    private Table pinned;

    KnownTable(Catalog catalog, Table live) {
      this.catalog = catalog;
      this.live = live;
      this.ops = ((HasTableOperations) live).operations();
      this.refreshStartedNanos = System.nanoTime();
      this.pinned = pinned(ops.current());
    }

    Catalog catalog() {
      return catalog;
    }

    /** The table as it was loaded. */
    synchronized Table loaded() {
      return pinned;
    }

    /** The table as the catalog has it now, for a caller that arrived at {@code arrivedNanos}. */
    synchronized Table current(long arrivedNanos) {
      if (refreshStartedNanos - arrivedNanos > 0) {
        return pinned; // a refresh that started after the caller arrived
      }
      refreshStartedNanos = System.nanoTime();
      TableMetadata before = ops.current();
      TableMetadata now = ops.refresh();
      if (now != before) {
        pinned = pinned(now);
      }
      return pinned;
    }

    /** {@code metadata} of this table as a table that never changes. */
    Table pinned(TableMetadata metadata) {
      return new BaseTable(new StaticTableOperations(metadata, ops.io(), ops.locationProvider()), live.name());
    }
  }

  private synchronized KnownTable known(Key key) {
    return known.get(key);
  }

  private synchronized void remember(Key key, KnownTable table) {
    known.put(key, table);
  }

  private synchronized void forget(Key key) {
    known.remove(key);
  }

  /** Loads the table or fails with NOT_FOUND naming it. */
  Table load(String catalogId, TableIdentifier identifier) {
    return find(catalogId, identifier).orElseThrow(() -> SeException.notFound(
        "table `%s` not found in catalog `%s`", identifier, catalogId));
  }

  /**
   * Creates an append table (format v3) with the schema of {@code arrow}, creating missing
   * namespaces. Returns empty when another writer created the table first.
   */
  Optional<Table> createAppendTable(String catalogId, TableIdentifier identifier,
      org.apache.arrow.vector.types.pojo.Schema arrow) {
    if (arrow.getFields().isEmpty()) {
      throw SeException.invalid("table `%s`: cannot be created from a schema with no columns",
          identifier);
    }
    Schema schema = IcebergArrowSchemas.fromArrow(arrow);
    Catalog catalog = catalog(catalogId);
    try {
      if (catalog instanceof SupportsNamespaces namespaces) {
        createNamespaces(namespaces, identifier.namespace());
      }
      return Optional.of(catalog.createTable(identifier, schema, PartitionSpec.unpartitioned(),
          Map.of("format-version", "3", TableProperties.MODE, TableProperties.MODE_APPEND)));
    } catch (AlreadyExistsException e) {
      return Optional.empty();
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unavailable(catalogId, identifier, e);
    }
  }

  private static void createNamespaces(SupportsNamespaces catalog, Namespace namespace) {
    String[] levels = namespace.levels();
    for (int i = 1; i <= levels.length; i++) {
      Namespace prefix = Namespace.of(Arrays.copyOf(levels, i));
      if (!catalog.namespaceExists(prefix)) {
        try {
          catalog.createNamespace(prefix);
        } catch (AlreadyExistsException e) {
          // Created concurrently: fine.
        }
      }
    }
  }

  /**
   * The target of a stream writing {@code operation} to {@code table}. The table is read through
   * {@link TableSettings} (the rules every other part of the engine applies) and must have only
   * {@link SupportedTypes supported} column types, also in columns the stream does not carry:
   * reconciliation writes every column, so a batch accepted into such a table could never be
   * published. INVALID_ARGUMENT otherwise, before anything reaches the WAL.
   */
  static IngestTarget target(String catalogId, TableIdentifier identifier, Table table,
      WalOperation operation) {
    Schema schema = table.schema();
    String name = catalogId + "." + identifier;
    TableSettings settings = TableSettings.of(name, schema, table.properties());
    SupportedTypes.requireIngestible(name, schema);
    TableWal wal = new TableWal(catalogId, table.uuid());
    if (!settings.entity()) {
      if (operation != WalOperation.UPSERT) {
        throw SeException.invalid("operation `delete`: table `%s` is an append table, which "
            + "accepts only upsert (append)", name);
      }
      return new IngestTarget(catalogId, identifier, wal, schema, false, List.of(), null, operation);
    }
    return new IngestTarget(catalogId, identifier, wal, schema, true, settings.primaryKeyNames(),
        settings.versionColumnName().orElse(null), operation);
  }

  private Catalog catalog(String catalogId) {
    Ids.requireCatalogId(catalogId);
    return catalogs.catalog(catalogId);
  }

  private static SeException unavailable(String catalogId, TableIdentifier id, RuntimeException e) {
    LOG.warn("catalog {} failed for table {}", catalogId, id, e);
    return new SeException(ErrorCode.UNAVAILABLE,
        String.format("catalog `%s` is unavailable (table `%s`)", catalogId, id), e);
  }
}

package io.storageengine.ingest;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.SupportedTypes;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableStateCache;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Ids;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
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
 * <p>Tables are looked up through a {@link TableStateCache}: every lookup asks the catalog for the
 * table's current state (a stream never validates against a state older than its own start),
 * but with the embedded and {@code sql} catalogs the table's metadata file is read and parsed
 * again only when it changed, and a burst of lookups of one table shares one refresh. What a
 * lookup returns is fixed at the state it found. The access check of {@link TenantCatalogs} runs
 * on every lookup.
 */
final class TableResolver {
  private static final Logger LOG = LoggerFactory.getLogger(TableResolver.class);
  private final TenantCatalogs catalogs;
  private final TableStateCache tables = new TableStateCache();

  TableResolver(TenantCatalogs catalogs) {
    this.catalogs = catalogs;
  }

  /** Loads the table; empty when it does not exist. */
  Optional<Table> find(String catalogId, TableIdentifier identifier) {
    Catalog catalog = catalog(catalogId);
    try {
      return Optional.of(tables.current(catalogId, catalog, identifier, () -> catalog.loadTable(identifier)));
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      return Optional.empty();
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unavailable(catalogId, identifier, e);
    }
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

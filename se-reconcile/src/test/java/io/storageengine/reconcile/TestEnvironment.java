package io.storageengine.reconcile;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * A tenant catalog (Iceberg {@code JdbcCatalog} on SQLite with a local warehouse), the real
 * {@link ObjectStoreWal} over a {@link MemoryObjectStore}, and a reconciler wired to both.
 * Close it last: the allocator's leak check fails the test if a buffer was not released.
 */
final class TestEnvironment implements AutoCloseable {
  static final String CATALOG = "tenant1";

  final BufferAllocator allocator = new RootAllocator();
  final DuckRuntime duckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
  final MemoryObjectStore store = new MemoryObjectStore();
  final ObjectStoreWal wal = new ObjectStoreWal(store, "test-writer");
  final TombstoneCache tombstones = TombstoneCache.create();
  /** The key indexes of the environment's reconcilers (64 MiB). */
  final KeyIndexes keyIndexes = new KeyIndexes(64L << 20);
  final JdbcCatalog catalog;
  Catalog servedCatalog;
  final TenantCatalogs catalogs;

  TestEnvironment(Path dir) {
    this(dir, Map.of(CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString()));
  }

  /** An environment whose warehouse is remote: Iceberg's in-memory FileIO, never a local path. */
  static TestEnvironment remote(Path dir) {
    return new TestEnvironment(dir, Map.of(
        CatalogProperties.WAREHOUSE_LOCATION, "mem://remote-" + java.util.UUID.randomUUID() + "/warehouse",
        CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.inmemory.InMemoryFileIO"));
  }

  private TestEnvironment(Path dir, Map<String, String> warehouse) {
    try {
      java.nio.file.Files.createDirectories(dir);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    catalog = new JdbcCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
    props.putAll(warehouse);
    props.put("jdbc.schema-version", "V1");
    catalog.initialize(CATALOG, props);
    catalog.createNamespace(Namespace.of("db"));
    servedCatalog = catalog;
    catalogs = id -> {
      if (!CATALOG.equals(id)) {
        throw SeException.notFound("catalog '%s' not found", id);
      }
      return servedCatalog;
    };
  }

  /**
   * A reconciler with {@code options}; every reconciler of the environment shares its key
   * indexes ({@link #keyIndexes}), as the passes of one process do, so a test that makes a
   * reconciler per pass still reuses them; {@code options.keyIndexBytes() == 0} turns them off.
   */
  Reconciler reconciler(ReconcileOptions options) {
    return reconciler(options, ReconcileHooks.NONE);
  }

  Reconciler reconciler(ReconcileOptions options, ReconcileHooks hooks) {
    return new Reconciler(catalogs, wal, store, tombstones, allocator, duckdb, options, hooks,
        io.storageengine.common.telemetry.Telemetry.none(),
        options.keyIndexBytes() == 0 ? KeyIndexes.none() : keyIndexes);
  }

  static ReconcileOptions options() {
    return ReconcileOptions.defaults().withDuckdbThreads(2);
  }

  Table createTable(String name, Schema schema, PartitionSpec spec, SortOrder order, Map<String, String> props) {
    Map<String, String> all = new HashMap<>(props);
    all.put("format-version", "3");
    return catalog.buildTable(TableIdentifier.of("db", name), schema)
        .withPartitionSpec(spec).withSortOrder(order).withProperties(all).create();
  }

  TableWal walOf(Table table, String name) {
    TableWal tw = new TableWal(CATALOG, table.uuid());
    wal.registerTableName(tw, new TableName(List.of("db"), name));
    return tw;
  }

  long append(TableWal tw, WalFrame... frames) {
    return wal.append(tw, Arrays.asList(frames));
  }

  static List<Record> readAll(Table table) {
    table.refresh();
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
      for (Record r : it) {
        rows.add(r.copy());
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return rows;
  }

  @Override
  public void close() throws Exception {
    catalog.close();
    tombstones.close();
    duckdb.close();
    allocator.close();
  }
}

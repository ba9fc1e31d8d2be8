package io.storageengine.query;

import io.storageengine.common.LruMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * The current state of the tables queries read, without reading and parsing a table's metadata
 * file again while it has not changed.
 *
 * <p>The first query of a table loads it through the tenant's catalog and keeps it; later queries
 * {@linkplain TableOperations#refresh refresh} the kept table, which for catalogs that look up
 * the current metadata location first (the embedded and {@code sql} catalogs) reads metadata only
 * when the location moved, and for a REST catalog asks the catalog again. Each query gets its own
 * read-only {@link Table} fixed at the state it was given, so concurrent queries never see a
 * table change under them; its {@link Table#refresh()} refreshes the kept table and moves only
 * that query's view forward.
 *
 * <p>A kept table is dropped, and the table loaded again, when the refresh fails (the table was
 * dropped, or replaced by another one of that name) or the tenant's catalog object is not the one
 * it was loaded from (the tenant's configuration changed). At most {@link #MAX_TABLES} tables are
 * kept, least recently used first out.
 */
final class TableStateCache {
  static final int MAX_TABLES = 1024;

  private record Key(String catalogId, TableIdentifier id) {}

  /** A table kept for one tenant's catalog object; refreshed under its own lock. */
  private static final class Kept {
    final Catalog catalog;
    final Table table;
    final TableOperations operations;

    Kept(Catalog catalog, Table table, TableOperations operations) {
      this.catalog = catalog;
      this.table = table;
      this.operations = operations;
    }

    synchronized TableMetadata refresh() {
      return operations.refresh();
    }

    synchronized TableMetadata current() {
      return operations.current();
    }
  }

  private final Map<Key, Kept> kept = new LruMap<>(MAX_TABLES);

  /**
   * The current state of table {@code id} of tenant {@code catalogId}, whose live catalog is
   * {@code catalog}; {@code load} loads it through that catalog (and throws its not-found error).
   */
  Table current(String catalogId, Catalog catalog, TableIdentifier id, Supplier<Table> load) {
    Key key = new Key(catalogId, id);
    Kept entry;
    synchronized (this) {
      entry = kept.get(key);
    }
    if (entry != null && entry.catalog == catalog) {
      try {
        return queryTable(entry, entry.refresh());
      } catch (RuntimeException e) {
        // Dropped, replaced, or the catalog failed: load it the ordinary way (which reports it).
        forget(key, entry);
      }
    }
    Table table = load.get();
    if (!(table instanceof HasTableOperations withOperations) || !(table instanceof BaseTable)) {
      return table;
    }
    Kept fresh = new Kept(catalog, table, withOperations.operations());
    synchronized (this) {
      kept.put(key, fresh);
    }
    return queryTable(fresh, fresh.current());
  }

  /** Tables kept (for tests). */
  synchronized int size() {
    return kept.size();
  }

  private synchronized void forget(Key key, Kept entry) {
    kept.remove(key, entry);
  }

  private static Table queryTable(Kept entry, TableMetadata metadata) {
    BaseTable live = (BaseTable) entry.table;
    return new BaseTable(new QueryTableOperations(entry, metadata), live.name(), live.reporter());
  }

  /**
   * One query's view of a kept table: {@link #current()} is the state the query was given until
   * {@link #refresh()} asks the catalog again. Read-only: commits are refused.
   */
  private static final class QueryTableOperations implements TableOperations {
    private final Kept entry;
    private volatile TableMetadata current;

    QueryTableOperations(Kept entry, TableMetadata current) {
      this.entry = entry;
      this.current = current;
    }

    @Override
    public TableMetadata current() {
      return current;
    }

    @Override
    public TableMetadata refresh() {
      current = entry.refresh();
      return current;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      throw new UnsupportedOperationException("a query's table is read-only");
    }

    @Override
    public FileIO io() {
      return entry.operations.io();
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return entry.operations.metadataFileLocation(fileName);
    }

    @Override
    public LocationProvider locationProvider() {
      return entry.operations.locationProvider();
    }
  }
}

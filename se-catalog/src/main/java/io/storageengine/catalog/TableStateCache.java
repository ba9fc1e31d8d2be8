package io.storageengine.catalog;

import io.storageengine.common.LruMap;
import java.util.Map;
import java.util.Set;
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
 * The current state of tables as their tenant's catalog has it, without reading and parsing a
 * table's metadata file again while it has not changed: what queries read, and the tables
 * ingest streams validate against and segments are checked against before their batches are
 * acknowledged.
 *
 * <p>The first use of a table loads it through the tenant's catalog and keeps it; later uses
 * {@linkplain TableOperations#refresh refresh} the kept table, which for catalogs that look up
 * the current metadata location first (the embedded and {@code sql} catalogs) reads metadata only
 * when the location moved, and for a REST catalog asks the catalog again. So every call sees the
 * catalog's state as of the call, never an older one. Each call gets its own read-only
 * {@link Table} fixed at the state it was given, so concurrent users never see a table change
 * under them; its {@link Table#refresh()} refreshes the kept table and moves only that view
 * forward. Refreshes of one table are serialized, and a call that arrived while another's refresh
 * was waiting takes the result of a refresh that started after it arrived instead of starting its
 * own: a burst of streams on one table costs about one catalog round trip, not one each.
 *
 * <p>Only tables whose operations report a drop on refresh are kept (Iceberg's JDBC and REST
 * catalogs: a dropped table's refresh fails, a dropped and re-created one's fails or answers the
 * new table); others (Iceberg's in-memory catalog keeps a dropped table's last metadata on
 * refresh) are loaded on every call. A kept table is dropped, and the table loaded again, when
 * the refresh fails (the table was dropped, or replaced by another one of that name) or the
 * tenant's catalog object is not the one it was loaded from (the tenant's configuration
 * changed). At most {@link #MAX_TABLES} tables are kept, least recently used first out.
 */
public final class TableStateCache {
  public static final int MAX_TABLES = 1024;

  /** The operations whose refresh of a dropped table fails (see the class comment). */
  private static final Set<String> REFRESHABLE = Set.of(
      "org.apache.iceberg.jdbc.JdbcTableOperations", "org.apache.iceberg.rest.RESTTableOperations");

  private record Key(String catalogId, TableIdentifier id) {}

  /** A table kept for one tenant's catalog object; refreshed under its own lock. */
  private static final class Kept {
    final Catalog catalog;
    final Table table;
    final TableOperations operations;
    /** When the last refresh started, and what it answered (null: none yet, or it failed). */
    private long refreshStartedNanos;
    private TableMetadata refreshed;

    Kept(Catalog catalog, Table table, TableOperations operations) {
      this.catalog = catalog;
      this.table = table;
      this.operations = operations;
    }

    /** The table's current metadata for a caller that arrived at {@code arrivedNanos}. */
    synchronized TableMetadata refresh(long arrivedNanos) {
      if (refreshed != null && refreshStartedNanos - arrivedNanos > 0) {
        return refreshed; // a refresh that started after the caller arrived
      }
      refreshStartedNanos = System.nanoTime();
      refreshed = null; // a refresh that throws leaves nothing for later callers to take
      refreshed = operations.refresh();
      return refreshed;
    }

    synchronized TableMetadata refresh() {
      return refresh(System.nanoTime());
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
  public Table current(String catalogId, Catalog catalog, TableIdentifier id, Supplier<Table> load) {
    long arrived = System.nanoTime();
    Key key = new Key(catalogId, id);
    Kept entry;
    synchronized (this) {
      entry = kept.get(key);
    }
    if (entry != null && entry.catalog == catalog) {
      try {
        return queryTable(entry, entry.refresh(arrived));
      } catch (RuntimeException e) {
        // Dropped, replaced, or the catalog failed: load it the ordinary way (which reports it).
        forget(key, entry);
      }
    }
    Table table = load.get();
    if (!(table instanceof HasTableOperations withOperations) || !(table instanceof BaseTable)
        || !REFRESHABLE.contains(withOperations.operations().getClass().getName())) {
      return table;
    }
    Kept fresh = new Kept(catalog, table, withOperations.operations());
    synchronized (this) {
      kept.put(key, fresh);
    }
    return queryTable(fresh, fresh.current());
  }

  /** How many tables are kept now. */
  public synchronized int size() {
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
   * One caller's view of a kept table: {@link #current()} is the state the query was given until
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
      throw new UnsupportedOperationException("a table of the table state cache is read-only: commit through the catalog");
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

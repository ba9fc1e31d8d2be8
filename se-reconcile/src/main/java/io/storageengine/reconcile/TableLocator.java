package io.storageengine.reconcile;

import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalLog;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * Finds the table a WAL belongs to by its UUID: first under the name recorded next to the WAL
 * (or the name it was last found under), then, if that name is gone or now holds another table
 * (renamed, or dropped and re-created), by searching every namespace of the catalog.
 */
public final class TableLocator {
  private final WalLog wal;
  private final Map<TableWal, TableIdentifier> lastSeen = new ConcurrentHashMap<>();

  public TableLocator(WalLog wal) {
    this.wal = wal;
  }

  /** The table, or empty when no table of the catalog has the WAL's UUID (dropped). */
  public Optional<Table> locate(Catalog catalog, TableWal tableWal) {
    TableIdentifier remembered = lastSeen.get(tableWal);
    if (remembered != null) {
      Optional<Table> t = loadIfMatches(catalog, remembered, tableWal);
      if (t.isPresent()) {
        return t;
      }
    }
    Optional<TableName> hint = wal.tableName(tableWal);
    if (hint.isPresent()) {
      TableIdentifier id = TableIdentifier.of(
          Namespace.of(hint.get().namespace().toArray(new String[0])), hint.get().name());
      if (!id.equals(remembered)) {
        Optional<Table> t = loadIfMatches(catalog, id, tableWal);
        if (t.isPresent()) {
          lastSeen.put(tableWal, id);
          return t;
        }
      }
    }
    return search(catalog, tableWal);
  }

  private Optional<Table> loadIfMatches(Catalog catalog, TableIdentifier id, TableWal tableWal) {
    try {
      Table table = catalog.loadTable(id);
      return tableWal.tableUuid().equals(table.uuid()) ? Optional.of(table) : Optional.empty();
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      return Optional.empty();
    }
  }

  private Optional<Table> search(Catalog catalog, TableWal tableWal) {
    if (!(catalog instanceof SupportsNamespaces namespaces)) {
      return Optional.empty();
    }
    Deque<Namespace> pending = new ArrayDeque<>(namespaces.listNamespaces());
    while (!pending.isEmpty()) {
      Namespace ns = pending.pop();
      try {
        for (TableIdentifier id : catalog.listTables(ns)) {
          Optional<Table> t = loadIfMatches(catalog, id, tableWal);
          if (t.isPresent()) {
            lastSeen.put(tableWal, id);
            return t;
          }
        }
        pending.addAll(namespaces.listNamespaces(ns));
      } catch (NoSuchNamespaceException e) {
        // Dropped while we searched: nothing of ours there.
      }
    }
    return Optional.empty();
  }
}

package io.storageengine.ingest;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;

/**
 * Confirms, after a WAL segment is durable and before its batches are acknowledged, that the
 * table the segment was written for still exists: a table of the catalog has the segment's
 * Iceberg table UUID. A batch acknowledged for a dropped table would sit in a WAL nobody ever
 * publishes, so it must be refused instead.
 *
 * <p>One catalog lookup per segment (under the name the table was last seen by, through the
 * {@link TableResolver}: the catalog is asked for the table's current metadata, whose file is read
 * again only when it changed); only when that name is gone or now holds another table (renamed,
 * or dropped and re-created) does it search the catalog's namespaces for the UUID, so a renamed
 * table keeps being acknowledged.
 *
 * <p>Not thread-safe: each {@link TableCommitter} owns one and writes one segment at a time.
 */
final class TableIdentityCheck {
  private final TenantCatalogs catalogs;
  private final TableResolver tables;
  private final String catalogId;
  private final UUID uuid;
  private final String displayName;
  private TableIdentifier lastSeen;

  TableIdentityCheck(TenantCatalogs catalogs, TableResolver tables, IngestTarget target) {
    this.catalogs = catalogs;
    this.tables = tables;
    this.catalogId = target.catalogId();
    this.uuid = target.wal().tableUuid();
    this.displayName = target.displayName();
    this.lastSeen = target.identifier();
  }

  /**
   * Returns when the table still exists. Throws NOT_FOUND ("table ... was dropped") when no
   * table of the catalog has the UUID, UNAVAILABLE when the catalog cannot tell.
   */
  void requireExists() {
    boolean found;
    try {
      found = matches(lastSeen) || search(catalogs.catalog(catalogId));
    } catch (SeException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        throw dropped("its catalog `" + catalogId + "` no longer exists");
      }
      throw unavailable(e);
    } catch (RuntimeException e) {
      throw unavailable(e);
    }
    if (!found) {
      throw dropped("no table of catalog `" + catalogId + "` has its UUID " + uuid + " any more");
    }
  }

  private boolean matches(TableIdentifier id) {
    return tables.find(catalogId, id).map(table -> uuid.equals(table.uuid())).orElse(false);
  }

  private boolean search(Catalog catalog) {
    if (!(catalog instanceof SupportsNamespaces namespaces)) {
      return false;
    }
    Deque<Namespace> pending = new ArrayDeque<>(namespaces.listNamespaces());
    while (!pending.isEmpty()) {
      Namespace ns = pending.pop();
      try {
        for (TableIdentifier id : catalog.listTables(ns)) {
          if (!id.equals(lastSeen) && matches(id)) {
            lastSeen = id; // renamed: later segments load it under its new name
            return true;
          }
        }
        pending.addAll(namespaces.listNamespaces(ns));
      } catch (NoSuchNamespaceException e) {
        // Dropped while we searched: the table is not there.
      }
    }
    return false;
  }

  private SeException dropped(String why) {
    return SeException.notFound("table `%s` was dropped (%s): batches written after the drop "
        + "are not acknowledged and will never be published", displayName, why);
  }

  private SeException unavailable(RuntimeException e) {
    String detail = e instanceof SeException se ? ": " + se.getMessage() : "";
    return new SeException(ErrorCode.UNAVAILABLE, "catalog `" + catalogId + "` is unavailable: "
        + "could not confirm that table `" + displayName + "` still exists" + detail
        + "; retry the batch", e);
  }
}

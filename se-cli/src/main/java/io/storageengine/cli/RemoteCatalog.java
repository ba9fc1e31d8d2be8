package io.storageengine.cli;

import io.storageengine.common.SeException;
import java.util.Arrays;
import java.util.Map;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/** An Iceberg REST client of one tenant's catalog, through the server's REST facade. */
final class RemoteCatalog {
  private RemoteCatalog() {}

  static RESTCatalog open(String serverAddress, String catalogId) {
    String base = serverAddress.contains("://") ? serverAddress : "http://" + serverAddress;
    if (base.endsWith("/")) {
      base = base.substring(0, base.length() - 1);
    }
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize(catalogId, Map.of("uri", base + "/catalogs/" + catalogId));
    return catalog;
  }

  /** {@code a.b.t} is table {@code t} in namespace {@code a.b}. */
  static TableIdentifier parseTable(String text) {
    String[] parts = text.split("\\.", -1);
    if (parts.length < 2 || Arrays.stream(parts).anyMatch(String::isBlank)) {
      throw SeException.invalid("--table: expected namespace.table (e.g. analytics.events.page_views), got '%s'", text);
    }
    return TableIdentifier.of(Namespace.of(Arrays.copyOf(parts, parts.length - 1)), parts[parts.length - 1]);
  }
}

package io.storageengine.cli;

import java.util.Map;
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
  }}

package io.storageengine.stress;

import io.storageengine.common.SeException;
import java.net.URI;
import java.util.Map;
import org.apache.arrow.flight.Location;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Where a server listens: one {@code host:port} carrying HTTP (health, the Iceberg REST facade)
 * and gRPC (Flight ingestion, Flight SQL).
 */
record ServerEndpoint(String host, int port) {

  /** Parses {@code host:port} or {@code http://host:port}. */
  static ServerEndpoint parse(String address) {
    URI uri;
    try {
      uri = URI.create(address.contains("://") ? address : "http://" + address);
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("--server-address: expected host:port, got '%s'", address);
    }
    if (uri.getHost() == null || uri.getPort() < 0) {
      throw SeException.invalid("--server-address: expected host:port, got '%s'", address);
    }
    return new ServerEndpoint(uri.getHost(), uri.getPort());
  }

  Location flightLocation() {
    return Location.forGrpcInsecure(host, port);
  }

  String httpBase() {
    return "http://" + host + ":" + port;
  }

  /**
   * An Iceberg REST client of {@code catalogId} through the server's facade. The embedded
   * warehouse is on this host's disk, so the tables' files are readable through Hadoop's local
   * file system.
   */
  RESTCatalog restCatalog(String catalogId) {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    // Scan metrics would be posted asynchronously, possibly after the client is closed.
    catalog.initialize(catalogId, Map.of("uri", httpBase() + "/catalogs/" + catalogId,
        "rest-metrics-reporting-enabled", "false"));
    return catalog;
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}

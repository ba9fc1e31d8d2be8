package io.storageengine.stress;

import io.storageengine.common.SeException;
import io.storageengine.ingest.client.BearerToken;
import io.storageengine.ingest.client.IngestClient;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Where a server listens: one {@code host:port} carrying HTTP (health, the Iceberg REST facade)
 * and gRPC (Flight ingestion, Flight SQL), and the token every client of it sends (empty for a
 * server in {@code --auth.mode none}).
 */
record ServerEndpoint(String host, int port, Optional<String> token) {
  ServerEndpoint {
    Objects.requireNonNull(token, "token");
  }

  /** An endpoint without credentials. */
  ServerEndpoint(String host, int port) {
    this(host, port, Optional.empty());
  }

  /** This endpoint, its clients sending {@code token} ({@code null} or blank: none). */
  ServerEndpoint withToken(String token) {
    return new ServerEndpoint(host, port, token == null || token.isBlank() ? Optional.empty() : Optional.of(token));
  }

  /** An ingest client sending the token. */
  IngestClient ingestClient(BufferAllocator allocator) {
    return token.isPresent() ? IngestClient.connect(flightLocation(), allocator, token.get())
        : IngestClient.connect(flightLocation(), allocator);
  }

  /** A Flight client sending the token. */
  FlightClient flightClient(BufferAllocator allocator) {
    FlightClient.Builder builder = FlightClient.builder(allocator, flightLocation());
    token.ifPresent(t -> builder.intercept(new BearerToken(t)));
    return builder.build();
  }

  /** {@code request} with the token's {@code Authorization} header. */
  HttpRequest.Builder authorize(HttpRequest.Builder request) {
    token.ifPresent(t -> request.header("Authorization", "Bearer " + t));
    return request;
  }

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
    Map<String, String> properties = new HashMap<>(Map.of("uri", httpBase() + "/catalogs/" + catalogId,
        "rest-metrics-reporting-enabled", "false"));
    // Iceberg's REST client sends the token property as a bearer token.
    token.ifPresent(t -> properties.put("token", t));
    catalog.initialize(catalogId, properties);
    return catalog;
  }

  @Override
  public String toString() {
    // Never the token.
    return host + ":" + port;
  }
}

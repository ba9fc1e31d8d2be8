package io.storageengine.cli;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.rest.RESTCatalog;

/** An Iceberg REST client of one tenant's catalog, through the server's REST facade. */
final class RemoteCatalog {
  private RemoteCatalog() {}

  /** The catalog {@code catalogId}, without credentials (servers in --auth.mode none). */
  static RESTCatalog open(String serverAddress, String catalogId) {
    return open(serverAddress, catalogId, Optional.empty(), Optional.empty());
  }

  /**
   * The catalog {@code catalogId}; {@code token}, when given, goes with every request as a bearer
   * token; an {@code https://} server is verified against {@code caBundle} when given (else the
   * JDK's trust store).
   */
  static RESTCatalog open(String serverAddress, String catalogId, Optional<String> token, Optional<Path> caBundle) {
    String base = HttpApi.httpBase(serverAddress);
    RESTCatalog catalog = new RESTCatalog();
    Map<String, String> properties = new HashMap<>();
    properties.put("uri", base + "/catalogs/" + catalogId);
    caBundle.ifPresent(bundle -> {
      properties.put("rest.client.tls.configurer-impl", CaBundleTlsConfigurer.class.getName());
      properties.put(CaBundleTlsConfigurer.BUNDLE, bundle.toString());
    });
    // Iceberg's REST client sends the "token" property as Authorization: Bearer <token>.
    token.ifPresent(t -> properties.put("token", t));
    catalog.initialize(catalogId, properties);
    return catalog;
  }}

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
    // A command reads metadata and exits: a scan's metrics report, sent in the background after
    // the scan, found the client closed and printed a stack trace after `se table describe`.
    properties.put("rest-metrics-reporting-enabled", "false");
    caBundle.ifPresent(bundle -> {
      properties.put("rest.client.tls.configurer-impl", CaBundleTlsConfigurer.class.getName());
      properties.put(CaBundleTlsConfigurer.BUNDLE, bundle.toString());
    });
    // Iceberg's REST client sends the "token" property as Authorization: Bearer <token>. Naming
    // its OAuth2 manager and endpoint explicitly (the facade has none: a static token is never
    // exchanged or refreshed) keeps the client from warning about defaults on every command.
    token.ifPresent(t -> {
      properties.put("token", t);
      properties.put("rest.auth.type", "oauth2");
      properties.put("oauth2-server-uri", base + "/catalogs/" + catalogId + "/v1/oauth/tokens");
      properties.put("token-refresh-enabled", "false");
    });
    catalog.initialize(catalogId, properties);
    return catalog;
  }}

package io.storageengine.server;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.rest.RESTCompatibilityKitViewCatalogTests;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Iceberg's REST Compatibility Kit, view part (create, load, replace, rename, drop, list views),
 * run by Iceberg's own {@code RESTCatalog} client against the facade on a real listener. Every
 * test of the kit is inherited and none is overridden; only the kit's hook for requested view
 * locations points under the tenant's storage root.
 */
class RestKitViewCatalogTest extends RESTCompatibilityKitViewCatalogTests {
  @RegisterExtension
  static final RestKitServer SERVER = new RestKitServer();
  private static final AtomicInteger RUN = new AtomicInteger();

  @BeforeEach
  void nextRun() {
    RUN.incrementAndGet();
  }

  @Override
  protected String viewLocation(String... paths) {
    // In the form the kit's own default has (java.io.File's URI): the kit compares prefixes.
    return SERVER.requestedLocation(RUN.get(), paths).replaceFirst("^file://", "file:");
  }
}

package io.storageengine.server;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Iceberg's REST Compatibility Kit, catalog part (namespaces, tables, commits, transactions,
 * register, metrics), run by Iceberg's own {@code RESTCatalog} client against the facade on a
 * real listener. Every test of the kit is inherited and none is overridden; only the kit's hook
 * for requested table locations points under the tenant's storage root.
 */
class RestKitCatalogTest extends RESTCompatibilityKitCatalogTests {
  @RegisterExtension
  static final RestKitServer SERVER = new RestKitServer();
  private static final AtomicInteger RUN = new AtomicInteger();

  @BeforeEach
  void nextRun() {
    RUN.incrementAndGet();
  }

  @Override
  protected String baseTableLocation(TableIdentifier identifier) {
    return SERVER.requestedLocation(RUN.get(), identifier.namespace().toString(), identifier.name());
  }
}

package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.secretstore.MemorySecretStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalogServer;
import org.apache.iceberg.rest.RESTServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The registry's {@code rest} type against Iceberg's own REST catalog test server. */
class RestCatalogRegistryTest {
  private static final Path WAREHOUSE = tempDir();

  // rest.port "0" makes the extension pick a free port and write it back into config().
  // The server backs onto a JdbcCatalog on "jdbc:sqlite::memory:" ("uri" cannot be changed: the
  // extension's own client reads it too), where every pooled connection would see its own empty
  // database: one connection keeps it consistent.
  @RegisterExtension
  static final RESTServerExtension REST = new RESTServerExtension(new HashMap<>(Map.of(
      RESTCatalogServer.REST_PORT, RESTServerExtension.FREE_PORT,
      "warehouse", WAREHOUSE.resolve("warehouse").toUri().toString(),
      "clients", "1")));

  @AfterAll
  static void cleanUp() throws IOException {
    try (Stream<Path> files = Files.walk(WAREHOUSE)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static String restUri() {
    return "http://127.0.0.1:" + REST.config().get(RESTCatalogServer.REST_PORT);
  }

  @Test
  void createsNamespaceAndTableThroughTheRegistryAndLoadsThemBack() {
    MemorySecretStore secrets = new MemorySecretStore();
    try (TenantCatalogRegistry registry = new TenantCatalogRegistry(secrets, Optional.empty())) {
      registry.create("upstream", CatalogConfig.rest(restUri())
          .withProperties(Map.of("header.X-Client", "storage-engine", "token", "ignored-by-test-server")));
      Catalog catalog = registry.catalog("upstream");
      assertThat(catalog.name()).isEqualTo("upstream");

      TableIdentifier id = TableIdentifier.of(Namespace.of("bronze", "web"), "hits");
      Tables.create(catalog, id, TableDefinition.builder("id bigint not null, url string, ts timestamptz")
          .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("ts")
          .partitionBy("day(ts)").sortBy("url").build());

      assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("bronze", "web"))).isTrue();
      Table table = catalog.loadTable(id);
      assertThat(TableUtil.formatVersion(table)).isEqualTo(3);
      assertThat(table.schema().identifierFieldNames()).containsExactly("id");
      assertThat(table.properties()).containsEntry("se.mode", "entity").containsEntry("se.version-column", "ts");
      assertThat(table.location()).contains(WAREHOUSE.toString());

      // A second registry over the same secrets reaches the same upstream tables.
      try (TenantCatalogRegistry again = new TenantCatalogRegistry(secrets, Optional.empty())) {
        assertThat(again.catalog("upstream").listTables(Namespace.of("bronze", "web"))).containsExactly(id);
        assertThat(again.config("upstream").toResponseJson("upstream").toString())
            .doesNotContain("ignored-by-test-server");
      }
    }
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("se-rest-catalog");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

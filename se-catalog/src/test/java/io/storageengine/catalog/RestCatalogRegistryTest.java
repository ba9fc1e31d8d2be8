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

  @Test
  void aRestTenantWithAStorageRootIsHeldToIt() {
    MemorySecretStore secrets = new MemorySecretStore();
    String root = WAREHOUSE.resolve("warehouse").toUri().toString();
    try (TenantCatalogRegistry registry = new TenantCatalogRegistry(secrets, Optional.empty())) {
      registry.create("confined", CatalogConfig.rest(restUri())
          .withProperties(Map.of(LocationConfinement.ROOT_PROPERTY, root)));
      registry.create("open", CatalogConfig.rest(restUri()));
      Catalog confined = registry.catalog("confined");
      ((SupportsNamespaces) confined).createNamespace(Namespace.of("jail"));
      TableDefinition definition = TableDefinition.builder("id bigint not null").build();

      // Locations the upstream assigns lie under the root: accepted.
      Table inside = Tables.create(confined, TableIdentifier.of("jail", "inside"), definition);
      assertThat(LocationConfinement.isUnder(inside.location(), root)).isTrue();

      // An explicit location elsewhere is refused before the upstream sees it.
      String outside = WAREHOUSE.resolve("elsewhere").toUri().toString();
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> confined.buildTable(
              TableIdentifier.of("jail", "out"), inside.schema()).withLocation(outside).create())
          .hasMessageContaining("outside the catalog's storage root");
      assertThat(confined.tableExists(TableIdentifier.of("jail", "out"))).isFalse();

      // A table the upstream placed outside (created by another client) cannot be read or
      // written through the confined tenant's FileIO.
      Table placed = registry.catalog("open").buildTable(TableIdentifier.of("jail", "placed"), inside.schema())
          .withLocation(outside + "/placed").create();
      Table seen = confined.loadTable(TableIdentifier.of("jail", "placed"));
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> seen.io().newInputFile(placed.location() + "/metadata/x"))
          .hasMessageContaining("outside the catalog's storage root");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> seen.io().deleteFile(placed.location() + "/data/f.parquet"))
          .hasMessageContaining("outside the catalog's storage root");
      assertThat(LocationConfinement.of(seen).contains(seen.location())).isFalse();
    }
  }
}

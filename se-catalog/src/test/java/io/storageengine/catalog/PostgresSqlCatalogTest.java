package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.testing.LocalPostgres;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code sql} catalog on a real PostgreSQL server (started by the test from the machine's
 * PostgreSQL installation, password authentication over TCP), through the tenant registry.
 */
class PostgresSqlCatalogTest {
  private static LocalPostgres postgres;

  @TempDir Path dir;

  @BeforeAll
  static void startPostgres() throws Exception {
    Assumptions.assumeTrue(LocalPostgres.installation().isPresent(),
        "PostgreSQL is not installed on this machine (Debian: apt-get install postgresql)");
    postgres = LocalPostgres.start("s3cret-pw");
  }

  @AfterAll
  static void stopPostgres() {
    if (postgres != null) {
      postgres.close();
    }
  }

  private TenantCatalogRegistry registry() {
    return TenantCatalogRegistry.builder(new FileSecretStore(new MemoryObjectStore(), io.storageengine.secretstore.SecretStoreKey.random())).build();
  }

  private CatalogConfig config(String password) {
    return new CatalogConfig(CatalogConfig.Type.SQL, postgres.jdbcUrl("postgres"), "file://" + dir.resolve("wh"),
        Map.of("jdbc.user", LocalPostgres.USER, "jdbc.password", password));
  }

  @Test
  void createsLoadsAndCommitsTablesWithCompareAndSwapCommits() {
    try (TenantCatalogRegistry registry = registry()) {
      registry.create("pg", config(postgres.password()));
      Catalog catalog = registry.catalog("pg");
      TableIdentifier id = TableIdentifier.of("sales", "orders");
      Tables.create(catalog, id, TableDefinition.builder("id bigint not null, v string")
          .mode(TableDefinition.Mode.ENTITY).primaryKey("id").build());
      assertThat(catalog.listTables(Namespace.of("sales"))).containsExactly(id);

      Table first = catalog.loadTable(id);
      Table second = catalog.loadTable(id);
      assertThat(first.schema().identifierFieldNames()).containsExactly("id");
      first.newAppend().appendFile(dataFile(first, "a")).commit();
      // A writer that loaded the table before that commit: its commit must not overwrite it.
      // Iceberg refreshes and retries an append, so both files end up in the table.
      second.newAppend().appendFile(dataFile(second, "b")).commit();
      Table reloaded = catalog.loadTable(id);
      assertThat(reloaded.snapshots()).hasSize(2);
      assertThat(reloaded.currentSnapshot().summary()).containsEntry("total-data-files", "2");

      // Metadata swaps are conditional on the location the writer saw.
      var ops = ((org.apache.iceberg.HasTableOperations) first).operations();
      var stale = ops.current();
      ops.refresh();
      assertThatThrownBy(() -> ops.commit(stale, org.apache.iceberg.TableMetadata.buildFrom(stale)
          .setProperties(Map.of("x", "y")).build()))
          .isInstanceOf(CommitFailedException.class);

      assertThat(catalog.dropTable(id, false)).isTrue();
      assertThat(catalog.tableExists(id)).isFalse();
    }
  }

  @Test
  void aWrongPasswordIsAClearErrorWithoutThePassword() {
    try (TenantCatalogRegistry registry = registry()) {
      assertThatThrownBy(() -> {
        registry.create("bad", config("not-the-password"));
        registry.catalog("bad").tableExists(TableIdentifier.of("n", "t"));
      }).isInstanceOf(SeException.class)
          .hasMessageContaining("catalog 'bad'")
          .satisfies(e -> assertThat(((SeException) e).code()).isIn(ErrorCode.UNAVAILABLE, ErrorCode.INVALID_ARGUMENT))
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-the-password"));
    }
  }

  private static DataFile dataFile(Table table, String name) {
    return DataFiles.builder(table.spec()).withPath(table.location() + "/data/" + name + ".parquet")
        .withFormat(FileFormat.PARQUET).withFileSizeInBytes(10).withRecordCount(1).build();
  }
}

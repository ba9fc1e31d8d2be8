package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.secretstore.SecretStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TenantCatalogRegistryTest {
  private static final io.storageengine.secretstore.SecretStoreKey SECRET_KEY = io.storageengine.secretstore.SecretStoreKey.random();
  @TempDir Path dir;
  private final MemoryObjectStore objects = new MemoryObjectStore();
  private final SecretStore secrets = new FileSecretStore(objects, SECRET_KEY);
  private final List<String> operations = Collections.synchronizedList(new ArrayList<>());
  private final List<TenantCatalogRegistry> registries = new ArrayList<>();

  @AfterEach
  void closeAll() {
    registries.forEach(TenantCatalogRegistry::close);
  }

  private TenantCatalogRegistry registry(Optional<Path> embeddedRoot) {
    TenantCatalogRegistry r = TenantCatalogRegistry.builder(secrets).embeddedRoot(embeddedRoot)
        .revalidateAfter(Duration.ZERO)
        .listener((catalogId, op) -> failure -> operations.add(catalogId + ":" + op + (failure == null ? ":ok" : ":failed")))
        .build();
    registries.add(r);
    return r;
  }

  private CatalogConfig sqlite(String name) {
    return CatalogConfig.sql("jdbc:sqlite:" + dir.resolve(name + ".db"), "file://" + dir.resolve(name + "-wh"));
  }

  private static void assertCode(Runnable call, ErrorCode code, String message) {
    assertThatThrownBy(call::run)
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(code));
  }

  private static Table createAndLoad(Catalog catalog, String ns, String name) {
    TableIdentifier id = TableIdentifier.of(ns, name);
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null, v string")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").build());
    return catalog.loadTable(id);
  }

  @Test
  void sqlCatalogOnSqliteCreatesAndLoadsTables() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    registry.create("lake", sqlite("lake"));
    Catalog catalog = registry.catalog("lake");
    assertThat(catalog).isInstanceOf(LoggingCatalog.class).isInstanceOf(SupportsNamespaces.class);
    Table table = createAndLoad(catalog, "sales", "orders");
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
    assertThat(catalog.listTables(Namespace.of("sales"))).containsExactly(TableIdentifier.of("sales", "orders"));
    assertThat(registry.catalog("lake")).isSameAs(catalog);
    assertThat(operations).contains("lake:createNamespace:ok", "lake:createTable:ok", "lake:loadTable:ok");
  }

  @Test
  void embeddedCatalogLivesUnderTheEmbeddedRoot() {
    TenantCatalogRegistry registry = registry(Optional.of(dir.resolve("embedded")));
    registry.create("warehouse", CatalogConfig.embedded());
    Table table = createAndLoad(registry.catalog("warehouse"), "db", "t");
    assertThat(dir.resolve("embedded/warehouse/catalog.db")).exists();
    assertThat(table.location()).startsWith("file://" + dir.resolve("embedded/warehouse/warehouse/db/t"));
  }

  @Test
  void embeddedWithoutRootIsRefused() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    assertCode(() -> registry.create("warehouse", CatalogConfig.embedded()), ErrorCode.INVALID_ARGUMENT,
        "catalog 'warehouse': type embedded needs cluster storage on a local file system (the fs object store); "
            + "use type rest or sql");
    assertThat(secrets.get("catalog/warehouse")).isEmpty();
  }

  @Test
  void configsSurviveANewRegistryOverTheSameStore() {
    TenantCatalogRegistry first = registry(Optional.of(dir));
    first.create("one", sqlite("one"));
    first.create("two", CatalogConfig.embedded());
    createAndLoad(first.catalog("one"), "n", "t");
    first.close();

    TenantCatalogRegistry second = TenantCatalogRegistry.builder(new FileSecretStore(objects, SECRET_KEY))
        .embeddedRoot(Optional.of(dir)).build();
    registries.add(second);
    assertThat(second.config("one")).isEqualTo(sqlite("one"));
    assertThat(second.config("two")).isEqualTo(CatalogConfig.embedded());
    assertThat(second.catalog("one").tableExists(TableIdentifier.of("n", "t"))).isTrue();
  }

  @Test
  void duplicateCreateAndMissingCatalog() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    registry.create("a", sqlite("a"));
    assertCode(() -> registry.create("a", sqlite("other")), ErrorCode.ALREADY_EXISTS, "catalog 'a' already exists");
    assertThat(registry.config("a")).isEqualTo(sqlite("a"));
    assertCode(() -> registry.config("nope"), ErrorCode.NOT_FOUND, "catalog 'nope' not found");
    assertCode(() -> registry.catalog("nope"), ErrorCode.NOT_FOUND, "catalog 'nope' not found");
    assertCode(() -> registry.catalog("Bad Id"), ErrorCode.INVALID_ARGUMENT,
        "invalid catalog id 'Bad Id': must match ^[a-z][a-z0-9_-]{0,62}$");
  }

  @Test
  void deleteIsIdempotentAndClosesTheLiveCatalog() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    registry.create("a", sqlite("a"));
    Catalog live = registry.catalog("a");
    ((SupportsNamespaces) live).createNamespace(Namespace.of("n"));
    registry.delete("a");
    registry.delete("a");
    registry.delete("never-existed");
    assertCode(() -> registry.catalog("a"), ErrorCode.NOT_FOUND, "catalog 'a' not found");
    assertThatThrownBy(() -> live.listTables(Namespace.of("n")))
        .hasMessageContaining("closed");
    registry.create("a", sqlite("a"));
    assertThat(registry.catalog("a")).isNotSameAs(live);
  }

  @Test
  void changedConfigRebuildsAndDeletionElsewhereCloses() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    registry.create("a", sqlite("a1"));
    Catalog first = registry.catalog("a");
    createAndLoad(first, "n", "t");

    // Another process rewrites the stored config.
    secrets.put("catalog/a", sqlite("a2").toBytes());
    Catalog second = registry.catalog("a");
    assertThat(second).isNotSameAs(first);
    assertThat(second.tableExists(TableIdentifier.of("n", "t"))).isFalse();
    assertThatThrownBy(() -> first.loadTable(TableIdentifier.of("n", "t"))).hasMessageContaining("closed");

    // Another process deletes it.
    secrets.delete("catalog/a");
    assertCode(() -> registry.catalog("a"), ErrorCode.NOT_FOUND, "catalog 'a' not found");
    assertThatThrownBy(() -> second.listTables(Namespace.of("n"))).hasMessageContaining("closed");
  }

  @Test
  void cachedCatalogIsTrustedWithinTheRevalidationInterval() {
    TenantCatalogRegistry registry = TenantCatalogRegistry.builder(secrets)
        .revalidateAfter(Duration.ofHours(1)).build();
    registries.add(registry);
    registry.create("a", sqlite("a1"));
    Catalog first = registry.catalog("a");
    secrets.put("catalog/a", sqlite("a2").toBytes());
    assertThat(registry.catalog("a")).isSameAs(first);
    registry.delete("a");
    assertCode(() -> registry.catalog("a"), ErrorCode.NOT_FOUND, "catalog 'a' not found");
  }

  @Test
  void unreachableBackendIsUnavailableWithoutDetail() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    // Port 9 (discard) on loopback: nothing listens.
    registry.create("down", CatalogConfig.rest("http://127.0.0.1:9")
        .withProperties(Map.of("credential", "client:hunter2", "oauth2-server-uri", "http://127.0.0.1:9/token",
            "rest.client.connection-timeout-ms", "2000")));
    assertCode(() -> registry.catalog("down"), ErrorCode.UNAVAILABLE,
        "catalog 'down' is unavailable: cannot reach its backend");
  }

  @Test
  void corruptStoredConfigIsInternal() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    secrets.put("catalog/bad", "{\"type\":\"rest\",\"uri\":\"http://h\",\"x\":1}".getBytes());
    assertCode(() -> registry.config("bad"), ErrorCode.INTERNAL, "catalog 'bad': stored config is unreadable");
    assertCode(() -> registry.catalog("bad"), ErrorCode.INTERNAL, "catalog 'bad': stored config is unreadable");
  }

  @Test
  void secretStoreFailureHidesItsDetail() {
    SecretStore broken = new SecretStore() {
      @Override
      public Optional<Secret> get(String key) {
        throw SeException.unavailable("fs:/secret/path: disk on fire", null);
      }

      @Override
      public boolean create(String key, byte[] value) {
        throw SeException.unavailable("fs:/secret/path: disk on fire", null);
      }

      @Override
      public void put(String key, byte[] value) {
        throw new IllegalStateException("fs:/secret/path: disk on fire");
      }

      @Override
      public void delete(String key) {
        throw new IllegalStateException("fs:/secret/path: disk on fire");
      }

      @Override
      public String describe() {
        return "broken";
      }
    };
    TenantCatalogRegistry registry = TenantCatalogRegistry.builder(broken).build();
    registries.add(registry);
    assertCode(() -> registry.config("a"), ErrorCode.UNAVAILABLE, "catalog 'a': secret store read failed");
    assertCode(() -> registry.create("a", CatalogConfig.rest("http://h")), ErrorCode.UNAVAILABLE,
        "catalog 'a': secret store create failed");
    assertCode(() -> registry.delete("a"), ErrorCode.INTERNAL, "catalog 'a': secret store delete failed");
  }

  @Test
  void failedOperationsReachTheListener() {
    TenantCatalogRegistry registry = registry(Optional.empty());
    registry.create("a", sqlite("a"));
    assertThatThrownBy(() -> registry.catalog("a").loadTable(TableIdentifier.of("n", "missing")))
        .isInstanceOf(NoSuchTableException.class);
    assertThat(operations).contains("a:loadTable:failed");
  }

  @Test
  void embeddedCatalogCommitsFromSeveralThreads() throws Exception {
    TenantCatalogRegistry registry = registry(Optional.of(dir));
    registry.create("busy", CatalogConfig.embedded());
    Catalog catalog = registry.catalog("busy");
    int threads = 4;
    int commits = 5;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String name = "t" + t;
        results.add(pool.submit(() -> {
          start.await();
          Table table = createAndLoad(registry.catalog("busy"), "ns", name);
          for (int i = 0; i < commits; i++) {
            DataFile file = DataFiles.builder(table.spec()).withPath(table.location() + "/data/" + i + ".parquet")
                .withFormat(FileFormat.PARQUET).withFileSizeInBytes(10).withRecordCount(1).build();
            table.newAppend().appendFile(file).commit();
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : results) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    for (int t = 0; t < threads; t++) {
      Table table = catalog.loadTable(TableIdentifier.of("ns", "t" + t));
      assertThat(table.snapshots()).hasSize(commits);
    }
  }
}

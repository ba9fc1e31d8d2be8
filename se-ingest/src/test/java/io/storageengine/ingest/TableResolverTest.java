package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.LoggingCatalog;
import io.storageengine.catalog.OperationListener;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TableResolver} against a real JDBC catalog (SQLite file, local warehouse) behind the
 * engine's {@link LoggingCatalog}, which a second catalog instance on the same database changes,
 * as another process would: a lookup always sees the catalog's current table, loads a table it
 * knows only once (refreshes after that, see {@code TableStateCacheTest}), and checks access every
 * time.
 */
class TableResolverTest {
  private static final TableIdentifier ID = TableIdentifier.of(Namespace.of("ns"), "events");
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  private JdbcCatalog engineCatalog;
  private JdbcCatalog otherProcess;
  private final AtomicInteger loads = new AtomicInteger();
  private final AtomicBoolean denied = new AtomicBoolean();
  private TableResolver resolver;

  @BeforeEach
  void setUp() {
    engineCatalog = catalog();
    otherProcess = catalog();
    otherProcess.createNamespace(ID.namespace());
    LoggingCatalog logged = new LoggingCatalog("tenant", engineCatalog, (catalogId, operation) -> {
      if (operation.equals("loadTable")) {
        loads.incrementAndGet();
      }
      return OperationListener.Operation.NONE;
    });
    resolver = new TableResolver(id -> {
      if (denied.get()) {
        throw new SeException(ErrorCode.FORBIDDEN, "caller may not ingest into `" + id + "`");
      }
      return logged;
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    engineCatalog.close();
    otherProcess.close();
  }

  private JdbcCatalog catalog() {
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(new Configuration());
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString());
    props.put("jdbc.schema-version", "V1");
    catalog.initialize("tenant", props);
    return catalog;
  }

  @Test
  void aKnownTableIsNotLoadedAgainAndAChangeIsSeenAtOnce() {
    Table created = otherProcess.createTable(ID, SCHEMA);

    Table first = resolver.load("tenant", ID);
    assertThat(first.uuid()).isEqualTo(created.uuid());
    for (int i = 0; i < 5; i++) {
      assertThat(resolver.load("tenant", ID).schema().columns()).hasSize(1);
    }
    assertThat(loads).as("catalog loads for six lookups of one table").hasValue(1);

    otherProcess.loadTable(ID).updateSchema().addColumn("note", Types.StringType.get()).commit();
    Table second = resolver.load("tenant", ID);
    assertThat(second.schema().findField("note")).as("the column another process added").isNotNull();
    assertThat(second.uuid()).isEqualTo(created.uuid());
    assertThat(first.schema().findField("note")).as("a lookup's result is pinned").isNull();
    assertThat(loads).as("refreshed, not loaded again").hasValue(1);
  }

  @Test
  void aDroppedTableIsNotFoundAndARecreatedOneIsTheNewTable() {
    Table old = otherProcess.createTable(ID, SCHEMA);
    assertThat(resolver.find("tenant", ID)).map(Table::uuid).contains(old.uuid());

    otherProcess.dropTable(ID, true);
    assertThat(resolver.find("tenant", ID)).isEmpty();
    assertThatThrownBy(() -> resolver.load("tenant", ID)).isInstanceOf(SeException.class)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));

    Table again = otherProcess.createTable(ID, SCHEMA);
    assertThat(resolver.find("tenant", ID)).map(Table::uuid).contains(again.uuid());
    // Dropped and created again while known: the refresh finds the new table's metadata.
    otherProcess.dropTable(ID, true);
    Table third = otherProcess.createTable(ID, SCHEMA);
    assertThat(third.uuid()).isNotEqualTo(again.uuid());
    assertThat(resolver.find("tenant", ID)).map(Table::uuid).contains(third.uuid());
  }

  @Test
  void accessIsCheckedOnEveryLookupOfAKnownTable() {
    otherProcess.createTable(ID, SCHEMA);
    resolver.load("tenant", ID);
    denied.set(true);
    assertThatThrownBy(() -> resolver.load("tenant", ID)).isInstanceOf(SeException.class)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.FORBIDDEN));
  }

  @Test
  void concurrentLookupsAllSeeTheTableAndAChangeBeforeThemStarted() throws Exception {
    otherProcess.createTable(ID, SCHEMA);
    resolver.load("tenant", ID);
    otherProcess.loadTable(ID).updateSchema().addColumn("note", Types.StringType.get()).commit();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Optional<Table>>> lookups = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        lookups.add(pool.submit(() -> {
          start.await();
          return resolver.find("tenant", ID);
        }));
      }
      start.countDown();
      for (Future<Optional<Table>> lookup : lookups) {
        assertThat(lookup.get().orElseThrow().schema().findField("note")).isNotNull();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}

package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TableStateCache} on a real JDBC catalog (SQLite), as the embedded and sql catalogs are. */
class TableStateCacheTest {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "part", Types.IntegerType.get()));
  private static final TableIdentifier ID = TableIdentifier.of(Namespace.of("ns"), "events");
  /** Metadata JSON files opened through {@link CountingFileIO} since the last reset. */
  static final AtomicInteger METADATA_READS = new AtomicInteger();

  /** HadoopFileIO counting reads of table metadata files. */
  public static final class CountingFileIO extends HadoopFileIO {
    public CountingFileIO() {
      super(new Configuration());
    }

    @Override
    public InputFile newInputFile(String path) {
      if (path.endsWith(".metadata.json")) {
        METADATA_READS.incrementAndGet();
      }
      return super.newInputFile(path);
    }
  }

  @TempDir Path dir;
  private JdbcCatalog catalog;
  private final TableStateCache cache = new TableStateCache();
  private final AtomicInteger loads = new AtomicInteger();

  @BeforeEach
  void open() throws Exception {
    catalog = catalog("one");
    catalog.createNamespace(Namespace.of("ns"));
    catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned());
  }

  @AfterEach
  void close() throws Exception {
    catalog.close();
  }

  private JdbcCatalog catalog(String name) throws Exception {
    Files.createDirectories(dir.resolve("warehouse"));
    JdbcCatalog created = new JdbcCatalog();
    created.setConf(new Configuration());
    created.initialize(name, Map.of(
        "uri", "jdbc:sqlite:" + dir.resolve("catalog.db"),
        "warehouse", dir.resolve("warehouse").toUri().toString(),
        "jdbc.schema-version", "V1",
        "io-impl", CountingFileIO.class.getName()));
    return created;
  }

  private Table current(JdbcCatalog from) {
    return cache.current("tenant", from, ID, () -> {
      loads.incrementAndGet();
      return from.loadTable(ID);
    });
  }

  private void commit() {
    catalog.loadTable(ID).updateProperties().set("touched", String.valueOf(System.nanoTime())).commit();
  }

  @Test
  void anUnchangedTableIsNotReadAgainAndAChangedOneIsReadOnce() {
    Table first = current(catalog);
    METADATA_READS.set(0);

    Table second = current(catalog);
    assertThat(loads).hasValue(1);
    assertThat(METADATA_READS).as("metadata files read for an unchanged table").hasValue(0);
    assertThat(second.uuid()).isEqualTo(first.uuid());

    commit();
    METADATA_READS.set(0);
    Table third = current(catalog);
    assertThat(loads).as("refreshed, not loaded again").hasValue(1);
    assertThat(METADATA_READS).hasValue(1);
    assertThat(third.properties()).containsKey("touched");
  }

  @Test
  void aQuerysTableKeepsItsStateUntilItIsRefreshed() {
    Table pinned = current(catalog);
    commit();
    Table later = current(catalog);

    assertThat(later.properties()).containsKey("touched");
    assertThat(pinned.properties()).as("an earlier query's view of the table").doesNotContainKey("touched");
    pinned.refresh();
    assertThat(pinned.properties()).containsKey("touched");
  }

  @Test
  void aQuerysTableIsReadOnly() {
    Table table = current(catalog);
    assertThatThrownBy(() -> table.updateProperties().set("x", "y").commit())
        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("read-only");
  }

  @Test
  void aDroppedTableIsNotFoundAndARecreatedOneIsTheNewTable() {
    Table old = current(catalog);
    catalog.dropTable(ID, true);
    assertThatThrownBy(() -> current(catalog)).isInstanceOf(NoSuchTableException.class);

    catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned());
    Table recreated = current(catalog);
    assertThat(recreated.uuid()).isNotEqualTo(old.uuid());
    assertThat(current(catalog).uuid()).isEqualTo(recreated.uuid());
  }

  @Test
  void aNewCatalogObjectForTheTenantLoadsAgain() throws Exception {
    current(catalog);
    try (JdbcCatalog rebuilt = catalog("one")) {
      current(rebuilt);
      assertThat(loads).as("loaded through the tenant's new catalog").hasValue(2);
      current(rebuilt);
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void keepsAtMostMaxTables() {
    for (int i = 0; i < TableStateCache.MAX_TABLES + 5; i++) {
      TableIdentifier id = TableIdentifier.of(Namespace.of("ns"), "events");
      cache.current("tenant-" + i, catalog, id, () -> catalog.loadTable(id));
    }
    assertThat(cache.size()).isEqualTo(TableStateCache.MAX_TABLES);
    assertThat(List.of(catalog.loadTable(ID).name())).containsExactly("one.ns.events");
  }

  @Test
  void tablesOfACatalogWhoseRefreshMissesDropsAreLoadedEveryTime() {
    // Iceberg's in-memory catalog keeps a dropped table's last metadata on refresh.
    org.apache.iceberg.inmemory.InMemoryCatalog memory = new org.apache.iceberg.inmemory.InMemoryCatalog();
    memory.initialize("memory", Map.of());
    memory.createNamespace(Namespace.of("ns"));
    memory.createTable(ID, SCHEMA, PartitionSpec.unpartitioned());
    AtomicInteger memoryLoads = new AtomicInteger();
    java.util.function.Supplier<Table> current = () -> cache.current("memory-tenant", memory, ID, () -> {
      memoryLoads.incrementAndGet();
      return memory.loadTable(ID);
    });
    current.get();
    current.get();
    assertThat(memoryLoads).as("loaded on every call, never kept").hasValue(2);
    assertThat(cache.size()).isZero();
    memory.dropTable(ID);
    assertThatThrownBy(current::get).isInstanceOf(NoSuchTableException.class);
  }
}

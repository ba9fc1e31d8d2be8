package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TablesTest {
  @TempDir Path dir;
  private Catalog catalog;

  @BeforeEach
  void open() {
    catalog = new CatalogFactory(Optional.of(dir)).build("t", CatalogConfig.embedded());
  }

  @AfterEach
  void close() throws Exception {
    ((AutoCloseable) catalog).close();
  }

  private static void assertInvalid(TableDefinition.Builder def, String message) {
    assertThatThrownBy(() -> Tables.create(null, TableIdentifier.of("a", "t"), def.build()))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void parsesTableArgumentsWithNestedNamespaces() {
    assertThat(Tables.parseIdentifier("analytics.events.page_views"))
        .isEqualTo(TableIdentifier.of(Namespace.of("analytics", "events"), "page_views"));
    assertThat(Tables.parseIdentifier("crm.customers")).isEqualTo(TableIdentifier.of(Namespace.of("crm"), "customers"));
    for (String bad : new String[] {"customers", "crm.", ".customers", "a..b"}) {
      assertThatThrownBy(() -> Tables.parseIdentifier(bad))
          .hasMessage("--table: expected namespace.table (e.g. analytics.events.page_views), got '" + bad + "'");
    }
  }

  @Test
  void createsAppendTableInNestedNamespaces() {
    TableIdentifier id = TableIdentifier.of(Namespace.of("raw", "events"), "clicks");
    Table table = Tables.create(catalog, id, TableDefinition.builder("id bigint, ts timestamptz, name string")
        .partitionBy("day(ts)").sortBy("name desc").property("write.parquet.compression-codec", "zstd").build());

    assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("raw"))).isTrue();
    assertThat(((SupportsNamespaces) catalog).namespaceExists(Namespace.of("raw", "events"))).isTrue();
    Table loaded = catalog.loadTable(id);
    assertThat(TableUtil.formatVersion(loaded)).isEqualTo(3);
    assertThat(loaded.properties()).containsEntry("se.mode", "append")
        .containsEntry("write.parquet.compression-codec", "zstd")
        .doesNotContainKey("se.version-column");
    assertThat(loaded.schema().identifierFieldIds()).isEmpty();
    assertThat(loaded.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("day");
    assertThat(loaded.sortOrder().fields()).hasSize(1);
    assertThat(table.location()).isEqualTo("file://" + dir.toAbsolutePath() + "/t/warehouse/raw/events/clicks");

    TableDescription d = Tables.describe(loaded);
    assertThat(d.mode()).isEqualTo(TableDefinition.Mode.APPEND);
    assertThat(d.formatVersion()).isEqualTo(3);
    assertThat(d.primaryKey()).isEmpty();
    assertThat(d.versionColumn()).isEmpty();
    assertThat(d.currentSnapshotId()).isEmpty();
    assertThat(d.walSeq()).isEmpty();
    assertThat(d.name()).contains("raw.events.clicks");
  }

  @Test
  void createsEntityTableWithIdentifierFieldsAndVersionColumn() {
    TableIdentifier id = TableIdentifier.of("silver", "customers");
    Tables.create(catalog, id, TableDefinition.builder(
            "tenant string not null, id bigint not null, name string, updated timestamptz")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("tenant", "id").versionColumn("updated")
        .partitionBy("bucket(8, id)").build());

    Table loaded = catalog.loadTable(id);
    assertThat(TableUtil.formatVersion(loaded)).isEqualTo(3);
    assertThat(loaded.schema().identifierFieldNames()).containsExactlyInAnyOrder("tenant", "id");
    assertThat(loaded.properties()).containsEntry("se.mode", "entity").containsEntry("se.version-column", "updated");

    // A commit carrying se.wal.seq, then one that does not (maintenance): describe finds the first.
    DataFile file = DataFiles.builder(loaded.spec()).withPath(loaded.location() + "/data/f.parquet")
        .withFormat(FileFormat.PARQUET).withFileSizeInBytes(10).withRecordCount(1)
        .withPartitionPath("id_bucket=1").build();
    loaded.newAppend().appendFile(file).set("se.wal.seq", "42").commit();
    loaded.updateProperties().set("x", "y").commit();
    loaded.newAppend().appendFile(file).commit();

    TableDescription d = Tables.describe(catalog.loadTable(id));
    assertThat(d.mode()).isEqualTo(TableDefinition.Mode.ENTITY);
    assertThat(d.primaryKey()).containsExactly("tenant", "id");
    assertThat(d.versionColumn()).contains("updated");
    assertThat(d.walSeq()).contains(42L);
    assertThat(d.currentSnapshotId()).contains(catalog.loadTable(id).currentSnapshot().snapshotId());
  }

  @Test
  void existingTableIsAlreadyExists() {
    TableIdentifier id = TableIdentifier.of("a", "t");
    Tables.create(catalog, id, TableDefinition.builder("id int").build());
    assertThatThrownBy(() -> Tables.create(catalog, id, TableDefinition.builder("id int").build()))
        .isInstanceOf(SeException.class)
        .hasMessage("table 'a.t' already exists")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.ALREADY_EXISTS));
  }

  @Test
  void refusesBadEntityDefinitions() {
    String cols = "id bigint not null, opt bigint, f double not null, tags list<string> not null, "
        + "s struct<k: int not null> not null, v bigint, name string, d date";
    TableDefinition.Mode entity = TableDefinition.Mode.ENTITY;
    assertInvalid(TableDefinition.builder(cols).mode(entity),
        "entity table needs a primary key (one or more not null columns)");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("nope"),
        "primary key column 'nope' does not exist in the schema");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("opt"),
        "primary key column 'opt' must be declared not null");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("f"),
        "primary key column 'f' must not be float or double");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("tags"),
        "primary key column 'tags' must be of a primitive type, not list<string>");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("s.k"),
        "primary key column 's.k' must be a top-level column");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("id", "id"),
        "primary key column 'id' is listed twice");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("id").versionColumn("name"),
        "version column 'name' must be numeric (int, bigint, float, double, decimal), date or timestamp, not string");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("id").versionColumn("vv"),
        "version column 'vv' does not exist in the schema");
    assertInvalid(TableDefinition.builder(cols).mode(entity).primaryKey("id").versionColumn("id"),
        "version column 'id' must not be part of the primary key");
    assertInvalid(TableDefinition.builder(cols).primaryKey("id"),
        "primary key [id]: only entity tables have a primary key (use mode entity)");
    assertInvalid(TableDefinition.builder(cols).versionColumn("v"),
        "version column 'v': only entity tables have a version column (use mode entity)");
  }

  @Test
  void versionColumnMayBeDateOrDecimal() {
    Tables.create(catalog, TableIdentifier.of("a", "d"), TableDefinition.builder("id int not null, d date")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("d").build());
    Tables.create(catalog, TableIdentifier.of("a", "p"), TableDefinition.builder("id int not null, p decimal(9,0)")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("p").build());
    assertThat(catalog.listTables(Namespace.of("a"))).hasSize(2);
  }

  @Test
  void modeParsing() {
    assertThat(TableDefinition.Mode.parse("Entity")).isEqualTo(TableDefinition.Mode.ENTITY);
    assertThatThrownBy(() -> TableDefinition.Mode.parse("upsert"))
        .isInstanceOf(SeException.class)
        .hasMessage("unknown table mode 'upsert' (expected append or entity)");
  }
}

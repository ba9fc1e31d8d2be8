package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Iceberg's own {@code RESTCatalog} client, through the facade: entity tables refuse every
 * outside commit that changes rows (their keys are merged only by ingestion) and accept schema
 * and property changes; append tables still take outside appends.
 */
class FacadeEntityWritesTest {
  @TempDir Path dir;
  private EngineServer server;
  private RESTCatalog rest;

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString()), Role.DEV);
    rest = new RESTCatalog();
    rest.initialize("se", Map.of("uri", "http://127.0.0.1:" + server.port() + "/catalogs/warehouse"));
  }

  @AfterEach
  void stop() throws Exception {
    rest.close();
    server.close();
  }

  @Test
  void entityTablesRefuseOutsideDataCommitsAndKeepSchemaChanges() {
    Table entity = Tables.create(rest, TableIdentifier.of("crm", "people"),
        TableDefinition.builder("id bigint not null, name string, v bigint not null")
            .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    DataFile file = fakeFile(entity, "people.parquet");

    assertThatThrownBy(() -> entity.newAppend().appendFile(file).commit())
        .isInstanceOf(ForbiddenException.class)
        .hasMessageContaining("crm.people is an entity table")
        .hasMessageContaining("an outside 'append' commit is refused")
        .hasMessageContaining("Ingest the rows instead");
    assertThatThrownBy(() -> entity.newOverwrite().addFile(file).commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("entity table");
    assertThatThrownBy(() -> entity.newRowDelta().addRows(file).commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("entity table");
    assertThatThrownBy(() -> entity.newDelete().deleteFromRowFilter(Expressions.equal("id", 1L)).commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("entity table");
    entity.refresh();
    assertThat(entity.currentSnapshot()).isNull();

    // Schema and property changes are not data: allowed.
    entity.updateSchema().addColumn("email", Types.StringType.get()).commit();
    entity.updateProperties().set("comment", "people").commit();
    entity.refresh();
    assertThat(entity.schema().findField("email")).isNotNull();
    assertThat(entity.properties()).containsEntry("comment", "people");

    // Turning an append table into an entity table in the same commit as data is refused too.
    Table append = Tables.create(rest, TableIdentifier.of("raw", "events"),
        TableDefinition.builder("id bigint not null, body string").build());
    append.newAppend().appendFile(fakeFile(append, "events.parquet")).commit();
    append.refresh();
    assertThat(append.currentSnapshot().summary()).containsEntry("added-data-files", "1");
    assertThatThrownBy(() -> {
      var tx = append.newTransaction();
      tx.updateProperties().set("se.mode", "entity").commit();
      tx.newAppend().appendFile(fakeFile(append, "more.parquet")).commit();
      tx.commitTransaction();
    }).isInstanceOf(ForbiddenException.class).hasMessageContaining("entity table");
  }

  private static DataFile fakeFile(Table table, String name) {
    return DataFiles.builder(table.spec())
        .withPath(table.location() + "/data/" + name)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(1)
        .build();
  }
}

package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Flight SQL bulk ingest through a real FlightSqlClient, and entity streams end to end. */
class BulkAndEntityIngestTest {
  static final org.apache.arrow.vector.types.pojo.Schema CLICKS =
      new org.apache.arrow.vector.types.pojo.Schema(List.of(
          new Field("user", FieldType.notNullable(new ArrowType.Int(64, true)), null),
          new Field("page", FieldType.nullable(ArrowType.Utf8.INSTANCE), null),
          new Field("at", FieldType.nullable(new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
              null)));

  IngestHarness h;
  FlightSqlClient sql;

  @BeforeEach
  void start() throws Exception {
    h = new IngestHarness();
    sql = new FlightSqlClient(h.flightClient);
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  VectorSchemaRoot clicks(int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(CLICKS, h.clientAllocator);
    for (int i = 0; i < rows; i++) {
      ((BigIntVector) root.getVector("user")).setSafe(i, i);
      ((VarCharVector) root.getVector("page")).setSafe(i, ("/p" + i).getBytes(StandardCharsets.UTF_8));
      ((TimeStampMicroTZVector) root.getVector("at")).setSafe(i, 1_000_000L * i);
    }
    root.setRowCount(rows);
    return root;
  }

  static ExecuteIngestOptions options(TableNotExistOption ifNotExist, TableExistsOption ifExists,
      Map<String, String> options) {
    return new ExecuteIngestOptions("clicks", TableDefinitionOptions.newBuilder()
        .setIfNotExist(ifNotExist).setIfExists(ifExists).build(), IngestHarness.TENANT,
        "web.raw", options);
  }

  @Test
  void bulkIngestCreatesAnAppendTableThenAppends() throws Exception {
    try (VectorSchemaRoot root = clicks(10)) {
      long created = sql.executeIngest(root, options(TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE,
          TableExistsOption.TABLE_EXISTS_OPTION_FAIL, Map.of()));
      assertThat(created).isEqualTo(10);
    }
    Table table = h.catalog.loadTable(TableIdentifier.of("web", "raw", "clicks"));
    assertThat(((HasTableOperations) table).operations().current().formatVersion()).isEqualTo(3);
    assertThat(table.properties()).containsEntry(TableProperties.MODE, TableProperties.MODE_APPEND);
    assertThat(table.schema().findField("user").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("user").isRequired()).isTrue();
    assertThat(table.schema().findField("at").type()).isEqualTo(Types.TimestampType.withZone());

    try (VectorSchemaRoot root = clicks(7)) {
      long appended = sql.executeIngest(root, options(TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL,
          TableExistsOption.TABLE_EXISTS_OPTION_APPEND, Map.of("se.operation", "upsert")));
      assertThat(appended).isEqualTo(7);
    }
    List<WalFrame> frames = h.frames(table);
    assertThat(frames).extracting(WalFrame::rowCount).containsExactly(10L, 7L);
    h.readFrame(frames.get(1), out -> {
      assertThat(IngestHarness.fieldId(out, "user"))
          .isEqualTo(table.schema().findField("user").fieldId());
      assertThat(IngestHarness.fieldId(out, "at"))
          .isEqualTo(table.schema().findField("at").fieldId());
      assertThat(out.getVector("page").getObject(6).toString()).isEqualTo("/p6");
    });
  }

  @Test
  void bulkIngestTableDefinitionRulesAndOptions() throws Exception {
    try (VectorSchemaRoot root = clicks(2)) {
      assertThatThrownBy(() -> sql.executeIngest(root, options(
          TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL,
          TableExistsOption.TABLE_EXISTS_OPTION_APPEND, Map.of())))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
          .hasMessageContaining("table `web.raw.clicks` not found in catalog `tenant`");
      sql.executeIngest(root, options(TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE,
          TableExistsOption.TABLE_EXISTS_OPTION_FAIL, Map.of()));
      assertThatThrownBy(() -> sql.executeIngest(root, options(
          TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE,
          TableExistsOption.TABLE_EXISTS_OPTION_FAIL, Map.of())))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.ALREADY_EXISTS))
          .hasMessageContaining("table `web.raw.clicks` already exists in catalog `tenant`");
      assertThatThrownBy(() -> sql.executeIngest(root, options(
          TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL,
          TableExistsOption.TABLE_EXISTS_OPTION_REPLACE, Map.of())))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNIMPLEMENTED))
          .hasMessageContaining("REPLACE is not supported");
      assertThatThrownBy(() -> sql.executeIngest(root, options(
          TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL,
          TableExistsOption.TABLE_EXISTS_OPTION_APPEND, Map.of("se.operation", "delete"))))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("operation `delete`: table `tenant.web.raw.clicks` is an append table");
      assertThatThrownBy(() -> sql.executeIngest(root, options(
          TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL,
          TableExistsOption.TABLE_EXISTS_OPTION_APPEND, Map.of("mode", "fast"))))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("options: unknown option `mode`");
    }
    Table table = h.catalog.loadTable(TableIdentifier.of("web", "raw", "clicks"));
    assertThat(h.frames(table)).hasSize(1);
  }

  @Test
  void entityPartialUpsertsAndDeletesReachTheWal() throws Exception {
    Schema people = new Schema(List.of(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "age", Types.IntegerType.get()),
        Types.NestedField.required(4, "version", Types.LongType.get())), java.util.Set.of(1));
    Table table = h.createTable("people", people, Map.of(TableProperties.MODE,
        TableProperties.MODE_ENTITY, TableProperties.VERSION_COLUMN, "version",
        "format-version", "3"));
    org.apache.arrow.vector.types.pojo.Schema partial =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(
            new Field("id", FieldType.notNullable(new ArrowType.Int(32, true)), null),
            new Field("version", FieldType.notNullable(new ArrowType.Int(64, true)), null),
            new Field("age", FieldType.nullable(new ArrowType.Int(32, true)), null)));
    try (IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"),
        "people", WalOperation.UPSERT, partial);
        VectorSchemaRoot root = VectorSchemaRoot.create(partial, h.clientAllocator)) {
      ((IntVector) root.getVector("id")).setSafe(0, 1);
      ((BigIntVector) root.getVector("version")).setSafe(0, 3);
      ((IntVector) root.getVector("age")).setSafe(0, 40);
      root.setRowCount(1);
      stream.send(root);
      stream.finish();
    }
    org.apache.arrow.vector.types.pojo.Schema keys =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(
            new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
            new Field("version", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
    try (IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"),
        "people", WalOperation.DELETE, keys);
        VectorSchemaRoot root = VectorSchemaRoot.create(keys, h.clientAllocator)) {
      ((BigIntVector) root.getVector("id")).setSafe(0, 1);
      ((BigIntVector) root.getVector("version")).setSafe(0, 4);
      root.setRowCount(1);
      stream.send(root);
      stream.finish();
    }
    org.apache.arrow.vector.types.pojo.Schema withName =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(keys.getFields().get(0),
            keys.getFields().get(1), new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    assertThatThrownBy(() -> h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "people",
        WalOperation.DELETE, withName))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("column `name`: a delete carries only the primary-key and version columns");

    List<WalFrame> frames = h.frames(table);
    assertThat(frames).extracting(WalFrame::operation)
        .containsExactly(WalOperation.UPSERT, WalOperation.DELETE);
    h.readFrame(frames.get(0), out -> {
      assertThat(out.getSchema().getFields()).extracting(Field::getName)
          .containsExactly("id", "version", "age");
      assertThat(IngestHarness.fieldId(out, "age")).isEqualTo(3);
      assertThat(out.getVector("id").getObject(0)).isEqualTo(1L);
    });
    h.readFrame(frames.get(1), out -> {
      assertThat(out.getSchema().getFields()).extracting(Field::getName)
          .containsExactly("id", "version");
      assertThat(out.getVector("version").getObject(0)).isEqualTo(4L);
    });
  }
}

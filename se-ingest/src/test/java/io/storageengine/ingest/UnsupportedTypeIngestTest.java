package io.storageengine.ingest;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableProperties;
import io.storageengine.wal.WalOperation;
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
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tables made by another Iceberg client (here Iceberg's own catalog API) with a column type the
 * engine cannot reconcile or query: a stream or bulk ingest is refused when it opens, even when
 * its batches do not carry that column, and nothing reaches the WAL. Otherwise the batch would be
 * acknowledged and never published.
 */
class UnsupportedTypeIngestTest {
  static final org.apache.arrow.vector.types.pojo.Schema ID_ONLY = new org.apache.arrow.vector.types.pojo.Schema(
      List.of(new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));

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

  private Table v3Table(String name, Types.NestedField column, Map<String, String> extra) {
    Map<String, String> props = new java.util.HashMap<>(Map.of("format-version", "3"));
    props.putAll(extra);
    Table table = h.createTable(name, new Schema(List.of(required(1, "id", Types.LongType.get()), column),
        java.util.Set.of(1)), props);
    assertThat(TableUtil.formatVersion(table)).isEqualTo(3);
    return table;
  }

  private VectorSchemaRoot ids(long... values) {
    VectorSchemaRoot root = VectorSchemaRoot.create(ID_ONLY, h.clientAllocator);
    for (int i = 0; i < values.length; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, values[i]);
    }
    root.setRowCount(values.length);
    return root;
  }

  private void assertRefused(Table table, String column, String type) throws Exception {
    String name = table.name().substring(table.name().lastIndexOf('.') + 1);
    String message = "table tenant.sales.eu." + name + ": column " + column + " has type " + type
        + ", which ingestion does not support yet";
    assertThatThrownBy(() -> h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), name,
        WalOperation.UPSERT, ID_ONLY))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
    try (VectorSchemaRoot root = ids(1, 2, 3)) {
      ExecuteIngestOptions options = new ExecuteIngestOptions(name, TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL)
          .setIfExists(TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build(), IngestHarness.TENANT,
          "sales.eu", Map.of());
      assertThatThrownBy(() -> sql.executeIngest(root, options))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining(message);
    }
    assertThat(h.frames(table)).isEmpty();
  }

  @Test
  void tablesWithNestedGeospatialVariantOrUnknownFieldsRefuseIngestion() throws Exception {
    // Top-level geometry and geography of any CRS are carried (GeometryIngestTest); nested ones are
    // not: reconciliation sets the Parquet geospatial logical types of top-level columns only.
    Table nested = v3Table("nested", optional(2, "s", Types.StructType.of(
        optional(3, "tags", Types.ListType.ofOptional(4, Types.GeometryType.crs84())))), Map.of());
    assertRefused(nested, "s.tags.element", Types.GeometryType.crs84().toString());
    // The entity path is refused the same way.
    Table entity = v3Table("people", optional(2, "s", Types.StructType.of(
        optional(3, "geo", Types.GeographyType.crs84()))), Map.of(TableProperties.MODE, "Entity"));
    assertRefused(entity, "s.geo", Types.GeographyType.crs84().toString());
    // A variant is carried as a top-level column only: DuckDB cannot write one nested in Parquet.
    Table nestedVariant = v3Table("nested_variant", optional(2, "s", Types.StructType.of(
        optional(3, "doc", Types.VariantType.get()))), Map.of());
    assertRefused(nestedVariant, "s.doc", "variant");
    Table nestedUnknown = v3Table("nested_unknown", optional(2, "s", Types.StructType.of(
        optional(3, "later", Types.UnknownType.get()))), Map.of());
    assertRefused(nestedUnknown, "s.later", "unknown");
    assertThat(h.segmentsWritten).isEmpty();
    assertThat(h.store.delegate().list("tenants/")).isEmpty();
  }

  @Test
  void nanosecondTimestampTablesIngestWithAndWithoutZone() throws Exception {
    for (Types.TimestampNanoType type : List.of(Types.TimestampNanoType.withoutZone(),
        Types.TimestampNanoType.withZone())) {
      String name = "nanos_" + (type.shouldAdjustToUTC() ? "tz" : "local");
      Table table = v3Table(name, optional(2, "at", type), Map.of());
      try (VectorSchemaRoot root = ids(1, 2);
          io.storageengine.ingest.client.IngestStream stream = h.client.open(IngestHarness.TENANT,
              List.of("sales", "eu"), name, WalOperation.UPSERT, ID_ONLY)) {
        stream.send(root).get();
        stream.finish();
      }
      assertThat(h.frames(table)).as(name).hasSize(1);
    }
  }
}

package io.storageengine.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.wal.WalOperation;
import java.math.BigDecimal;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.Test;

class RecordMapperTest {
  private static final EngineSinkConfig.TableName NAME = new EngineSinkConfig.TableName(List.of("shop"), "orders");

  private static Field column(String name, boolean nullable, ArrowType type, Field... children) {
    return new Field(name, new FieldType(nullable, type, null), List.of(children));
  }

  private static EngineTable table(List<String> key, Optional<String> version) {
    Schema schema = new Schema(List.of(
        column("id", false, new ArrowType.Int(64, true)),
        column("qty", true, new ArrowType.Int(32, true)),
        column("price", true, new ArrowType.Decimal(10, 2, 128)),
        column("score", true, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        column("name", true, ArrowType.Utf8.INSTANCE),
        column("day", true, new ArrowType.Date(DateUnit.DAY)),
        column("ts", true, new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
        column("tags", true, ArrowType.List.INSTANCE, column("element", true, ArrowType.Utf8.INSTANCE)),
        column("addr", true, ArrowType.Struct.INSTANCE, column("city", true, ArrowType.Utf8.INSTANCE)),
        column("v", true, new ArrowType.Int(64, true))));
    return EngineTable.of(NAME, schema, key, version);
  }

  private static SinkRecord record(Object key, Object value, long offset) {
    return new SinkRecord("orders", 0, null, key, null, value, offset, 1_700_000_000_000L,
        org.apache.kafka.common.record.TimestampType.CREATE_TIME);
  }

  @Test
  void structValueConvertsEveryConnectTypeToTheColumnType() {
    org.apache.kafka.connect.data.Schema addr = SchemaBuilder.struct().field("city", SchemaBuilder.OPTIONAL_STRING_SCHEMA).optional().build();
    org.apache.kafka.connect.data.Schema schema = SchemaBuilder.struct()
        .field("id", SchemaBuilder.INT64_SCHEMA)
        .field("qty", SchemaBuilder.INT8_SCHEMA)
        .field("price", Decimal.builder(1).optional().build())
        .field("score", SchemaBuilder.FLOAT32_SCHEMA)
        .field("ts", Timestamp.builder().optional().build())
        .field("tags", SchemaBuilder.array(SchemaBuilder.STRING_SCHEMA).optional().build())
        .field("addr", addr)
        .build();
    Struct value = new Struct(schema).put("id", 7L).put("qty", (byte) 3).put("price", new BigDecimal("1.5"))
        .put("score", 0.5f).put("ts", new Date(1000)).put("tags", List.of("a", "b"))
        .put("addr", new Struct(addr).put("city", "Oslo"));
    RecordMapper.Row row = new RecordMapper(table(List.of(), Optional.empty()), EngineSinkConfig.VersionSource.FIELD)
        .map(record(null, value, 5));
    assertThat(row.operation()).isEqualTo(WalOperation.UPSERT);
    assertThat(row.columns()).containsExactly("id", "qty", "price", "score", "ts", "tags", "addr");
    assertThat(row.values()).containsExactly(7L, 3L, new BigDecimal("1.50"), 0.5, 1_000_000L, List.of("a", "b"),
        Map.of("city", "Oslo"));
    try (BufferAllocator allocator = new RootAllocator();
        BatchBuilder batch = new BatchBuilder(BatchBuilder.schema(table(List.of(), Optional.empty()), row.columns()), allocator)) {
      batch.add(row.values());
      batch.add(row.values());
      VectorSchemaRoot root = batch.root();
      assertThat(root.getRowCount()).isEqualTo(2);
      assertThat(root.getVector("tags").getObject(1).toString()).isEqualTo("[\"a\",\"b\"]");
      assertThat(root.getVector("addr").getObject(0).toString()).isEqualTo("{\"city\":\"Oslo\"}");
      assertThat(root.getVector("price").getObject(1)).isEqualTo(new BigDecimal("1.50"));
    }
  }

  @Test
  void entityKeyVersionFromOffsetAndTombstones() {
    RecordMapper mapper = new RecordMapper(table(List.of("id"), Optional.of("v")), EngineSinkConfig.VersionSource.OFFSET);
    Map<String, Object> value = new LinkedHashMap<>();
    value.put("name", "ann");
    value.put("day", "2026-01-02");
    RecordMapper.Row upsert = mapper.map(record(42L, value, 17));
    assertThat(upsert.columns()).containsExactly("id", "name", "day", "v");
    assertThat(upsert.values()).containsExactly(42L, "ann", 20455, 17L);
    RecordMapper.Row delete = mapper.map(record(42L, null, 18));
    assertThat(delete.operation()).isEqualTo(WalOperation.DELETE);
    assertThat(delete.columns()).containsExactly("id", "v");
    assertThat(delete.values()).containsExactly(42L, 18L);
    // a struct key names the key columns
    org.apache.kafka.connect.data.Schema keySchema = SchemaBuilder.struct().field("id", SchemaBuilder.INT32_SCHEMA).build();
    assertThat(mapper.map(record(new Struct(keySchema).put("id", 9), Map.of(), 3)).values()).containsExactly(9L, 3L);
    assertThatThrownBy(() -> mapper.map(record(null, value, 1)))
        .isInstanceOf(InvalidRecordException.class).hasMessage("the record has no key; table shop.orders is keyed by [id]");
    // a tombstone on an append table writes nothing
    assertThat(new RecordMapper(table(List.of(), Optional.empty()), EngineSinkConfig.VersionSource.FIELD)
        .map(record(1L, null, 4))).isNull();
    assertThatThrownBy(() -> new RecordMapper(table(List.of("id"), Optional.of("v")), EngineSinkConfig.VersionSource.FIELD)
        .map(record(1L, null, 4)))
        .isInstanceOf(InvalidRecordException.class)
        .hasMessageStartingWith("a tombstone carries no version field `v`");
  }

  @Test
  void refusesWhatTheTableCannotTakeNamingTheField() {
    RecordMapper mapper = new RecordMapper(table(List.of(), Optional.empty()), EngineSinkConfig.VersionSource.FIELD);
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("id", 1L, "qty", "three"), 0)))
        .isInstanceOf(InvalidRecordException.class)
        .hasMessage("field `qty`: expected an integer for a column of type int, got a STRING value");
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("id", 1L, "qty", 1L << 40), 0)))
        .hasMessage("field `qty`: 1099511627776 does not fit int");
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("nope", 1L), 0)))
        .hasMessage("field `nope` is not a column of table shop.orders");
    Map<String, Object> nullId = new LinkedHashMap<>();
    nullId.put("id", null);
    assertThatThrownBy(() -> mapper.map(record(null, nullId, 0))).hasMessage("field `id`: null in a required column");
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("id", 1L, "price", "1.234"), 0)))
        .hasMessage("field `price`: 1.234 has more than 2 fraction digits (decimal(10,2))");
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("id", 1L, "addr", Map.of("zip", "0150")), 0)))
        .hasMessage("field `addr.zip`: the column has no such field");
    assertThatThrownBy(() -> mapper.map(record(null, Map.of("id", 1L, "name", List.of("x")), 0)))
        .hasMessage("field `name`: a ARRAY value cannot be written to a column of type string");
    assertThatThrownBy(() -> mapper.map(record(null, "plain text", 0)))
        .hasMessage("the value is a String, expected a Connect struct or a JSON object");
  }

  @Test
  void configNamesTheBadKey() {
    assertThatThrownBy(() -> new EngineSinkConfig(Map.of("se.engine.uri", "http://x:1", "se.catalog", "c", "se.table", "a.b")))
        .hasMessageContaining("se.engine.uri").hasMessageContaining("expected grpc://host:port or grpc+tls://host:port");
    assertThatThrownBy(() -> new EngineSinkConfig(Map.of("se.engine.uri", "grpc://x:1", "se.catalog", "c")))
        .hasMessage("set se.table or se.tables (topic:namespace.table)");
    assertThatThrownBy(() -> new EngineSinkConfig(Map.of("se.engine.uri", "grpc://x:1", "se.catalog", "c",
        "se.table", "a.b", "se.version.source", "offset")))
        .hasMessageContaining("se.version.column").hasMessageContaining("required when se.version.source is offset");
    EngineSinkConfig config = new EngineSinkConfig(Map.of("se.engine.uri", "grpc://x:1", "se.catalog", "c",
        "se.table", "a.b.t", "se.tables", "clicks:web.clicks"));
    assertThat(config.tableOf("clicks")).isEqualTo(new EngineSinkConfig.TableName(List.of("web"), "clicks"));
    assertThat(config.tableOf("other")).isEqualTo(new EngineSinkConfig.TableName(List.of("a", "b"), "t"));
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeSet;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Struct fields renamed, added and dropped after data files were written (also inside list
 * elements and map values) read by Iceberg field id, exactly as Iceberg's own reader reads them.
 */
class NestedFieldIdTest {
  static Path dir;
  static BufferAllocator allocator;
  static TestQueryServer server;
  static FlightSqlClient client;
  static Table table;

  static final Schema ORIGINAL = new Schema(
      NestedField.required(1, "id", Types.LongType.get()),
      NestedField.optional(2, "st", Types.StructType.of(
          NestedField.optional(3, "a", Types.IntegerType.get()),
          NestedField.optional(4, "name", Types.StringType.get()))),
      NestedField.optional(5, "li", Types.ListType.ofOptional(6, Types.StructType.of(
          NestedField.optional(7, "x", Types.IntegerType.get()),
          NestedField.optional(8, "y", Types.StringType.get())))),
      NestedField.optional(9, "m", Types.MapType.ofOptional(10, 11, Types.StringType.get(), Types.StructType.of(
          NestedField.optional(12, "p", Types.IntegerType.get())))));

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-nested");
    allocator = new RootAllocator();
    TestWarehouse warehouse = new TestWarehouse();
    Catalog catalog = warehouse.localCatalog("warehouse", dir.resolve("warehouse"));
    table = TestWarehouse.createTable(catalog, "nested", "events", ORIGINAL, PartitionSpec.unpartitioned());
    DataFile old = TestWarehouse.append(table, List.of(
        row(ORIGINAL, 1L, 10, "one", List.of(item(ORIGINAL, 1, "a")), Map.of("k", value(ORIGINAL, 100))),
        row(ORIGINAL, 2L, 20, "two", List.of(), Map.of()),
        row(ORIGINAL, 3L, 30, "three", List.of(item(ORIGINAL, 3, "c"), item(ORIGINAL, 4, "d")), Map.of("q", value(ORIGINAL, 300))),
        TestWarehouse.record(ORIGINAL, 4L))).get(0);
    TestWarehouse.deletePositions(table, old, 1);

    table.updateSchema()
        .renameColumn("st.name", "full_name")
        .addColumn("st", "extra", Types.LongType.get())
        .deleteColumn("st.a")
        .renameColumn("li.element.y", "label")
        .addColumn("li.element", "z", Types.IntegerType.get())
        .renameColumn("m.value.p", "points")
        .commit();
    Schema evolved = table.schema();
    GenericRecord st = GenericRecord.create(evolved.findField("st").type().asStructType());
    st.setField("full_name", "five");
    st.setField("extra", 55L);
    GenericRecord element = GenericRecord.create(evolved.findField("li").type().asListType().elementType().asStructType());
    element.setField("x", 5);
    element.setField("label", "e");
    element.setField("z", 500);
    GenericRecord points = GenericRecord.create(evolved.findField("m").type().asMapType().valueType().asStructType());
    points.setField("points", 5000);
    TestWarehouse.append(table, List.of(TestWarehouse.record(evolved, 5L, st, List.of(element), Map.of("v", points))));

    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    client = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build());
  }

  static Record row(Schema schema, long id, int a, String name, List<Record> items, Map<String, Record> map) {
    GenericRecord st = GenericRecord.create(schema.findField("st").type().asStructType());
    st.setField("a", a);
    st.setField("name", name);
    return TestWarehouse.record(schema, id, st, items, map);
  }

  static Record item(Schema schema, int x, String y) {
    GenericRecord item = GenericRecord.create(schema.findField("li").type().asListType().elementType().asStructType());
    item.setField("x", x);
    item.setField("y", y);
    return item;
  }

  static Record value(Schema schema, int p) {
    GenericRecord value = GenericRecord.create(schema.findField("m").type().asMapType().valueType().asStructType());
    value.setField("p", p);
    return value;
  }

  @AfterAll
  static void tearDown() throws Exception {
    client.close();
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  @Test
  void renamedAddedAndDroppedNestedFieldsMatchIcebergsReader() throws Exception {
    TreeSet<String> expected = new TreeSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        expected.add(normalize(table.schema().asStruct(), record));
      }
    }
    assertThat(expected).hasSize(4).anySatisfy(row -> assertThat(row).contains("full_name=one", "label=a", "points=100"));
    assertThat(new TreeSet<>(query("SELECT * FROM nested.events"))).isEqualTo(expected);
  }

  @Test
  void nestedFieldsAreAddressedByTheirCurrentNames() throws Exception {
    assertThat(query("SELECT id, st.full_name, st.extra, li[1].label, li[1].z, m['k'].points FROM nested.events ORDER BY id"))
        .containsExactly("1|one|null|a|null|100", "3|three|null|c|null|null", "4|null|null|null|null|null",
            "5|five|55|e|500|null");
  }

  static List<String> query(String sql) throws Exception {
    FlightInfo info = client.execute(sql, QueryFlightSqlProducerTest.tenant("warehouse"));
    List<String> out = new ArrayList<>();
    try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), QueryFlightSqlProducerTest.tenant("warehouse"))) {
      while (stream.next()) {
        VectorSchemaRoot root = stream.getRoot();
        for (int row = 0; row < root.getRowCount(); row++) {
          if (sql.startsWith("SELECT *")) {
            out.add(normalize(table.schema().asStruct(), arrowRow(root, row)));
          } else {
            List<String> values = new ArrayList<>();
            for (int column = 0; column < root.getFieldVectors().size(); column++) {
              values.add(String.valueOf(root.getVector(column).getObject(row)));
            }
            out.add(String.join("|", values));
          }
        }
      }
    }
    return out;
  }

  private static Map<String, Object> arrowRow(VectorSchemaRoot root, int row) {
    Map<String, Object> values = new java.util.HashMap<>();
    root.getFieldVectors().forEach(vector -> values.put(vector.getName(), vector.getObject(row)));
    return values;
  }

  /** One text form for an Iceberg generic value and the Java objects Arrow vectors return. */
  static String normalize(Type type, Object value) {
    if (value == null) {
      return "null";
    }
    switch (type.typeId()) {
      case STRUCT: {
        StringJoiner fields = new StringJoiner(",", "{", "}");
        for (NestedField field : type.asStructType().fields()) {
          Object child = value instanceof Record record ? record.getField(field.name()) : ((Map<?, ?>) value).get(field.name());
          fields.add(field.name() + "=" + normalize(field.type(), child));
        }
        return fields.toString();
      }
      case LIST: {
        StringJoiner elements = new StringJoiner(",", "[", "]");
        for (Object element : (List<?>) value) {
          elements.add(normalize(type.asListType().elementType(), element));
        }
        return elements.toString();
      }
      case MAP: {
        TreeSet<String> entries = new TreeSet<>();
        Types.MapType map = type.asMapType();
        if (value instanceof Map<?, ?> generic) {
          generic.forEach((k, v) -> entries.add(normalize(map.keyType(), k) + "=>" + normalize(map.valueType(), v)));
        } else {
          for (Object entry : (List<?>) value) {
            Map<?, ?> pair = (Map<?, ?>) entry;
            entries.add(normalize(map.keyType(), pair.get("key")) + "=>" + normalize(map.valueType(), pair.get("value")));
          }
        }
        return entries.toString();
      }
      default:
        return String.valueOf(value);
    }
  }
}

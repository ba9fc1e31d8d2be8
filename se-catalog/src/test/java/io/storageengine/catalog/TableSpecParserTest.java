package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.List;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class TableSpecParserTest {
  static final String FULL = "id bigint not null, name string, ts timestamptz, price decimal(10,2), "
      + "tags list<string>, attrs map<string,bigint>, addr struct<street: string, zip: int not null>, "
      + "raw binary, f fixed(16), u uuid, d date, t time, ts2 timestamp, b boolean, i int, x float, y double";

  private static void assertInvalid(Runnable parse, String message) {
    assertThatThrownBy(parse::run)
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void parsesEveryType() {
    Schema schema = TableSpecParser.parseSchema(FULL);
    Types.StructType expected = Types.StructType.of(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "ts", Types.TimestampType.withZone()),
        Types.NestedField.optional(4, "price", Types.DecimalType.of(10, 2)),
        Types.NestedField.optional(5, "tags", Types.ListType.ofOptional(18, Types.StringType.get())),
        Types.NestedField.optional(6, "attrs",
            Types.MapType.ofOptional(19, 20, Types.StringType.get(), Types.LongType.get())),
        Types.NestedField.optional(7, "addr", Types.StructType.of(
            Types.NestedField.optional(21, "street", Types.StringType.get()),
            Types.NestedField.required(22, "zip", Types.IntegerType.get()))),
        Types.NestedField.optional(8, "raw", Types.BinaryType.get()),
        Types.NestedField.optional(9, "f", Types.FixedType.ofLength(16)),
        Types.NestedField.optional(10, "u", Types.UUIDType.get()),
        Types.NestedField.optional(11, "d", Types.DateType.get()),
        Types.NestedField.optional(12, "t", Types.TimeType.get()),
        Types.NestedField.optional(13, "ts2", Types.TimestampType.withoutZone()),
        Types.NestedField.optional(14, "b", Types.BooleanType.get()),
        Types.NestedField.optional(15, "i", Types.IntegerType.get()),
        Types.NestedField.optional(16, "x", Types.FloatType.get()),
        Types.NestedField.optional(17, "y", Types.DoubleType.get()));
    assertThat(schema.asStruct()).isEqualTo(expected);
  }

  @Test
  void geometryAndGeographyTakeACrsAndAnEdgeAlgorithm() {
    Schema schema = TableSpecParser.parseSchema("id bigint not null, g geometry, h GEOMETRY('srid:3857'), "
        + "k geometry(OGC:CRS84), a geography, b geography(srid:4269), c geography('OGC:CRS84', karney), "
        + "p geometry(projjson:geo.crs), e geometry(EPSG:4326)");
    assertThat(schema.findType("g")).isEqualTo(Types.GeometryType.crs84());
    assertThat(schema.findType("h")).isEqualTo(Types.GeometryType.of("srid:3857"));
    assertThat(schema.findType("k")).isEqualTo(Types.GeometryType.of("OGC:CRS84"));
    assertThat(schema.findType("a")).isEqualTo(Types.GeographyType.crs84());
    assertThat(schema.findType("b")).isEqualTo(Types.GeographyType.of("srid:4269"));
    assertThat(schema.findType("c")).isEqualTo(Types.GeographyType.of("OGC:CRS84", EdgeAlgorithm.KARNEY));
    assertThat(schema.findType("p")).isEqualTo(Types.GeometryType.of("projjson:geo.crs"));
    assertThat(schema.findType("e")).isEqualTo(Types.GeometryType.of("EPSG:4326"));
    assertThatThrownBy(() -> TableSpecParser.parseSchema("c geography(srid:4269, straight)"))
        .isInstanceOf(SeException.class).hasMessageContaining("unknown edge algorithm 'straight'");
    assertThatThrownBy(() -> TableSpecParser.parseSchema("g geometry()"))
        .isInstanceOf(SeException.class).hasMessageContaining("expected a CRS for column 'g'");
  }

  @Test
  void aliasesNanosQuotingAndNestedRequiredness() {
    Schema schema = TableSpecParser.parseSchema(
        "\"Order Id\" LONG NOT NULL, `v` Varchar null, n timestamptz_ns, m timestamp_ns, "
            + "l list<struct<a int not null> not null>, mm map<string, list<double> not null>, "
            + "q numeric(38, 0), bb bytes, doc VARIANT, docs list<variant>");
    assertThat(schema.findField("Order Id").isRequired()).isTrue();
    assertThat(schema.findType("v")).isEqualTo(Types.StringType.get());
    assertThat(schema.findType("n")).isEqualTo(Types.TimestampNanoType.withZone());
    assertThat(schema.findType("m")).isEqualTo(Types.TimestampNanoType.withoutZone());
    Types.ListType list = schema.findType("l").asListType();
    assertThat(list.isElementRequired()).isTrue();
    assertThat(list.elementType().asStructType().field("a").isRequired()).isTrue();
    Types.MapType map = schema.findType("mm").asMapType();
    assertThat(map.isValueRequired()).isTrue();
    assertThat(map.valueType()).isEqualTo(Types.ListType.ofOptional(map.valueId() + 1, Types.DoubleType.get()));
    assertThat(schema.findType("q")).isEqualTo(Types.DecimalType.of(38, 0));
    assertThat(schema.findType("bb")).isEqualTo(Types.BinaryType.get());
    assertThat(schema.findType("doc")).isEqualTo(Types.VariantType.get());
    assertThat(schema.findType("docs").asListType().elementType()).isEqualTo(Types.VariantType.get());
  }

  @Test
  void defaultsBecomeInitialAndWriteDefaults() {
    Schema schema = TableSpecParser.parseSchema("tier int default 0, name string default 'x''s', "
        + "n bigint not null default -7, r double default 1.5e3, p decimal(5,2) default 1.5, ok boolean default true, "
        + "d date default '2026-01-31', at timestamptz_ns default '2026-01-02T03:04:05.123456789+01:00', "
        + "h binary default 'cafe', u uuid default '123e4567-e89b-12d3-a456-426614174000', plain string default null, "
        + "req int default 3 not null");
    assertThat(schema.findField("tier").initialDefault()).isEqualTo(0);
    assertThat(schema.findField("tier").writeDefault()).isEqualTo(0);
    assertThat(schema.findField("tier").isOptional()).isTrue();
    assertThat(schema.findField("name").writeDefault().toString()).isEqualTo("x's");
    assertThat(schema.findField("n").isRequired()).isTrue();
    assertThat(schema.findField("n").initialDefault()).isEqualTo(-7L);
    assertThat(schema.findField("r").writeDefault()).isEqualTo(1500.0);
    assertThat(schema.findField("p").writeDefault()).isEqualTo(new java.math.BigDecimal("1.50"));
    assertThat(schema.findField("ok").writeDefault()).isEqualTo(true);
    assertThat(schema.findField("d").writeDefault()).isEqualTo((int) java.time.LocalDate.parse("2026-01-31").toEpochDay());
    assertThat(schema.findField("at").writeDefault()).isEqualTo(1_767_319_445_123_456_789L);
    assertThat(schema.findField("h").writeDefault()).isEqualTo(java.nio.ByteBuffer.wrap(new byte[] {(byte) 0xca, (byte) 0xfe}));
    assertThat(schema.findField("u").writeDefault()).isEqualTo(java.util.UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
    assertThat(schema.findField("plain").writeDefault()).isNull();
    assertThat(schema.findField("req").isRequired()).isTrue();
    assertThat(schema.findField("req").initialDefault()).isEqualTo(3);
  }

  @Test
  void structFieldsTakeDefaultsAtAnyDepth() {
    Schema schema = TableSpecParser.parseSchema(
        "id int not null, s struct<a: int default 1, b: string, t: struct<x: string not null default 'x''s'>>, "
            + "l list<struct<k: boolean default true>>");
    Types.NestedField a = schema.findField("s.a");
    assertThat(a.initialDefault()).isEqualTo(1);
    assertThat(a.writeDefault()).isEqualTo(1);
    assertThat(schema.findField("s.b").writeDefault()).isNull();
    Types.NestedField x = schema.findField("s.t.x");
    assertThat(x.isRequired()).isTrue();
    assertThat(x.writeDefault().toString()).isEqualTo("x's");
    assertThat(schema.findField("l.element.k").writeDefault()).isEqualTo(true);
  }

  @Test
  void unknownColumnsAreAlwaysNull() {
    Schema schema = TableSpecParser.parseSchema("id int not null, u unknown, s struct<v: UNKNOWN default null>");
    assertThat(schema.findType("u")).isEqualTo(Types.UnknownType.get());
    assertThat(schema.findField("u").isOptional()).isTrue();
    assertThat(schema.findType("s.v")).isEqualTo(Types.UnknownType.get());
    assertInvalid(() -> TableSpecParser.parseSchema("u unknown not null"),
        "schema: column 'u' of type unknown cannot be not null (its values are always null) at position 3");
    assertInvalid(() -> TableSpecParser.parseSchema("u unknown default 1"),
        "schema: column 'u' of type unknown cannot have a default other than null at position 19");
  }

  @Test
  void aDefaultAloneParsesForItsColumnsType() {
    assertThat(TableSpecParser.parseDefault(Types.IntegerType.get(), "c", "5").value()).isEqualTo(5);
    assertThat(TableSpecParser.parseDefault(Types.StringType.get(), "s.b", " 'it''s' ").value()).isEqualTo("it's");
    assertThat(TableSpecParser.parseDefault(Types.LongType.get(), "c", "null")).isNull();
    assertInvalid(() -> TableSpecParser.parseDefault(Types.IntegerType.get(), "c", "x"),
        "default: default 'x' of column 'c' is not a valid int (a number) at position 1");
    assertInvalid(() -> TableSpecParser.parseDefault(Types.IntegerType.get(), "c", "5 6"),
        "default: unexpected '6' after the default of column 'c' at position 3");
    assertInvalid(() -> TableSpecParser.parseDefault(Types.IntegerType.get(), "c", ""),
        "default: default end of text of column 'c' is not a valid int (a number) at position 1");
  }

  @Test
  void badDefaultsNameTheColumnAndPosition() {
    assertInvalid(() -> TableSpecParser.parseSchema("tier int default 'x'"),
        "schema: default 'x' of column 'tier' is not a valid int (a number) at position 18");
    assertInvalid(() -> TableSpecParser.parseSchema("tier int default 3000000000"),
        "schema: default '3000000000' of column 'tier' is not a valid int (a number) at position 18");
    assertInvalid(() -> TableSpecParser.parseSchema("p decimal(3,1) default 1.25"),
        "schema: default '1.25' of column 'p' is not a valid decimal(3, 1) (a number) at position 24");
    assertInvalid(() -> TableSpecParser.parseSchema("d date default 'tomorrow'"),
        "schema: default 'tomorrow' of column 'd' is not a valid date (a string such as '2026-01-31') at position 16");
    assertInvalid(() -> TableSpecParser.parseSchema("b boolean default yes"),
        "schema: default 'yes' of column 'b' is not a valid boolean (true or false) at position 19");
    assertInvalid(() -> TableSpecParser.parseSchema("l list<int> default 1"),
        "schema: column 'l' of type list<int> cannot have a default (only primitive columns can) at position 21");
    assertInvalid(() -> TableSpecParser.parseSchema("s struct<a: int default 'one'>"),
        "schema: default 'one' of column 's.a' is not a valid int (a number) at position 25");
    assertInvalid(() -> TableSpecParser.parseSchema("s struct<t: struct<x: int> default 1>"),
        "schema: column 's.t' of type struct<3: x: optional int> cannot have a default (only primitive columns can)"
            + " at position 36");
    assertInvalid(() -> TableSpecParser.parseSchema("s string default 'x"),
        "schema: unterminated string at position 18");
  }

  @Test
  void schemaErrorsNameThePartAndPosition() {
    assertInvalid(() -> TableSpecParser.parseSchema("id bigint, name strng"),
        "schema: unknown type 'strng' for column 'name' at position 17");
    assertInvalid(() -> TableSpecParser.parseSchema("addr struct<street: strng>"),
        "schema: unknown type 'strng' for column 'addr.street' at position 21");
    assertInvalid(() -> TableSpecParser.parseSchema("tags list<strin>"),
        "schema: unknown type 'strin' for the element of column 'tags' at position 11");
    assertInvalid(() -> TableSpecParser.parseSchema("id bigint, id int"),
        "schema: duplicate column 'id' at position 12");
    assertInvalid(() -> TableSpecParser.parseSchema("id bigint not nul"),
        "schema: expected 'null' after 'not', found 'nul' at position 15");
    assertInvalid(() -> TableSpecParser.parseSchema("id bigint extra"),
        "schema: unexpected 'extra' after column 'id' (expected ',' or end of text) at position 11");
    assertInvalid(() -> TableSpecParser.parseSchema("id"),
        "schema: expected a type for column 'id', found end of text at position 3");
    assertInvalid(() -> TableSpecParser.parseSchema("p decimal(40, 2)"),
        "schema: decimal precision 40 of column 'p' must be between 1 and 38 at position 11");
    assertInvalid(() -> TableSpecParser.parseSchema("p decimal(4, 5)"),
        "schema: decimal scale 5 of column 'p' must not exceed its precision 4 at position 14");
    assertInvalid(() -> TableSpecParser.parseSchema("p decimal"),
        "schema: expected '(' after 'decimal' (decimal(precision, scale)), found end of text at position 10");
    assertInvalid(() -> TableSpecParser.parseSchema("f fixed(0)"),
        "schema: fixed length of column 'f' must be at least 1 at position 9");
    assertInvalid(() -> TableSpecParser.parseSchema("m map<string int>"),
        "schema: expected ',' between the key and value types of column 'm', found 'int' at position 14");
    assertInvalid(() -> TableSpecParser.parseSchema("l list<int"),
        "schema: expected '>' to close list<...> of column 'l', found end of text at position 11");
    assertInvalid(() -> TableSpecParser.parseSchema("a int; drop"),
        "schema: unexpected character ';' at position 6");
    assertInvalid(() -> TableSpecParser.parseSchema("\"a int"),
        "schema: unterminated quoted name at position 1");
    assertInvalid(() -> TableSpecParser.parseSchema("s struct<a int, a int>"),
        "schema: duplicate field 'a' in column 's' at position 17");
    assertInvalid(() -> TableSpecParser.parseSchema("  "), "schema: no columns given");
    assertInvalid(() -> TableSpecParser.parseSchema("id bigint,"),
        "schema: expected a column name, found end of text at position 11");
  }

  private static final Schema SCHEMA = TableSpecParser.parseSchema(FULL);

  @Test
  void parsesEveryTransform() {
    PartitionSpec spec = TableSpecParser.parsePartitionSpec(SCHEMA,
        "day(ts), bucket(16, id), truncate(4, name), hour(ts2), month(d), identity(u), b, "
            + "bucket(addr.zip, 8)");
    List<PartitionField> fields = spec.fields();
    assertThat(fields).extracting(f -> f.transform().toString())
        .containsExactly("day", "bucket[16]", "truncate[4]", "hour", "month", "identity", "identity",
            "bucket[8]");
    assertThat(fields).extracting(f -> SCHEMA.findColumnName(f.sourceId()))
        .containsExactly("ts", "id", "name", "ts2", "d", "u", "b", "addr.zip");
    assertThat(TableSpecParser.parsePartitionSpec(SCHEMA, "year(ts)").fields().get(0).transform().toString())
        .isEqualTo("year");
    assertThat(TableSpecParser.parsePartitionSpec(SCHEMA, "days(ts)").fields().get(0).transform().toString())
        .isEqualTo("day");
    assertThat(TableSpecParser.parsePartitionSpec(SCHEMA, " ").isUnpartitioned()).isTrue();
    assertThat(TableSpecParser.parsePartitionSpec(SCHEMA, null).isUnpartitioned()).isTrue();
  }

  @Test
  void partitionErrors() {
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "day(ts), dya(ts)"),
        "partition: unknown transform 'dya' (expected identity, year, month, day, hour, bucket or truncate) at position 10");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "bucket(16, nope)"),
        "partition: unknown column 'nope' at position 12");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "missing"),
        "partition: unknown column 'missing' at position 1");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "bucket(0, id)"),
        "partition: bucket width must be at least 1 at position 8");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "day(ts"),
        "partition: expected ')' to close day(...), found end of text at position 7");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "id, day(name)"),
        "partition: 'day(name)' cannot be applied to column 'name' of type string at position 5");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "day(ts), hour(ts)"),
        "partition: cannot partition by 'hour(ts)': Cannot add redundant partition: "
            + "1000: ts_day: day(3) conflicts with 1001: ts_hour: hour(3) at position 10");
    assertInvalid(() -> TableSpecParser.parsePartitionSpec(SCHEMA, "id name"),
        "partition: unexpected 'name' after 'id' (expected ',' or end of text) at position 4");
  }

  @Test
  void parsesSortOrders() {
    SortOrder order = TableSpecParser.parseSortOrder(SCHEMA,
        "name, ts desc nulls last, id asc nulls last, bucket(4, id) desc, day(ts) nulls first");
    List<SortField> fields = order.fields();
    assertThat(fields).extracting(SortField::direction).containsExactly(
        SortDirection.ASC, SortDirection.DESC, SortDirection.ASC, SortDirection.DESC, SortDirection.ASC);
    assertThat(fields).extracting(SortField::nullOrder).containsExactly(
        NullOrder.NULLS_FIRST, NullOrder.NULLS_LAST, NullOrder.NULLS_LAST, NullOrder.NULLS_LAST,
        NullOrder.NULLS_FIRST);
    assertThat(fields).extracting(f -> f.transform().toString())
        .containsExactly("identity", "identity", "identity", "bucket[4]", "day");
    assertThat(fields).extracting(f -> SCHEMA.findColumnName(f.sourceId()))
        .containsExactly("name", "ts", "id", "id", "ts");
    assertThat(TableSpecParser.parseSortOrder(SCHEMA, "").isUnsorted()).isTrue();
  }

  @Test
  void sortErrors() {
    assertInvalid(() -> TableSpecParser.parseSortOrder(SCHEMA, "name, ts desc nulls middle"),
        "sort order: expected 'first' or 'last' after 'nulls', found 'middle' at position 21");
    assertInvalid(() -> TableSpecParser.parseSortOrder(SCHEMA, "name descending"),
        "sort order: unexpected 'descending' after 'name' (expected ',' or end of text) at position 6");
    assertInvalid(() -> TableSpecParser.parseSortOrder(SCHEMA, "truncate(2, tags)"),
        "sort order: 'truncate(2, tags)' cannot be applied to column 'tags' of type list<string> at position 1");
    assertInvalid(() -> TableSpecParser.parseSortOrder(SCHEMA, "nam"),
        "sort order: unknown column 'nam' at position 1");
    assertInvalid(() -> TableSpecParser.parseSortOrder(SCHEMA, ", name"),
        "sort order: expected a column or transform, found ',' at position 1");
  }
}

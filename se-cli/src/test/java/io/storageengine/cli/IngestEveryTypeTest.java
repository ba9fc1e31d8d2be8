package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.GeoValues;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.server.EngineServer;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.variants.Variant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se ingest} of CSV and JSON lines into a table with a column of every type, on a real
 * server, read back with Iceberg's generic reader: JSON objects become structs and maps, arrays
 * lists, text becomes uuid, fixed (hex) and nanosecond timestamps (nanoseconds kept), bigints
 * narrow to int; values that do not fit are named with their row and column. Also on an entity
 * table with partial upserts (per-row presence).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IngestEveryTypeTest {
  private static final String SCHEMA = "id int not null, b boolean, l bigint, f float, d double, dec decimal(10,2),"
      + " dt date, t time, ts timestamp, tstz timestamptz, tsn timestamp_ns, tstzn timestamptz_ns, s string,"
      + " u uuid, bin binary, fx fixed(4),"
      + " st struct<x: int, at: timestamptz, u: uuid, tags: list<string>>, li list<int>, m map<string, int>,"
      + " lm list<map<string, fixed(2)>>, doc variant";
  private static final String U1 = "123e4567-e89b-12d3-a456-426614174000";
  private static final String U2 = "00000000-0000-0000-0000-000000000001";

  @TempDir static Path dir;
  private EngineServer server;
  private RESTCatalog rest;

  @BeforeAll
  void start() {
    server = Cli.startServer(dir.resolve("data"));
    rest = RemoteCatalog.open(Cli.address(server), "warehouse");
  }

  @AfterAll
  void stop() throws Exception {
    rest.close();
    server.close();
  }

  @Test
  void jsonLinesOfEveryTypeReadBackWithIcebergsReader() throws Exception {
    create("t.json_all", TableDefinition.builder(SCHEMA).build());
    Path file = file("all.jsonl", """
        {"id":1,"b":true,"l":9000000000,"f":1.5,"d":2.25,"dec":"12.34","dt":"1900-01-01","t":"10:11:12.123456","ts":"2026-01-02T03:04:05.123456","tstz":"2026-01-02T03:04:05.5+02:00","tsn":"2026-01-02T03:04:05.123456789","tstzn":"2026-01-02 03:04:05.987654321Z","s":"x","u":"%s","bin":"ab","fx":"deadbeef","st":{"x":7,"at":"1970-01-01T00:00:00.000001Z","u":"%s","tags":["a","b"]},"li":[1,2,3],"m":{"k1":1,"k2":2},"lm":[{"a":"0a0b"},{}],"doc":{"k":[1,{"z":"w"}],"n":-3.5,"big":12345678901}}
        {"id":2}
        {"id":3,"st":{"x":null,"at":null,"u":null,"tags":null},"li":[],"m":{},"lm":null,"tstzn":"2026-01-02T05:04:05.000000001+02:00","doc":"text"}
        """.formatted(U1, U2));
    ingest("t.json_all", file);

    List<Record> rows = awaitRows("t.json_all", 3);
    Record r = rows.get(0);
    assertThat(r.getField("id")).isEqualTo(1);
    assertThat(r.getField("b")).isEqualTo(true);
    assertThat(r.getField("l")).isEqualTo(9_000_000_000L);
    assertThat(r.getField("f")).isEqualTo(1.5f);
    assertThat(r.getField("d")).isEqualTo(2.25);
    assertThat(r.getField("dec")).isEqualTo(new BigDecimal("12.34"));
    assertThat(r.getField("dt")).isEqualTo(LocalDate.parse("1900-01-01"));
    assertThat(r.getField("t")).isEqualTo(LocalTime.parse("10:11:12.123456"));
    assertThat(r.getField("ts")).isEqualTo(LocalDateTime.parse("2026-01-02T03:04:05.123456"));
    assertThat(r.getField("tstz")).isEqualTo(OffsetDateTime.parse("2026-01-02T01:04:05.5Z"));
    assertThat(r.getField("tsn")).isEqualTo(LocalDateTime.parse("2026-01-02T03:04:05.123456789"));
    // timestamptz_ns from text with offsets, spaces, 'Z': nanoseconds kept through reconciliation.
    assertThat(r.getField("tstzn")).isEqualTo(OffsetDateTime.parse("2026-01-02T03:04:05.987654321Z"));
    assertThat(r.getField("s")).isEqualTo("x");
    assertThat(r.getField("u")).isEqualTo(UUID.fromString(U1));
    assertThat(r.getField("bin")).isEqualTo(ByteBuffer.wrap("ab".getBytes()));
    assertThat(bytes(r.getField("fx"))).isEqualTo(new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef});
    Record st = (Record) r.getField("st");
    assertThat(st.getField("x")).isEqualTo(7);
    assertThat(st.getField("at")).isEqualTo(OffsetDateTime.parse("1970-01-01T00:00:00.000001Z"));
    assertThat(st.getField("u")).isEqualTo(UUID.fromString(U2));
    assertThat(st.getField("tags")).isEqualTo(List.of("a", "b"));
    assertThat(r.getField("li")).isEqualTo(List.of(1, 2, 3));
    assertThat(r.getField("m")).isEqualTo(Map.of("k1", 1, "k2", 2));
    List<?> lm = (List<?>) r.getField("lm");
    assertThat(lm).hasSize(2);
    assertThat(((Map<?, ?>) lm.get(0)).get("a")).satisfies(v -> assertThat(bytes(v)).isEqualTo(new byte[] {0x0a, 0x0b}));
    assertThat((Map<?, ?>) lm.get(1)).isEmpty();
    // Any JSON value of a variant column: encoded by the server, stored as Parquet's VARIANT.
    assertThat(r.getField("doc")).isInstanceOf(Variant.class);
    assertThat(r.getField("doc").toString()).contains("big: Variant(type=INT64, value=12345678901)")
        .contains("k: VariantArray([Variant(type=INT8, value=1), VariantObject(fields={z: Variant(type=STRING, value=w)})])")
        .contains("n: Variant(type=DOUBLE, value=-3.5)");

    Record nulls = rows.get(1);
    for (String column : List.of("b", "l", "dt", "tsn", "tstzn", "u", "fx", "st", "li", "m", "lm", "doc")) {
      assertThat(nulls.getField(column)).as(column).isNull();
    }
    Record empty = rows.get(2);
    assertThat(((Record) empty.getField("st")).getField("x")).isNull();
    assertThat(empty.getField("li")).isEqualTo(List.of());
    assertThat(empty.getField("m")).isEqualTo(Map.of());
    assertThat(empty.getField("tstzn")).isEqualTo(OffsetDateTime.parse("2026-01-02T03:04:05.000000001Z"));
    assertThat(((Variant) empty.getField("doc")).value().asPrimitive().get()).isEqualTo("text");
  }

  @Test
  void csvOfEveryTypeWithJsonCellsForNestedColumns() throws Exception {
    create("t.csv_all", TableDefinition.builder(SCHEMA).build());
    Path file = file("all.csv", """
        id,u,fx,tsn,tstzn,st,li,m,lm,doc
        1,%s,00ff00FF,2026-01-02T03:04:05.000000001,2026-01-02T03:04:05.123456789-01:00,"{""x"":5,""at"":null,""u"":""%s"",""tags"":[]}","[4,5]","{""a"":9}","[{""k"":""ffff""}]","{""a"":[true,null]}"
        2,,,,,,,,,
        """.formatted(U1, U2));
    ingest("t.csv_all", file);

    List<Record> rows = awaitRows("t.csv_all", 2);
    Record r = rows.get(0);
    assertThat(r.getField("u")).isEqualTo(UUID.fromString(U1));
    assertThat(bytes(r.getField("fx"))).isEqualTo(new byte[] {0, (byte) 0xff, 0, (byte) 0xff});
    assertThat(r.getField("tsn")).isEqualTo(LocalDateTime.parse("2026-01-02T03:04:05.000000001"));
    assertThat(r.getField("tstzn")).isEqualTo(OffsetDateTime.parse("2026-01-02T04:04:05.123456789Z"));
    assertThat(((Record) r.getField("st")).getField("x")).isEqualTo(5);
    assertThat(((Record) r.getField("st")).getField("u")).isEqualTo(UUID.fromString(U2));
    assertThat(r.getField("li")).isEqualTo(List.of(4, 5));
    assertThat(r.getField("m")).isEqualTo(Map.of("a", 9));
    assertThat(((Map<?, ?>) ((List<?>) r.getField("lm")).get(0)).get("k")).satisfies(v -> assertThat(bytes(v)).isEqualTo(new byte[] {-1, -1}));
    assertThat(r.getField("doc").toString()).contains("a: VariantArray([Variant(type=BOOLEAN_TRUE, value=true), "
        + "Variant(type=NULL, value=null)])");
    assertThat(rows.get(1).getField("u")).isNull();
    assertThat(rows.get(1).getField("st")).isNull();
    assertThat(rows.get(1).getField("doc")).isNull();
  }

  @Test
  void nanosecondTimestampsFromParquetAndArrowKeepNanosecondsAndQueriesShowThem() throws Exception {
    create("t.nanos", TableDefinition.builder("id int not null, tsn timestamp_ns, tstzn timestamptz_ns").build());
    Path parquet = dir.resolve("nanos.parquet");
    try (java.sql.Connection duck = java.sql.DriverManager.getConnection("jdbc:duckdb:");
        java.sql.Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT 1 AS id, TIMESTAMP_NS '1969-12-31 23:59:59.999999999' AS tsn, "
          + "CAST('2026-01-02 03:04:05.123456789+02' AS TIMESTAMPTZ_NS) AS tstzn) TO '" + parquet + "' (FORMAT parquet)");
    }
    ingest("t.nanos", parquet);
    Path arrow = dir.resolve("nanos.arrow");
    org.apache.arrow.vector.types.pojo.Schema schema = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        org.apache.arrow.vector.types.pojo.Field.notNullable("id", new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true)),
        org.apache.arrow.vector.types.pojo.Field.nullable("tsn", new org.apache.arrow.vector.types.pojo.ArrowType.Timestamp(
            org.apache.arrow.vector.types.TimeUnit.NANOSECOND, null)),
        org.apache.arrow.vector.types.pojo.Field.nullable("tstzn", new org.apache.arrow.vector.types.pojo.ArrowType.Timestamp(
            org.apache.arrow.vector.types.TimeUnit.NANOSECOND, "UTC"))));
    try (org.apache.arrow.memory.RootAllocator allocator = new org.apache.arrow.memory.RootAllocator();
        org.apache.arrow.vector.VectorSchemaRoot root = org.apache.arrow.vector.VectorSchemaRoot.create(schema, allocator);
        java.io.FileOutputStream out = new java.io.FileOutputStream(arrow.toFile());
        org.apache.arrow.vector.ipc.ArrowFileWriter writer = new org.apache.arrow.vector.ipc.ArrowFileWriter(root, null,
            out.getChannel())) {
      ((org.apache.arrow.vector.IntVector) root.getVector("id")).setSafe(0, 2);
      ((org.apache.arrow.vector.TimeStampNanoVector) root.getVector("tsn")).setSafe(0, 1L);
      ((org.apache.arrow.vector.TimeStampNanoTZVector) root.getVector("tstzn")).setSafe(0, -1L);
      root.setRowCount(1);
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    ingest("t.nanos", arrow);

    List<Record> rows = awaitRows("t.nanos", 2);
    assertThat(rows.get(0).getField("tsn")).isEqualTo(LocalDateTime.parse("1969-12-31T23:59:59.999999999"));
    assertThat(rows.get(0).getField("tstzn")).isEqualTo(OffsetDateTime.parse("2026-01-02T01:04:05.123456789Z"));
    assertThat(rows.get(1).getField("tsn")).isEqualTo(LocalDateTime.parse("1970-01-01T00:00:00.000000001"));
    assertThat(rows.get(1).getField("tstzn")).isEqualTo(OffsetDateTime.parse("1969-12-31T23:59:59.999999999Z"));

    String sql = Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "SELECT id, tsn, tstzn, epoch_ns(tstzn) AS ns FROM t.nanos ORDER BY id");
    assertThat(sql).isEqualTo("""
        id,tsn,tstzn,ns
        1,1969-12-31T23:59:59.999999999,2026-01-02T01:04:05.123456789Z,1767315845123456789
        2,1970-01-01T00:00:00.000000001,1969-12-31T23:59:59.999999999Z,-1
        """);
  }

  @Test
  void geometryAndGeographyFromWktInJsonLinesAndCsvQueryAsWkbOrWkt() throws Exception {
    create("t.geo", TableDefinition.builder("id int not null, g geometry").build());
    ingest("t.geo", file("geo.jsonl", "{\"id\":1,\"g\":\"POINT (1 2)\"}\n{\"id\":2,\"g\":null}\n"));
    ingest("t.geo", file("geo.csv", "id,g\n3,\"LINESTRING (0 0, 5 7)\"\n"));
    List<Record> rows = awaitRows("t.geo", 3);
    // Stored as WKB: Iceberg's reader returns the value's bytes.
    assertThat(rows.get(0).getField("g")).isEqualTo(ByteBuffer.wrap(GeoValues.wktToWkb("POINT (1 2)")));
    assertThat(rows.get(1).getField("g")).isNull();
    assertThat(rows.get(2).getField("g")).isEqualTo(ByteBuffer.wrap(GeoValues.wktToWkb("LINESTRING (0 0, 5 7)")));
    String sql = Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "SELECT id, g, ST_AsText(g) AS wkt FROM t.geo ORDER BY id");
    // WKB by default (binary, hex in CSV), WKT through DuckDB's ST_AsText.
    assertThat(sql).isEqualTo("""
        id,g,wkt
        1,0101000000000000000000f03f0000000000000040,POINT (1 2)
        2,,
        3,0102000000020000000000000000000000000000000000000000000000000014400000000000001c40,"LINESTRING (0 0, 5 7)"
        """);
    // A value that is not WKT is refused by the server, naming the column and the row.
    Cli.Result refused = Cli.run("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse",
        "--table", "t.geo", file("bad_geo.csv", "id,g\n4,POINT (1 2)\n5,POINT (1\n").toString());
    assertThat(refused.rc()).as(refused.out() + refused.err()).isEqualTo(1);
    assertThat(refused.err()).contains("INVALID_ARGUMENT").contains("column `g`: invalid WKT at row 1");
    assertThat(read("t.geo")).hasSize(3);
    // Geography too: WKB in Iceberg's reader, the BLOB of its WKB in SQL, WKT through a cast to GEOMETRY.
    create("t.geog", TableDefinition.builder("id int not null, g geography(OGC:CRS84, karney)").build());
    ingest("t.geog", file("geog.jsonl", "{\"id\":1,\"g\":\"POINT (1 2)\"}\n"));
    assertThat(awaitRows("t.geog", 1).get(0).getField("g")).isEqualTo(ByteBuffer.wrap(GeoValues.wktToWkb("POINT (1 2)")));
    assertThat(Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "SELECT id, g, ST_AsText(g::GEOMETRY) AS wkt FROM t.geog")).isEqualTo("""
        id,g,wkt
        1,0101000000000000000000f03f0000000000000040,POINT (1 2)
        """);
  }

  @Test
  void unknownColumnsAreAlwaysNullAndQueryAsNull() throws Exception {
    // A v3 table made by another client with a column of type unknown (not declarable in --schema).
    rest.buildTable(TableIdentifier.parse("t.unknown"), new org.apache.iceberg.Schema(
            org.apache.iceberg.types.Types.NestedField.required(1, "id", org.apache.iceberg.types.Types.IntegerType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(2, "later", org.apache.iceberg.types.Types.UnknownType.get()),
            org.apache.iceberg.types.Types.NestedField.optional(3, "s", org.apache.iceberg.types.Types.StringType.get())))
        .withProperty("format-version", "3").create();
    ingest("t.unknown", file("unknown.jsonl", "{\"id\":1,\"s\":\"a\"}\n{\"id\":2}\n"));
    List<Record> rows = awaitRows("t.unknown", 2);
    assertThat(rows.get(0).getField("later")).isNull();
    assertThat(rows.get(0).getField("s")).isEqualTo("a");
    Table table = server.registry().catalog("warehouse").loadTable(TableIdentifier.parse("t.unknown"));
    try (CloseableIterable<org.apache.iceberg.FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        // Not stored in data files: the column has no metrics in them.
        assertThat(task.file().valueCounts()).doesNotContainKey(2).containsKey(1);
      }
    }
    assertThat(Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "SELECT id, later, s, later IS NULL AS n FROM t.unknown ORDER BY id")).isEqualTo("""
        id,later,s,n
        1,,a,true
        2,,,true
        """);
    assertThat(Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "DESCRIBE t.unknown")).isEqualTo("""
        column_name,column_type,null,key,default,extra
        id,INTEGER,NO,,,
        later,NULL,YES,,,
        s,VARCHAR,YES,,,
        """);
  }

  @Test
  void entityPartialUpsertsOfNestedAndUuidColumnsKeepAbsentColumns() throws Exception {
    create("t.entity_all", TableDefinition.builder("id uuid not null, n int, st struct<x: int>, m map<string, bigint>,"
        + " at timestamptz").mode(TableDefinition.Mode.ENTITY).primaryKey("id").build());
    ingest("t.entity_all", file("seed.jsonl", """
        {"id":"%s","n":1,"st":{"x":1},"m":{"a":1},"at":"2026-01-01T00:00:00.000001Z"}
        {"id":"%s","n":2,"st":{"x":2},"m":{"b":2},"at":"2026-01-01T00:00:00.000002Z"}
        """.formatted(U1, U2)));
    awaitRows("t.entity_all", 2);
    ingest("t.entity_all", file("update.jsonl", """
        {"id":"%s","st":{"x":10}}
        {"id":"%s","n":20,"m":null}
        """.formatted(U1, U2)));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<String> rows = List.of();
    List<String> expected = List.of(
        "00000000-0000-0000-0000-000000000001|20|Record(2)|null|2026-01-01T00:00:00.000002Z",
        U1 + "|1|Record(10)|{a=1}|2026-01-01T00:00:00.000001Z");
    while (System.nanoTime() < deadline && !rows.equals(expected)) {
      rows = new ArrayList<>();
      for (Record r : read("t.entity_all")) {
        rows.add(r.getField("id") + "|" + r.getField("n") + "|" + r.getField("st") + "|" + r.getField("m") + "|" + r.getField("at"));
      }
      rows.sort(null);
      Thread.sleep(100);
    }
    assertThat(rows).containsExactlyElementsOf(expected);
  }

  @Test
  void valuesThatDoNotFitNameTheirRowAndColumn() throws Exception {
    create("t.bad", TableDefinition.builder("id int not null, u uuid, fx fixed(2), st struct<x: int>, tsn timestamp_ns, doc variant")
        .build());
    assertBad("bad1.jsonl", "{\"id\":1}\n{\"id\":3000000000}\n", "row 2, column `id`: 3000000000 does not fit int");
    assertBad("bad2.jsonl", "{\"id\":1,\"st\":{\"x\":1}}\n{\"id\":2}\n{\"id\":3,\"st\":{\"x\":-2147483649}}\n",
        "row 3, column `st.x`: -2147483649 does not fit int");
    assertBad("bad6.jsonl", "{\"id\":1,\"st\":{\"x\":1,\"y\":2}}\n", "has unknown key \"y\"");
    // A key the object leaves out is null (or the field's write default); a non-object is refused.
    assertBad("bad7.jsonl", "{\"id\":1,\"st\":5}\n", "Expected OBJECT, but got UBIGINT: 5");
    assertBad("bad3.csv", "id,u\n1,not-a-uuid\n", "row 1, column `u`: 'not-a-uuid' is not a uuid");
    assertBad("bad4.csv", "id,fx\n1,0a0b\n2,0a0b0c\n", "row 2, column `fx`: '0a0b0c' is not fixed(2) as hex (expected 4 hex digits)");
    assertBad("bad5.jsonl", "{\"id\":1,\"tsn\":\"yesterday\"}\n", "row 1, column `tsn`: 'yesterday' is not a timestamp");
    // The server parses a variant's JSON text and refuses the batch (its row is the batch's, 0-based).
    Cli.Result refused = Cli.run("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse",
        "--table", "t.bad", file("bad8.csv", "id,doc\n1,\"{\"\"a\"\":1}\"\n2,{oops\n").toString());
    assertThat(refused.rc()).as(refused.out() + refused.err()).isEqualTo(1);
    assertThat(refused.err()).contains("INVALID_ARGUMENT").contains("column `doc`: invalid JSON at row 1: Unexpected character");
    assertThat(read("t.bad")).isEmpty();
  }

  /** Iceberg's reader gives fixed values as byte[] or ByteBuffer depending on where they sit. */
  private static byte[] bytes(Object value) {
    if (value instanceof ByteBuffer b) {
      byte[] out = new byte[b.remaining()];
      b.duplicate().get(out);
      return out;
    }
    return (byte[]) value;
  }

  private void assertBad(String name, String text, String message) throws Exception {
    Cli.Result r = Cli.run("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse",
        "--table", "t.bad", file(name, text).toString());
    assertThat(r.rc()).as(r.out() + r.err()).isEqualTo(2);
    assertThat(r.err()).contains(message);
  }

  private void create(String table, TableDefinition definition) {
    Tables.create(rest, TableIdentifier.parse(table), definition);
  }

  private void ingest(String table, Path file) {
    Cli.ok("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--table", table,
        file.toString());
  }

  private Path file(String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, text);
    return file;
  }

  private List<Record> awaitRows(String table, int count) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<Record> rows = read(table);
    while (rows.size() < count && System.nanoTime() < deadline) {
      Thread.sleep(100);
      rows = read(table);
    }
    assertThat(rows).hasSize(count);
    return rows;
  }

  private List<Record> read(String table) throws Exception {
    Table loaded = server.registry().catalog("warehouse").loadTable(TableIdentifier.parse(table));
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(loaded).build()) {
      for (Record r : records) {
        rows.add(r.copy());
      }
    }
    rows.sort(Comparator.comparing(r -> String.valueOf(r.getField(r.struct().fields().get(0).name()))));
    return rows;
  }
}

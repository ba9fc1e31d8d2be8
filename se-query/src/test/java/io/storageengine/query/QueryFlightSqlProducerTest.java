package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.CloseSessionResult;
import org.apache.arrow.flight.GetSessionOptionsRequest;
import org.apache.arrow.flight.GetSessionOptionsResult;
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.SetSessionOptionsResult;
import org.apache.arrow.flight.client.ClientCookieMiddleware;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.util.TableRef;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** End to end: Iceberg v3 tables, the producer hosted in grpc-netty, the JDBC driver and FlightSqlClient. */
class QueryFlightSqlProducerTest {
  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static TestQueryServer server;
  static Catalog main;
  static FlightClient flightClient;
  static FlightSqlClient sqlClient;

  static final org.apache.iceberg.Schema ALL_TYPES = new org.apache.iceberg.Schema(
      Types.NestedField.required(1, "id", Types.IntegerType.get()),
      Types.NestedField.optional(2, "b", Types.BooleanType.get()),
      Types.NestedField.optional(3, "l", Types.LongType.get()),
      Types.NestedField.optional(4, "f", Types.FloatType.get()),
      Types.NestedField.optional(5, "d", Types.DoubleType.get()),
      Types.NestedField.optional(6, "dec", Types.DecimalType.of(20, 4)),
      Types.NestedField.optional(7, "dt", Types.DateType.get()),
      Types.NestedField.optional(8, "tm", Types.TimeType.get()),
      Types.NestedField.optional(9, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(10, "tstz", Types.TimestampType.withZone()),
      Types.NestedField.optional(11, "s", Types.StringType.get()),
      Types.NestedField.optional(12, "u", Types.UUIDType.get()),
      Types.NestedField.optional(13, "fx", Types.FixedType.ofLength(3)),
      Types.NestedField.optional(14, "bin", Types.BinaryType.get()),
      Types.NestedField.optional(15, "st", Types.StructType.of(
          Types.NestedField.optional(16, "a", Types.IntegerType.get()),
          Types.NestedField.optional(17, "name", Types.StringType.get()))),
      Types.NestedField.optional(18, "li", Types.ListType.ofOptional(19, Types.LongType.get())),
      Types.NestedField.optional(20, "m", Types.MapType.ofOptional(21, 22, Types.StringType.get(), Types.IntegerType.get())));

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-test");
    allocator = new RootAllocator();
    warehouse = new TestWarehouse();
    main = warehouse.localCatalog("warehouse", dir.resolve("warehouse"));
    Catalog other = warehouse.localCatalog("other", dir.resolve("other"));
    Catalog remote = warehouse.remoteCatalog("remote");

    org.apache.iceberg.Schema pageViews = new org.apache.iceberg.Schema(List.of(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "user_name", Types.StringType.get()),
        Types.NestedField.optional(3, "score", Types.DoubleType.get())), Set.of(1));
    Table views = TestWarehouse.createTable(main, "analytics.events", "page_views", pageViews, PartitionSpec.unpartitioned());
    List<Record> viewRows = new ArrayList<>();
    for (long i = 0; i < 20; i++) {
      viewRows.add(TestWarehouse.record(pageViews, i, "user" + (i % 4), i * 1.5));
    }
    TestWarehouse.append(views, viewRows);

    org.apache.iceberg.Schema orders = new org.apache.iceberg.Schema(
        Types.NestedField.required(1, "id", Types.IntegerType.get()),
        Types.NestedField.optional(2, "region", Types.StringType.get()),
        Types.NestedField.optional(3, "amount", Types.DecimalType.of(10, 2)),
        Types.NestedField.optional(4, "user_name", Types.StringType.get()));
    Table ordersTable = TestWarehouse.createTable(main, "sales", "orders", orders,
        PartitionSpec.builderFor(orders).identity("region").build());
    TestWarehouse.append(ordersTable, List.of(
        TestWarehouse.record(orders, 1, "eu", new BigDecimal("10.50"), "user1"),
        TestWarehouse.record(orders, 2, "us", new BigDecimal("20.00"), "user2"),
        TestWarehouse.record(orders, 3, "eu", new BigDecimal("5.25"), "user1"),
        TestWarehouse.record(orders, 4, "apac", new BigDecimal("7.00"), "user3")));
    Table otherOrders = TestWarehouse.createTable(other, "sales", "orders", orders, PartitionSpec.unpartitioned());
    TestWarehouse.append(otherOrders, List.of(TestWarehouse.record(orders, 100, "other", new BigDecimal("1.00"), "x")));

    org.apache.iceberg.Schema dvSchema = new org.apache.iceberg.Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "v", Types.StringType.get()));
    Table dv = TestWarehouse.createTable(main, "sales", "with_deletes", dvSchema, PartitionSpec.unpartitioned());
    List<Record> dvRows = new ArrayList<>();
    for (long i = 0; i < 10; i++) {
      dvRows.add(TestWarehouse.record(dvSchema, i, "v" + i));
    }
    DataFile first = TestWarehouse.append(dv, dvRows).get(0);
    DataFile second = TestWarehouse.append(dv, List.of(TestWarehouse.record(dvSchema, 10L, "v10"),
        TestWarehouse.record(dvSchema, 11L, "v11"))).get(0);
    TestWarehouse.deletePositions(dv, first, 1, 3, 5);
    TestWarehouse.deletePositions(dv, second, 0, 1);

    org.apache.iceberg.Schema evolving = new org.apache.iceberg.Schema(
        Types.NestedField.required(1, "id", Types.IntegerType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "dropme", Types.StringType.get()));
    Table evolved = TestWarehouse.createTable(main, "sales", "evolved", evolving, PartitionSpec.unpartitioned());
    TestWarehouse.append(evolved, List.of(TestWarehouse.record(evolving, 1, "a", "x"), TestWarehouse.record(evolving, 2, "b", "y")));
    evolved.updateSchema().renameColumn("name", "full_name").deleteColumn("dropme")
        .addColumn("extra", Types.LongType.get()).updateColumn("id", Types.LongType.get()).commit();
    TestWarehouse.append(evolved, List.of(TestWarehouse.record(evolved.schema(), 3_000_000_000L, "c", 7L)));

    Table types = TestWarehouse.createTable(main, "types", "all_types", ALL_TYPES, PartitionSpec.unpartitioned());
    TestWarehouse.append(types, List.of(allTypesRecord(), TestWarehouse.record(ALL_TYPES, 2)));

    TestWarehouse.createTable(main, "sales", "empty", dvSchema, PartitionSpec.unpartitioned());

    Table items = TestWarehouse.createTable(remote, "ns", "items", dvSchema, PartitionSpec.unpartitioned());
    DataFile remoteFile = TestWarehouse.append(items, List.of(TestWarehouse.record(dvSchema, 1L, "r1"),
        TestWarehouse.record(dvSchema, 2L, "r2"), TestWarehouse.record(dvSchema, 3L, "r3"))).get(0);
    TestWarehouse.deletePositions(items, remoteFile, 1);

    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    flightClient = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build();
    sqlClient = new FlightSqlClient(flightClient);
  }

  static Record allTypesRecord() {
    Record nested = org.apache.iceberg.data.GenericRecord.create(ALL_TYPES.findField("st").type().asStructType());
    nested.set(0, 7);
    nested.set(1, "seven");
    return TestWarehouse.record(ALL_TYPES, 1, true, 1L << 40, 1.5f, 2.25, new BigDecimal("12345.6789"),
        LocalDate.of(2024, 2, 29), LocalTime.of(13, 14, 15, 123_456_000), LocalDateTime.of(2024, 1, 2, 3, 4, 5, 678_901_000),
        OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 1_000, ZoneOffset.UTC), "héllo", UUID.fromString("f79c3e09-677c-4d6c-8e8b-5d3e2a3d7b1a"),
        new byte[] {1, 2, 3}, ByteBuffer.wrap(new byte[] {9, 8}), nested, List.of(1L, 2L, 3L), Map.of("k", 1));
  }

  @AfterAll
  static void tearDown() throws Exception {
    sqlClient.close();
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static CallHeaders headers(String catalogId) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert(QueryMetadataInterceptor.HEADER_NAME, "{\"catalog_id\":\"" + catalogId + "\"}");
    return headers;
  }

  static HeaderCallOption tenant(String catalogId) {
    return new HeaderCallOption(headers(catalogId));
  }

  static Connection jdbc(String catalogId) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("useEncryption", "false");
    properties.setProperty(QueryMetadataInterceptor.HEADER_NAME, "{\"catalog_id\":\"" + catalogId + "\"}");
    return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.port(), properties);
  }

  static List<String> rows(String catalogId, String sql) throws SQLException {
    try (Connection connection = jdbc(catalogId); Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery(sql)) {
      List<String> out = new ArrayList<>();
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> values = new ArrayList<>();
        for (int i = 1; i <= columns; i++) {
          values.add(String.valueOf(rs.getObject(i)));
        }
        out.add(String.join("|", values));
      }
      return out;
    }
  }

  /** Rows of {@code table} as Iceberg's own generic reader sees them, formatted like {@link #rows}. */
  static Set<String> icebergRows(Catalog catalog, String namespace, String table) throws Exception {
    Table loaded = catalog.loadTable(TableIdentifier.of(org.apache.iceberg.catalog.Namespace.of(namespace.split("\\.")), table));
    Set<String> out = new TreeSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(loaded).build()) {
      for (Record record : records) {
        List<String> values = new ArrayList<>();
        for (Types.NestedField field : loaded.schema().columns()) {
          values.add(String.valueOf(record.getField(field.name())));
        }
        out.add(String.join("|", values));
      }
    }
    return out;
  }

  @Test
  void selectMatchesIcebergReaderForNestedNamespace() throws Exception {
    List<String> rows = rows("warehouse", "SELECT * FROM default.\"analytics.events\".page_views");
    assertThat(new TreeSet<>(rows)).isEqualTo(icebergRows(main, "analytics.events", "page_views"));
    assertThat(rows("warehouse", "SELECT count(*) FROM \"analytics.events\".page_views WHERE score > 10")).containsExactly("13");
  }

  @Test
  void deletionVectorsAreApplied() throws Exception {
    List<String> rows = rows("warehouse", "SELECT id, v FROM default.sales.with_deletes ORDER BY id");
    assertThat(rows).containsExactly("0|v0", "2|v2", "4|v4", "6|v6", "7|v7", "8|v8", "9|v9");
    assertThat(new TreeSet<>(rows)).isEqualTo(icebergRows(main, "sales", "with_deletes"));
  }

  @Test
  void evolvedSchemaReadsByFieldId() throws Exception {
    assertThat(rows("warehouse", "SELECT id, full_name, extra FROM sales.evolved ORDER BY id"))
        .containsExactly("1|a|null", "2|b|null", "3000000000|c|7");
    assertThat(new TreeSet<>(rows("warehouse", "SELECT * FROM sales.evolved"))).isEqualTo(icebergRows(main, "sales", "evolved"));
  }

  @Test
  void partitionedTableWithPrunedFilterAggregatesAndJoins() throws Exception {
    assertThat(rows("warehouse", "SELECT id, amount FROM sales.orders WHERE region = 'eu' ORDER BY id"))
        .containsExactly("1|10.50", "3|5.25");
    assertThat(rows("warehouse", "SELECT region, sum(amount) AS total FROM sales.orders GROUP BY region ORDER BY region"))
        .containsExactly("apac|7.00", "eu|15.75", "us|20.00");
    assertThat(rows("warehouse", "SELECT o.id, count(v.id) FROM sales.orders o JOIN \"analytics.events\".page_views v "
        + "ON o.user_name = v.user_name WHERE o.id <= 2 GROUP BY o.id ORDER BY o.id")).containsExactly("1|5", "2|5");
    assertThat(rows("warehouse", "SELECT id, rank() OVER (PARTITION BY region ORDER BY amount DESC) FROM sales.orders "
        + "ORDER BY id LIMIT 3")).containsExactly("1|1", "2|1", "3|2");
    {
      var filter = FilterPushdown.filter(main.loadTable(TableIdentifier.of("sales", "orders")).schema(),
          List.of(new StatementAnalyzer.Comparison("region", "COMPARE_EQUAL", "STRING", "eu")), QueryParameters.NONE);
      assertThat(filter.toString()).contains("region", "eu");
    }
  }

  @Test
  void everyIcebergTypeRoundTrips() throws Exception {
    List<String> rows = rows("warehouse", "SELECT id, b, l, f, d, dec, dt, s, CAST(u AS VARCHAR), st.a, st.name, li, m['k'], "
        + "CAST(tm AS VARCHAR), CAST(ts AS VARCHAR), CAST(tstz AS VARCHAR), hex(fx), hex(bin) FROM types.all_types ORDER BY id");
    assertThat(rows).containsExactly(
        "1|true|1099511627776|1.5|2.25|12345.6789|2024-02-29|héllo|f79c3e09-677c-4d6c-8e8b-5d3e2a3d7b1a|7|seven|[1,2,3]|1|"
            + "13:14:15.123456|2024-01-02 03:04:05.678901|2024-01-02 03:04:05.000001+00|010203|0908",
        "2|null|null|null|null|null|null|null|null|null|null|null|null|null|null|null|null|null");
    Record expected = allTypesRecord();
    try (FlightStream stream = fetch("warehouse", "SELECT * FROM types.all_types WHERE id = 1")) {
      assertThat(stream.next()).isTrue();
      VectorSchemaRoot root = stream.getRoot();
      assertThat(root.getRowCount()).isEqualTo(1);
      assertThat(root.getVector("tm").getObject(0)).isEqualTo(expected.getField("tm") == null ? null
          : ((LocalTime) expected.getField("tm")).toNanoOfDay() / 1000);
      assertThat(root.getVector("ts").getObject(0)).isEqualTo(expected.getField("ts"));
      assertThat((byte[]) root.getVector("fx").getObject(0)).containsExactly(1, 2, 3);
      assertThat(root.getVector("st").getObject(0).toString()).isEqualTo("{\"a\":7,\"name\":\"seven\"}");
      assertThat(root.getVector("m").getObject(0).toString()).isEqualTo("[{\"key\":\"k\",\"value\":1}]");
    }
  }

  @Test
  void emptyTableHasItsColumns() throws Exception {
    try (FlightStream stream = fetch("warehouse", "SELECT * FROM sales.empty")) {
      assertThat(stream.getSchema().getFields()).extracting(f -> f.getName() + ":" + f.getType())
          .containsExactly("id:Int(64, true)", "v:Utf8");
      int rows = 0;
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
      assertThat(rows).isZero();
    }
    assertThat(rows("warehouse", "SELECT count(*), max(id) FROM sales.empty")).containsExactly("0|null");
  }

  @Test
  void remoteFilesAreReadThroughTheCache() throws Exception {
    assertThat(rows("remote", "SELECT * FROM ns.items ORDER BY id")).containsExactly("1|r1", "3|r3");
    assertThat(server.producer).isNotNull();
    try (var files = Files.list(dir.resolve("local").resolve("data-files"))) {
      assertThat(files.count()).isEqualTo(1);
    }
  }

  @Test
  void tenantsAreIsolated() throws Exception {
    assertThat(rows("other", "SELECT id, region FROM default.sales.orders")).containsExactly("100|other");
    assertThatThrownBy(() -> rows("other", "SELECT * FROM sales.with_deletes"))
        .hasMessageContaining("table default.\"sales\".\"with_deletes\" does not exist");
    assertThatThrownBy(() -> rows("nobody", "SELECT 1"))
        .hasMessageContaining("catalog nobody does not exist");
  }

  @Test
  void missingCatalogSelectionSaysHowToSelectOne() {
    assertThatThrownBy(() -> sqlClient.execute("SELECT 1"))
        .isInstanceOf(FlightRuntimeException.class)
        .hasMessageContaining("no catalog selected")
        .hasMessageContaining("se-query-metadata")
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> sqlClient.execute("SELECT 1", tenant("nobody")))
        .hasMessageContaining("catalog nobody does not exist")
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
  }

  @Test
  void sessionOptionCatalogSelectsTheTenant() throws Exception {
    Properties properties = new Properties();
    properties.setProperty("useEncryption", "false");
    properties.setProperty("catalog", "other");
    Connection connection = DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.port(), properties);
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery("SELECT id FROM sales.orders")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong(1)).isEqualTo(100);
    } finally {
      try {
        connection.close();
      } catch (SQLException e) {
        // Driver 18.3 shuts its channel down before sending CloseSession; the session expires server-side.
        assertThat(e.getMessage()).contains("Channel shutdown invoked");
      }
    }
    try (FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port()))
            .intercept(new ClientCookieMiddleware.Factory()).build();
        FlightSqlClient sessionClient = new FlightSqlClient(client)) {
      SetSessionOptionsResult result = sessionClient.setSessionOptions(new SetSessionOptionsRequest(
          Map.of("catalog", SessionOptionValueFactory.makeSessionOptionValue("warehouse"))));
      assertThat(result.hasErrors()).isFalse();
      GetSessionOptionsResult options = sessionClient.getSessionOptions(new GetSessionOptionsRequest());
      assertThat(options.getSessionOptions()).containsOnlyKeys("catalog");
      FlightInfo info = sessionClient.execute("SELECT count(*) FROM sales.orders");
      try (FlightStream stream = sessionClient.getStream(info.getEndpoints().get(0).getTicket())) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(4L);
      }
      SetSessionOptionsResult bad = sessionClient.setSessionOptions(new SetSessionOptionsRequest(
          Map.of("catalog", SessionOptionValueFactory.makeSessionOptionValue("nobody"),
              "colour", SessionOptionValueFactory.makeSessionOptionValue("red"))));
      assertThat(bad.getErrors()).containsOnlyKeys("catalog", "colour");
      assertThat(sessionClient.closeSession(new CloseSessionRequest()).getStatus()).isEqualTo(CloseSessionResult.Status.CLOSED);
    }
  }

  @Test
  void describeShowAndInformationSchemaComeFromTheCatalog() throws Exception {
    assertThat(rows("warehouse", "DESCRIBE default.\"analytics.events\".page_views"))
        .containsExactly("id|BIGINT|NO|PRI|null|null", "user_name|VARCHAR|YES|null|null|null", "score|DOUBLE|YES|null|null|null");
    assertThat(rows("warehouse", "SHOW COLUMNS FROM sales.evolved")).extracting(r -> r.split("\\|")[0])
        .containsExactly("id", "full_name", "extra");
    assertThat(rows("warehouse", "SHOW TABLES")).contains("default|analytics.events|page_views", "default|sales|orders");
    assertThat(rows("other", "SHOW TABLES")).containsExactly("default|sales|orders");
    assertThat(rows("warehouse", "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'sales' "
        + "ORDER BY table_name")).containsExactly("sales|empty", "sales|evolved", "sales|orders", "sales|with_deletes");
    assertThat(rows("other", "SELECT column_name, data_type FROM information_schema.columns ORDER BY ordinal_position"))
        .containsExactly("id|INTEGER", "region|VARCHAR", "amount|DECIMAL(10,2)", "user_name|VARCHAR");
    // An alias is part of the reference DuckDB locates; it survives the rewrite.
    assertThat(rows("other", "SELECT c.column_name FROM information_schema.columns AS c JOIN information_schema.tables t "
        + "ON t.table_name = c.table_name WHERE c.ordinal_position = 1")).containsExactly("id");
  }

  @Test
  void flightInfoSchemaEqualsStreamSchema() throws Exception {
    for (String sql : List.of("SELECT * FROM types.all_types", "SELECT 1 AS a, 2 AS a", "DESCRIBE sales.orders",
        "SELECT * FROM sales.empty", "SELECT region, count(*) FROM sales.orders GROUP BY region")) {
      FlightInfo info = sqlClient.execute(sql, tenant("warehouse"));
      try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
        assertThat(stream.getSchema()).as(sql).isEqualTo(info.getSchemaOptional().orElseThrow());
        while (stream.next()) {
          assertThat(stream.getRoot().getSchema()).isEqualTo(info.getSchemaOptional().orElseThrow());
        }
      }
    }
  }

  @Test
  void ticketsAreBoundToTheirTenant() throws Exception {
    FlightInfo info = sqlClient.execute("SELECT * FROM sales.orders", tenant("warehouse"));
    try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(), tenant("other"))) {
      assertThatThrownBy(stream::next).hasMessageContaining("ticket belongs to catalog `warehouse`, but this call selects `other`");
    }
  }

  @Test
  void preparedStatements() throws Exception {
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare("SELECT id FROM sales.orders WHERE region = 'eu' ORDER BY id",
        tenant("warehouse"))) {
      assertThat(prepared.getResultSetSchema().getFields()).extracting(f -> f.getName()).containsExactly("id");
      FlightInfo info = prepared.execute(tenant("warehouse"));
      List<Integer> ids = new ArrayList<>();
      try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
        while (stream.next()) {
          for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
            ids.add((Integer) stream.getRoot().getVector(0).getObject(i));
          }
        }
      }
      assertThat(ids).containsExactly(1, 3);
    }
    try (Connection connection = jdbc("warehouse");
        var prepared = connection.prepareStatement("SELECT count(*) FROM sales.with_deletes")) {
      for (int run = 0; run < 2; run++) {
        try (ResultSet rs = prepared.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(7);
        }
      }
    }
  }

  @Test
  void metadataCalls() throws Exception {
    assertThat(strings(sqlClient.getCatalogs(tenant("warehouse")), "catalog_name")).containsExactly("default");
    assertThat(strings(sqlClient.getSchemas("default", "sal%", tenant("warehouse")), "db_schema_name")).containsExactly("sales");
    assertThat(strings(sqlClient.getSchemas(null, null, tenant("warehouse")), "db_schema_name"))
        .containsExactly("analytics", "analytics.events", "sales", "types");
    assertThat(strings(sqlClient.getTables(null, "sales", "e%", List.of("TABLE"), false, tenant("warehouse")), "table_name"))
        .containsExactly("empty", "evolved");
    assertThat(strings(sqlClient.getTables(null, null, null, List.of("VIEW"), false, tenant("warehouse")), "table_name")).isEmpty();
    assertThat(strings(sqlClient.getTableTypes(tenant("warehouse")), "table_type")).containsExactly("TABLE");
    FlightInfo tables = sqlClient.getTables(null, "types", "all_types", null, true, tenant("warehouse"));
    try (FlightStream stream = sqlClient.getStream(tables.getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
      assertThat(stream.next()).isTrue();
      byte[] bytes = (byte[]) stream.getRoot().getVector("table_schema").getObject(0);
      Schema tableSchema = MessageSerializer.deserializeSchema(new ReadChannel(new ByteArrayReadableSeekableByteChannel(bytes)));
      FlightInfo select = sqlClient.execute("SELECT * FROM types.all_types", tenant("warehouse"));
      assertThat(tableSchema).isEqualTo(select.getSchemaOptional().orElseThrow());
    }
    assertThat(strings(sqlClient.getPrimaryKeys(TableRef.of(null, "analytics.events", "page_views"), tenant("warehouse")),
        "column_name")).containsExactly("id");
    try (FlightStream stream = sqlClient.getStream(sqlClient.getSqlInfo(new int[0], tenant("warehouse"))
        .getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
      int rows = 0;
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
      assertThat(rows).isGreaterThan(3);
    }
    try (Connection connection = jdbc("warehouse"); ResultSet rs = connection.getMetaData().getTables(null, "sales", "orders", null)) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString("TABLE_NAME")).isEqualTo("orders");
      assertThat(connection.getMetaData().isReadOnly()).isTrue();
    }
  }

  static List<String> strings(FlightInfo info, String column) throws Exception {
    List<String> out = new ArrayList<>();
    try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
      while (stream.next()) {
        for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
          out.add(String.valueOf(stream.getRoot().getVector(column).getObject(i)));
        }
      }
    }
    return out;
  }

  static FlightStream fetch(String catalogId, String sql) {
    FlightInfo info = sqlClient.execute(sql, tenant(catalogId));
    return sqlClient.getStream(info.getEndpoints().get(0).getTicket(), tenant(catalogId));
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelFlightInfoResult;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What standard Flight SQL clients (the JDBC driver, FlightSqlClient) need from the server. */
class FlightSqlClientsTest {
  /** A query that keeps DuckDB busy for minutes unless it is stopped. */
  static final String LONG_QUERY = "SELECT sum(a.range * b.range) AS s FROM range(2000000) a, range(2000000) b";
  /** A scan producing batches for minutes unless stopped. */
  static final String LONG_SCAN = "SELECT a.range * b.range AS p FROM range(2000000) a, range(2000000) b";

  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static TestQueryServer server;
  static FlightClient flightClient;
  static FlightSqlClient sqlClient;

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-clients");
    allocator = new RootAllocator();
    warehouse = new TestWarehouse();
    Catalog main = warehouse.localCatalog("warehouse", dir.resolve("warehouse"));
    org.apache.iceberg.Schema people = new org.apache.iceberg.Schema(List.of(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "amount", Types.DecimalType.of(10, 2))), Set.of(1));
    Table table = TestWarehouse.createTable(main, "crm", "people", people, PartitionSpec.unpartitioned());
    TestWarehouse.append(table, List.of(TestWarehouse.record(people, 1L, "ann", new BigDecimal("1.50")),
        TestWarehouse.record(people, 2L, "bob", null)));
    Table types = TestWarehouse.createTable(main, "types", "all_types", QueryFlightSqlProducerTest.ALL_TYPES,
        PartitionSpec.unpartitioned());
    TestWarehouse.append(types, List.of(QueryFlightSqlProducerTest.allTypesRecord(),
        TestWarehouse.record(QueryFlightSqlProducerTest.ALL_TYPES, 2)));
    org.apache.iceberg.Schema nanos = new org.apache.iceberg.Schema(List.of(
        Types.NestedField.required(1, "id", Types.IntegerType.get()),
        Types.NestedField.optional(2, "tsn", Types.TimestampNanoType.withoutZone()),
        Types.NestedField.optional(3, "tstzn", Types.TimestampNanoType.withZone())));
    Table nanoTable = TestWarehouse.createTable(main, "types", "nanos", nanos, PartitionSpec.unpartitioned());
    TestWarehouse.append(nanoTable, List.of(
        TestWarehouse.record(nanos, 1, java.time.LocalDateTime.parse("2024-01-02T03:04:05.123456789"),
            java.time.OffsetDateTime.parse("2024-01-02T03:04:05.987654321Z")),
        TestWarehouse.record(nanos, 2, null, null)));
    org.apache.iceberg.Schema plain = new org.apache.iceberg.Schema(List.of(
        Types.NestedField.required(1, "k", Types.IntegerType.get())));
    Table plainTable = TestWarehouse.createTable(main, "default", "plain", plain, PartitionSpec.unpartitioned());
    TestWarehouse.append(plainTable, List.of(TestWarehouse.record(plain, 7)));
    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    flightClient = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build();
    sqlClient = new FlightSqlClient(flightClient);
  }

  @AfterAll
  static void tearDown() throws Exception {
    sqlClient.close();
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static Connection jdbc() throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("useEncryption", "false");
    properties.setProperty(QueryMetadataInterceptor.HEADER_NAME, "{\"catalog_id\":\"warehouse\"}");
    return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.port(), properties);
  }

  // ------------------------------------------------------------------ metadata

  @Test
  void jdbcColumnsAndResultsTellNullabilityPrecisionScaleAndTable() throws Exception {
    try (Connection connection = jdbc()) {
      try (ResultSet columns = connection.getMetaData().getColumns(null, "crm", "people", null)) {
        List<String> rows = new ArrayList<>();
        while (columns.next()) {
          rows.add(columns.getString("COLUMN_NAME") + " " + columns.getString("IS_NULLABLE") + " "
              + columns.getInt("COLUMN_SIZE") + " " + columns.getInt("DECIMAL_DIGITS"));
        }
        assertThat(rows).hasSize(3);
        assertThat(rows.get(0)).startsWith("id NO");
        assertThat(rows.get(1)).startsWith("name YES");
        assertThat(rows.get(2)).isEqualTo("amount YES 10 2");
      }
      try (java.sql.Statement statement = connection.createStatement();
          ResultSet rows = statement.executeQuery(
              "SELECT id, p.name AS who, amount, amount * 2 AS twice FROM crm.people AS p ORDER BY id")) {
        // (The 18.3 driver never fills ResultSetMetaData.isNullable: nullability is checked on the
        // Arrow schema below.)
        java.sql.ResultSetMetaData metadata = rows.getMetaData();
        assertThat(List.of(metadata.getSchemaName(1), metadata.getTableName(1), metadata.getTableName(2)))
            .containsExactly("crm", "people", "people");
        assertThat(List.of(metadata.getPrecision(3), metadata.getScale(3))).containsExactly(10, 2);
        assertThat(metadata.getColumnTypeName(3)).isEqualTo("DECIMAL");
        // A computed column reads no table column: no table, DuckDB's type (DECIMAL(18,2)).
        assertThat(metadata.getTableName(4)).isNullOrEmpty();
        assertThat(metadata.getPrecision(4)).isEqualTo(18);
        assertThat(rows.next()).isTrue();
        assertThat(rows.getBigDecimal(3)).isEqualByComparingTo("1.50");
      }
    }
    FlightInfo info = sqlClient.execute(
        "SELECT id, p.name AS who, amount, amount * 2 AS twice, id + 1 AS next FROM crm.people AS p",
        QueryFlightSqlProducerTest.tenant("warehouse"));
    assertThat(info.getSchemaOptional().orElseThrow().getFields().stream()
        .map(org.apache.arrow.vector.types.pojo.Field::isNullable).toList())
        .containsExactly(false, true, true, true, true);
  }

  @Test
  void getTablesSchemaAndResultsCarryNotNullFixedSizeAndColumnMetadata() throws Exception {
    FlightInfo tables = sqlClient.getTables(null, "crm", "people", null, true, QueryFlightSqlProducerTest.tenant("warehouse"));
    org.apache.arrow.vector.types.pojo.Schema tableSchema;
    try (FlightStream stream = sqlClient.getStream(tables.getEndpoints().get(0).getTicket(),
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      assertThat(stream.next()).isTrue();
      byte[] bytes = (byte[]) stream.getRoot().getVector("table_schema").getObject(0);
      tableSchema = org.apache.arrow.vector.ipc.message.MessageSerializer.deserializeSchema(
          new org.apache.arrow.vector.ipc.ReadChannel(
              new org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel(bytes)));
    }
    assertThat(tableSchema.findField("id").isNullable()).isFalse();
    org.apache.arrow.flight.sql.FlightSqlColumnMetadata amount =
        new org.apache.arrow.flight.sql.FlightSqlColumnMetadata(tableSchema.findField("amount").getMetadata());
    assertThat(List.of(amount.getPrecision(), amount.getScale())).containsExactly(10, 2);
    assertThat(List.of(amount.getCatalogName(), amount.getSchemaName(), amount.getTableName(), amount.getTypeName()))
        .containsExactly("default", "crm", "people", "DECIMAL(10,2)");

    FlightInfo info = sqlClient.execute("SELECT fx, id FROM types.all_types ORDER BY id",
        QueryFlightSqlProducerTest.tenant("warehouse"));
    org.apache.arrow.vector.types.pojo.Field fx = info.getSchemaOptional().orElseThrow().getFields().get(0);
    assertThat(fx.getType()).isEqualTo(new org.apache.arrow.vector.types.pojo.ArrowType.FixedSizeBinary(3));
    try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(),
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      assertThat(stream.next()).isTrue();
      assertThat(stream.getRoot().getSchema()).isEqualTo(info.getSchemaOptional().orElseThrow());
      org.apache.arrow.vector.FixedSizeBinaryVector values =
          (org.apache.arrow.vector.FixedSizeBinaryVector) stream.getRoot().getVector(0);
      assertThat(values.getObject(0)).containsExactly(1, 2, 3);
      assertThat(values.isNull(1)).isTrue();
    }
  }

  @Test
  void anUntypedParameterPreparesAsAString() throws Exception {
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare("SELECT ? AS foo",
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      assertThat(prepared.getResultSetSchema().getFields().get(0).getType())
          .isEqualTo(org.apache.arrow.vector.types.pojo.ArrowType.Utf8.INSTANCE);
      assertThat(prepared.getParameterSchema().getFields().get(0).getType())
          .isEqualTo(org.apache.arrow.vector.types.pojo.ArrowType.Utf8.INSTANCE);
    }
  }

  @Test
  void anUnqualifiedTableNameReadsNamespaceDefault() throws Exception {
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement()) {
      try (ResultSet rows = statement.executeQuery("SELECT k FROM plain")) {
        assertThat(rows.next()).isTrue();
        assertThat(rows.getInt(1)).isEqualTo(7);
        assertThat(rows.getMetaData().getSchemaName(1)).isEqualTo("default");
      }
      try (ResultSet rows = statement.executeQuery("SELECT count(*) FROM plain JOIN crm.people ON k > id")) {
        assertThat(rows.next()).isTrue();
        assertThat(rows.getLong(1)).isEqualTo(2);
      }
      assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM people"))
          .hasMessageContaining("table `people` does not exist in namespace default");
      assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM plain, main.t"))
          .hasMessageContaining("table `main.t` is ambiguous next to an unqualified table name");
    }
  }

  @Test
  void everyJdbcDatabaseMetaDataMethodAnswers() throws Exception {
    List<String> failures = new ArrayList<>();
    List<String> driverGaps = new ArrayList<>();
    int called = 0;
    try (Connection connection = jdbc()) {
      DatabaseMetaData metadata = connection.getMetaData();
      for (Method method : DatabaseMetaData.class.getMethods()) {
        if (Modifier.isStatic(method.getModifiers()) || method.getName().equals("unwrap")
            || method.getName().equals("isWrapperFor")) {
          continue;
        }
        Object[] args = new Object[method.getParameterCount()];
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < args.length; i++) {
          // Real arguments: the driver itself refuses a null table name before asking the server.
          args[i] = types[i] == int.class ? (Object) (method.getName().startsWith("supportsResultSet")
              ? ResultSet.TYPE_FORWARD_ONLY : 0) : types[i] == boolean.class ? false
              : types[i] == String.class ? (i % 3 == 1 ? "crm" : i % 3 == 2 ? "people" : null) : null;
        }
        called++;
        try {
          Object result = method.invoke(metadata, args);
          if (result instanceof ResultSet rows) {
            while (rows.next()) {
              for (int c = 1; c <= rows.getMetaData().getColumnCount(); c++) {
                rows.getObject(c);
              }
            }
            rows.close();
          }
        } catch (java.lang.reflect.InvocationTargetException e) {
          if (String.valueOf(e.getCause().getMessage()).contains("todo: implement this method")) {
            driverGaps.add(method.getName());
          } else if (!(e.getCause() instanceof java.sql.SQLFeatureNotSupportedException)) {
            failures.add(method.getName() + ": " + e.getCause());
          }
        }
      }
    }
    assertThat(called).isGreaterThan(150);
    assertThat(failures).isEmpty();
    // Methods the JDBC driver (Avatica) leaves unimplemented on the client side, whatever the
    // server answers: none of them asks the server anything.
    assertThat(driverGaps).containsExactlyInAnyOrder("ownUpdatesAreVisible", "ownDeletesAreVisible",
        "ownInsertsAreVisible", "othersUpdatesAreVisible", "othersDeletesAreVisible", "othersInsertsAreVisible",
        "updatesAreDetected", "deletesAreDetected", "insertsAreDetected", "supportsResultSetHoldability");
  }

  @Test
  void sqlInfoAnswersEveryStandardCodeAndSkipsUnknownOnes() throws Exception {
    List<Integer> codes = sqlInfoCodes(sqlClient.getSqlInfo(new int[0], QueryFlightSqlProducerTest.tenant("warehouse")));
    List<Integer> standard = new ArrayList<>();
    for (FlightSql.SqlInfo info : FlightSql.SqlInfo.values()) {
      if (info != FlightSql.SqlInfo.UNRECOGNIZED && !ServerSqlInfo.UNANSWERED.contains(info)) {
        standard.add(info.getNumber());
      }
    }
    assertThat(codes).containsExactlyInAnyOrderElementsOf(standard);
    assertThat(standard).hasSize(FlightSql.SqlInfo.values().length - 1 - ServerSqlInfo.UNANSWERED.size());
    List<Integer> some = sqlInfoCodes(sqlClient.getSqlInfo(new int[] {9999, FlightSql.SqlInfo.SQL_KEYWORDS_VALUE,
        FlightSql.SqlInfo.FLIGHT_SQL_SERVER_SUBSTRAIT_MIN_VERSION_VALUE}, QueryFlightSqlProducerTest.tenant("warehouse")));
    assertThat(some).containsExactly(FlightSql.SqlInfo.SQL_KEYWORDS_VALUE);
    assertThat(sqlInfoCodes(sqlClient.getSqlInfo(new int[] {9999}, QueryFlightSqlProducerTest.tenant("warehouse"))))
        .isEmpty();
    try (Connection connection = jdbc()) {
      DatabaseMetaData metadata = connection.getMetaData();
      assertThat(metadata.getSQLKeywords()).contains("SELECT");
      assertThat(metadata.getNumericFunctions()).contains("ABS");
      assertThat(metadata.isReadOnly()).isTrue();
      assertThat(metadata.supportsTransactions()).isFalse();
      assertThat(metadata.nullsAreSortedAtEnd()).isTrue();
      assertThat(metadata.getIdentifierQuoteString()).isEqualTo("\"");
    }
  }

  private static List<Integer> sqlInfoCodes(FlightInfo info) throws Exception {
    List<Integer> codes = new ArrayList<>();
    try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(),
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      while (stream.next()) {
        UInt4Vector names = (UInt4Vector) stream.getRoot().getVector("info_name");
        for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
          codes.add(names.get(i));
        }
      }
    }
    return codes;
  }

  @Test
  void typeInfoKeysAndCrossReferencesAnswer() throws Exception {
    try (Connection connection = jdbc()) {
      DatabaseMetaData metadata = connection.getMetaData();
      // The JDBC driver (18.3) answers getTypeInfo itself (empty); Flight SQL clients ask the server.
      List<String> types = new ArrayList<>();
      FlightInfo typeInfo = sqlClient.getXdbcTypeInfo(QueryFlightSqlProducerTest.tenant("warehouse"));
      try (FlightStream stream = sqlClient.getStream(typeInfo.getEndpoints().get(0).getTicket(),
          QueryFlightSqlProducerTest.tenant("warehouse"))) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          for (int i = 0; i < root.getRowCount(); i++) {
            types.add(root.getVector("type_name").getObject(i) + ":" + root.getVector("data_type").getObject(i));
          }
        }
      }
      assertThat(types).contains("BIGINT:-5", "VARCHAR:12", "DECIMAL:3", "TIMESTAMP:93", "BOOLEAN:-7");
      FlightInfo decimals = sqlClient.getXdbcTypeInfo(3, QueryFlightSqlProducerTest.tenant("warehouse"));
      try (FlightStream stream = sqlClient.getStream(decimals.getEndpoints().get(0).getTicket(),
          QueryFlightSqlProducerTest.tenant("warehouse"))) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getRowCount()).isEqualTo(1);
        assertThat(stream.getRoot().getVector("create_params").getObject(0).toString()).isEqualTo("[\"precision\",\"scale\"]");
      }
      try (ResultSet keys = metadata.getPrimaryKeys(null, "crm", "people")) {
        assertThat(keys.next()).isTrue();
        assertThat(keys.getString("COLUMN_NAME")).isEqualTo("id");
        assertThat(keys.getInt("KEY_SEQ")).isEqualTo(1);
        assertThat(keys.next()).isFalse();
      }
      try (ResultSet imported = metadata.getImportedKeys(null, "crm", "people");
          ResultSet exported = metadata.getExportedKeys(null, "crm", "people");
          ResultSet cross = metadata.getCrossReference(null, "crm", "people", null, "crm", "people")) {
        assertThat(imported.next()).isFalse();
        assertThat(exported.next()).isFalse();
        assertThat(cross.next()).isFalse();
      }
    }
  }

  /**
   * Every Iceberg type of {@link QueryFlightSqlProducerTest#ALL_TYPES} through the JDBC driver:
   * {@code getColumns}, {@code ResultSetMetaData} and {@code getObject}. Driver limits (18.3),
   * whatever the server sends: {@code getObject} of a timestamp with time zone throws (Avatica
   * has no accessor for TIMESTAMP_WITH_TIMEZONE; {@code getTimestamp} reads it), TIME values have
   * milliseconds, float comes back as a Double.
   */
  @Test
  void everyIcebergTypeRoundTripsThroughJdbc() throws Exception {
    try (Connection connection = jdbc()) {
      List<String> columns = new ArrayList<>();
      try (ResultSet rows = connection.getMetaData().getColumns(null, "types", "all_types", null)) {
        while (rows.next()) {
          columns.add(rows.getString("COLUMN_NAME") + " " + rows.getString("TYPE_NAME") + " " + rows.getInt("DATA_TYPE")
              + " " + rows.getInt("COLUMN_SIZE") + "/" + rows.getInt("DECIMAL_DIGITS") + " " + rows.getString("IS_NULLABLE"));
        }
      }
      assertThat(columns).containsExactly("id INTEGER 4 10/0 NO", "b BOOLEAN 16 0/0 YES", "l BIGINT -5 19/0 YES",
          "f FLOAT 6 0/0 YES", "d DOUBLE 8 0/0 YES", "dec DECIMAL(20,4) 3 20/4 YES", "dt DATE 91 10/0 YES",
          "tm TIME 92 15/6 YES", "ts TIMESTAMP 93 26/6 YES", "tstz TIMESTAMPTZ 2014 26/6 YES", "s VARCHAR 12 65536/0 YES",
          "u UUID 12 65536/0 YES", "fx BLOB -2 3/0 YES", "bin BLOB -3 65536/0 YES",
          "st STRUCT(\"a\" INTEGER, \"name\" VARCHAR) 2000 0/0 YES", "li BIGINT[] 2003 0/0 YES",
          "m MAP(VARCHAR, INTEGER) 2000 0/0 YES");
      try (java.sql.Statement statement = connection.createStatement();
          ResultSet rows = statement.executeQuery("SELECT * FROM types.all_types ORDER BY id")) {
        java.sql.ResultSetMetaData metadata = rows.getMetaData();
        List<String> described = new ArrayList<>();
        for (int i = 1; i <= metadata.getColumnCount(); i++) {
          described.add(metadata.getColumnName(i) + " " + metadata.getColumnType(i) + " " + metadata.getPrecision(i)
              + "/" + metadata.getScale(i));
        }
        assertThat(described).containsExactly("id 4 0/0", "b 16 0/0", "l -5 0/0", "f 6 0/0", "d 8 0/0", "dec 3 20/4",
            "dt 91 0/0", "tm 92 0/0", "ts 93 0/0", "tstz 2014 0/0", "s 12 0/0", "u 12 0/0", "fx -2 3/0", "bin -3 0/0",
            "st 2000 0/0", "li 2003 0/0", "m 2000 0/0");
        assertThat(rows.next()).isTrue();
        assertThat(rows.getObject("id")).isEqualTo(1);
        assertThat(rows.getObject("b")).isEqualTo(true);
        assertThat(rows.getObject("l")).isEqualTo(1L << 40);
        assertThat(((Number) rows.getObject("f")).floatValue()).isEqualTo(1.5f);
        assertThat(rows.getObject("d")).isEqualTo(2.25);
        assertThat((BigDecimal) rows.getObject("dec")).isEqualByComparingTo("12345.6789");
        assertThat(rows.getObject("dt").toString()).isEqualTo("2024-02-29");
        assertThat(rows.getObject("tm").toString()).isEqualTo("13:14:15.123");
        assertThat(rows.getObject("ts").toString()).isEqualTo("2024-01-02 03:04:05.678901");
        assertThat(rows.getTimestamp("tstz").toInstant()).isEqualTo(java.time.Instant.parse("2024-01-02T03:04:05.000001Z"));
        assertThat(rows.getObject("s")).isEqualTo("héllo");
        assertThat(rows.getObject("u")).isEqualTo("f79c3e09-677c-4d6c-8e8b-5d3e2a3d7b1a");
        assertThat((byte[]) rows.getObject("fx")).containsExactly(1, 2, 3);
        assertThat((byte[]) rows.getObject("bin")).containsExactly(9, 8);
        assertThat(rows.getObject("st").toString()).isEqualTo("{\"a\":7,\"name\":\"seven\"}");
        assertThat(rows.getObject("li").toString()).isEqualTo("[1,2,3]");
        assertThat(rows.getObject("m").toString()).isEqualTo("{\"k\":1}");
        assertThat(rows.next()).isTrue();
        for (int i = 2; i <= metadata.getColumnCount(); i++) {
          if (i != 10) {
            assertThat(rows.getObject(i)).as(metadata.getColumnName(i)).isNull();
          }
        }
        assertThat(rows.getTimestamp("tstz")).isNull();
      }
    }
  }

  @Test
  void nanosecondTimestampsRoundTripThroughJdbc() throws Exception {
    try (Connection connection = jdbc()) {
      List<String> columns = new ArrayList<>();
      try (ResultSet rows = connection.getMetaData().getColumns(null, "types", "nanos", null)) {
        while (rows.next()) {
          columns.add(rows.getString("COLUMN_NAME") + " " + rows.getString("TYPE_NAME") + " " + rows.getInt("DATA_TYPE"));
        }
      }
      assertThat(columns).containsExactly("id INTEGER 4", "tsn TIMESTAMP_NS 93", "tstzn TIMESTAMPTZ_NS 2014");
      try (java.sql.Statement statement = connection.createStatement();
          ResultSet rows = statement.executeQuery("SELECT * FROM types.nanos ORDER BY id")) {
        assertThat(rows.getMetaData().getColumnType(2)).isEqualTo(java.sql.Types.TIMESTAMP);
        assertThat(rows.getMetaData().getColumnType(3)).isEqualTo(java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
        assertThat(rows.next()).isTrue();
        // Nanoseconds survive the whole path: Parquet, DuckDB, Arrow, the driver.
        assertThat(rows.getTimestamp("tsn").toLocalDateTime())
            .isEqualTo(java.time.LocalDateTime.parse("2024-01-02T03:04:05.123456789"));
        assertThat(rows.getTimestamp("tstzn").toInstant()).isEqualTo(java.time.Instant.parse("2024-01-02T03:04:05.987654321Z"));
        assertThat(rows.next()).isTrue();
        assertThat(rows.getTimestamp("tsn")).isNull();
        assertThat(rows.getTimestamp("tstzn")).isNull();
      }
    }
  }

  // ------------------------------------------------------------------ client mistakes

  @Test
  void garbageTicketsAndPathDescriptorsAreTheClientsMistake() {
    assertThatThrownBy(() -> {
      try (FlightStream stream = flightClient.getStream(new Ticket(new byte[] {1, 2, 3, (byte) 0xff}),
          QueryFlightSqlProducerTest.tenant("warehouse"))) {
        stream.next();
      }
    }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
      assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
      assertThat(e.getMessage()).contains("DoGet ticket is not a Flight SQL message");
    });
    assertThatThrownBy(() -> flightClient.getInfo(FlightDescriptor.path("some", "table"),
        QueryFlightSqlProducerTest.tenant("warehouse")))
        .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("GetFlightInfo: the descriptor is a path");
        });
    assertThatThrownBy(() -> flightClient.getInfo(FlightDescriptor.command("not a command".getBytes()),
        QueryFlightSqlProducerTest.tenant("warehouse")))
        .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("GetFlightInfo command is not a Flight SQL message");
        });
  }

  // ------------------------------------------------------------------ tenant

  @Test
  void preparedStatementRunsWithoutHeadersInItsHandlesCatalog() throws Exception {
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare("SELECT name FROM crm.people WHERE id = 1",
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      FlightInfo info = prepared.execute();
      try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket())) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getVector(0).getObject(0).toString()).isEqualTo("ann");
      }
    }
  }

  // ------------------------------------------------------------------ cancellation

  @Test
  void deadlineStopsAQueryStartedByGetFlightInfo() throws Exception {
    long cpuBefore = processCpuNanos();
    assertThatThrownBy(() -> sqlClient.execute(LONG_QUERY, QueryFlightSqlProducerTest.tenant("warehouse"),
        CallOptions.timeout(1, TimeUnit.SECONDS)))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT));
    long stopMillis = millisUntilIdle();
    System.out.printf("deadline: DuckDB idle %d ms after the deadline (cpu during query %d ms)%n", stopMillis,
        (processCpuNanos() - cpuBefore) / 1_000_000);
    assertThat(stopMillis).isLessThan(1_000);
  }

  @Test
  void cancelFlightInfoStopsAStreamingQuery() throws Exception {
    FlightInfo info = sqlClient.execute(LONG_SCAN, QueryFlightSqlProducerTest.tenant("warehouse"));
    try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(),
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      assertThat(stream.next()).isTrue();
      long start = System.nanoTime();
      CancelFlightInfoResult result = sqlClient.cancelFlightInfo(new CancelFlightInfoRequest(info),
          QueryFlightSqlProducerTest.tenant("warehouse"));
      assertThat(result.getStatus()).isEqualTo(CancelStatus.CANCELLED);
      assertThatThrownBy(() -> {
        while (stream.next()) {
          // drain what was sent before the cancel
        }
      }).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.CANCELLED));
      long stopMillis = (System.nanoTime() - start) / 1_000_000;
      System.out.printf("CancelFlightInfo: stream ended %d ms after the cancel%n", stopMillis);
      assertThat(millisUntilIdle()).isLessThan(1_000);
    }
    CancelFlightInfoResult again = sqlClient.cancelFlightInfo(new CancelFlightInfoRequest(info),
        QueryFlightSqlProducerTest.tenant("warehouse"));
    assertThat(again.getStatus()).isEqualTo(CancelStatus.NOT_CANCELLABLE);
  }

  @Test
  void jdbcStatementCancelStopsTheQuery() throws Exception {
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement()) {
      ResultSet rows = statement.executeQuery(LONG_SCAN);
      assertThat(rows.next()).isTrue();
      long start = System.nanoTime();
      statement.cancel();
      long returned = (System.nanoTime() - start) / 1_000_000;
      long idle = millisUntilIdle();
      System.out.printf("JDBC Statement.cancel: returned after %d ms, DuckDB idle %d ms later%n", returned, idle);
      assertThat(returned).isLessThan(1_000);
      assertThat(idle).isLessThan(1_000);
    }
  }

  @Test
  void clientCancellingTheStreamStopsTheQuery() throws Exception {
    FlightInfo info = sqlClient.execute(LONG_SCAN, QueryFlightSqlProducerTest.tenant("warehouse"));
    FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(),
        QueryFlightSqlProducerTest.tenant("warehouse"));
    assertThat(stream.next()).isTrue();
    stream.cancel("client gave up", null);
    long idle = millisUntilIdle();
    System.out.printf("DoGet cancelled by the client: DuckDB idle %d ms later%n", idle);
    assertThat(idle).isLessThan(1_000);
    try {
      stream.close();
    } catch (Exception expected) {
      // the stream was cancelled
    }
  }

  @Test
  void jdbcCancelFromAnotherThreadStopsAnAggregateBeforeItsFirstRow() throws Exception {
    int idleBefore = idleDatabases();
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement()) {
      CompletableFuture<Throwable> outcome = runAsync(() -> statement.executeQuery(LONG_QUERY));
      awaitStreamedBusy();
      long start = System.nanoTime();
      statement.cancel();
      long returned = (System.nanoTime() - start) / 1_000_000;
      Throwable thrown = outcome.get(10, TimeUnit.SECONDS);
      long failed = (System.nanoTime() - start) / 1_000_000;
      long idle = millisUntilIdle();
      long released = millisUntilReleased(idleBefore);
      System.out.printf("JDBC Statement.cancel during an aggregate: returned after %d ms, executeQuery failed after "
          + "%d ms, DuckDB idle %d ms and its database released %d ms later%n", returned, failed, idle, released);
      assertThat(thrown).isInstanceOf(SQLException.class);
      assertThat(returned).isLessThan(2_000);
      assertThat(idle).isLessThan(2_000);
      assertThat(released).isLessThan(2_000);
    }
  }

  @Test
  void jdbcQueryTimeoutStopsAnAggregate() throws Exception {
    int idleBefore = idleDatabases();
    try (Connection connection = jdbc(); java.sql.Statement statement = connection.createStatement()) {
      statement.setQueryTimeout(1);
      long start = System.nanoTime();
      assertThatThrownBy(() -> statement.executeQuery(LONG_QUERY)).isInstanceOf(SQLException.class)
          .hasMessageContaining("timed out");
      long failed = (System.nanoTime() - start) / 1_000_000;
      // The driver gives up waiting and leaves the stream to the statement: closing it cancels the DoGet.
      long closing = System.nanoTime();
      statement.close();
      long idle = millisUntilIdle();
      long released = millisUntilReleased(idleBefore);
      System.out.printf("JDBC setQueryTimeout(1): executeQuery failed after %d ms; after close (%d ms) DuckDB idle "
          + "%d ms and its database released %d ms later%n", failed, (System.nanoTime() - closing) / 1_000_000,
          idle, released);
      assertThat(failed).isLessThan(3_000);
      assertThat(idle).isLessThan(2_000);
      assertThat(released).isLessThan(2_000);
    }
  }

  @Test
  void deadlineOnDoGetStopsTheQuery() throws Exception {
    int idleBefore = idleDatabases();
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare(LONG_QUERY,
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      FlightInfo info = prepared.execute(QueryFlightSqlProducerTest.tenant("warehouse"));
      long start = System.nanoTime();
      assertThatThrownBy(() -> {
        try (FlightStream stream = sqlClient.getStream(info.getEndpoints().get(0).getTicket(),
            QueryFlightSqlProducerTest.tenant("warehouse"), CallOptions.timeout(1, TimeUnit.SECONDS))) {
          while (stream.next()) {
            // an aggregate: no batch before the deadline
          }
        }
      }).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT));
      long failed = (System.nanoTime() - start) / 1_000_000;
      long idle = millisUntilIdle();
      long released = millisUntilReleased(idleBefore);
      System.out.printf("DoGet deadline (1 s): failed after %d ms, DuckDB idle %d ms and its database released %d ms "
          + "later%n", failed, idle, released);
      assertThat(idle).isLessThan(2_000);
      assertThat(released).isLessThan(2_000);
    }
  }

  @Test
  void cancelFlightInfoStopsAPreparedAggregateBeforeItsDoGet() throws Exception {
    int idleBefore = idleDatabases();
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare(LONG_QUERY,
        QueryFlightSqlProducerTest.tenant("warehouse"))) {
      long asked = System.nanoTime();
      FlightInfo info = prepared.execute(QueryFlightSqlProducerTest.tenant("warehouse"));
      long answered = (System.nanoTime() - asked) / 1_000_000;
      awaitBusy();
      long start = System.nanoTime();
      CancelFlightInfoResult result = sqlClient.cancelFlightInfo(new CancelFlightInfoRequest(info),
          QueryFlightSqlProducerTest.tenant("warehouse"));
      long returned = (System.nanoTime() - start) / 1_000_000;
      long idle = millisUntilIdle();
      long released = millisUntilReleased(idleBefore);
      System.out.printf("CancelFlightInfo of a prepared aggregate (GetFlightInfo answered in %d ms): returned after "
          + "%d ms, DuckDB idle %d ms and its database released %d ms later%n", answered, returned, idle, released);
      assertThat(result.getStatus()).isEqualTo(CancelStatus.CANCELLED);
      assertThat(returned).isLessThan(2_000);
      assertThat(idle).isLessThan(2_000);
      assertThat(released).isLessThan(2_000);
    }
  }

  @Test
  void aClientGoingAwayDuringGetFlightInfoStopsTheQuery() throws Exception {
    int idleBefore = idleDatabases();
    io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", server.port())
        .usePlaintext().build();
    FlightSqlClient client = new FlightSqlClient(org.apache.arrow.flight.FlightGrpcUtils.createFlightClient(allocator,
        channel));
    CompletableFuture<Throwable> outcome = runAsync(() -> client.execute(LONG_QUERY,
        QueryFlightSqlProducerTest.tenant("warehouse")));
    awaitBusy();
    long start = System.nanoTime();
    channel.shutdownNow();
    assertThat(outcome.get(10, TimeUnit.SECONDS)).isNotNull();
    long idle = millisUntilIdle();
    long released = millisUntilReleased(idleBefore);
    System.out.printf("client gone during GetFlightInfo: DuckDB idle %d ms and its database released %d ms later "
        + "(%d ms after the channel closed)%n", idle, released, (System.nanoTime() - start) / 1_000_000);
    assertThat(idle).isLessThan(2_000);
    assertThat(released).isLessThan(2_000);
  }

  @FunctionalInterface
  private interface Call {
    Object run() throws Exception;
  }

  /** Runs {@code call} on another thread; the future holds what it threw (null when it returned). */
  private static CompletableFuture<Throwable> runAsync(Call call) {
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread thread = new Thread(() -> {
      try {
        call.run();
        outcome.complete(null);
      } catch (Throwable t) {
        outcome.complete(t);
      }
    }, "flight-sql-clients-test-call");
    thread.setDaemon(true);
    thread.start();
    return outcome;
  }

  /**
   * Waits (at most 10 s) until the server has admitted a query and the process burns at least
   * half a core: DuckDB is computing.
   */
  private static void awaitBusy() throws InterruptedException {
    awaitBusy(() -> server.producer.engine().admission().running() > 0);
  }

  /**
   * Waits until the JDBC driver's DoGet streams the running query. The driver's
   * {@code Statement.cancel()} reaches the server only through that stream: a cancel between its
   * GetFlightInfo and its DoGet (a window of seconds while a fresh driver loads its classes) is
   * lost by the driver, which then fetches the result all the same.
   */
  private static void awaitStreamedBusy() throws InterruptedException {
    awaitBusy(() -> server.producer.streamingCount() > 0);
  }

  /**
   * Waits until {@code started} holds and the process burns CPU. The condition comes first: a
   * client's own start (a JDBC driver loading its classes) burns CPU before any query reaches the
   * server.
   */
  private static void awaitBusy(java.util.function.BooleanSupplier started) throws InterruptedException {
    long start = System.nanoTime();
    while (!started.getAsBoolean()) {
      if (System.nanoTime() - start > 10_000_000_000L) {
        throw new AssertionError("the query never reached the server");
      }
      Thread.sleep(10);
    }
    while (System.nanoTime() - start < 10_000_000_000L) {
      long cpu = processCpuNanos();
      long wall = System.nanoTime();
      Thread.sleep(100);
      if ((double) (processCpuNanos() - cpu) / (System.nanoTime() - wall) > 0.5) {
        Thread.sleep(200);
        return;
      }
    }
    throw new AssertionError("the query never started");
  }

  private static int idleDatabases() throws InterruptedException {
    millisUntilIdle();
    return server.producer.engine().pool().idleCount();
  }

  /** Milliseconds until the query's DuckDB database is back in the pool (10 000 when it never is). */
  private static long millisUntilReleased(int idleBefore) throws InterruptedException {
    long start = System.nanoTime();
    while (System.nanoTime() - start < 10_000_000_000L) {
      if (server.producer.engine().pool().idleCount() >= idleBefore) {
        return (System.nanoTime() - start) / 1_000_000;
      }
      Thread.sleep(1);
    }
    return 10_000;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /**
   * Milliseconds until the process stops burning CPU: the first 50 ms window using less than a
   * fifth of one core (the query has one DuckDB thread; gRPC and the test use little).
   */
  private static long millisUntilIdle() throws InterruptedException {
    long start = System.nanoTime();
    while (System.nanoTime() - start < 10_000_000_000L) {
      long cpu = processCpuNanos();
      long wall = System.nanoTime();
      Thread.sleep(50);
      double used = (double) (processCpuNanos() - cpu) / (System.nanoTime() - wall);
      if (used < 0.2) {
        return (wall - start) / 1_000_000;
      }
    }
    return 10_000;
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Query parameters end to end: the Flight SQL JDBC driver and FlightSqlClient bind values to
 * prepared statements of a server that keeps no per-statement state.
 */
class QueryParametersTest {
  static final String SELECT_BY_EVERY_TYPE = "SELECT id FROM params.things WHERE id = ? AND n = ? AND CAST(n AS SMALLINT) = ? "
      + "AND f = ? AND d = ? AND dec = ? AND s = ? AND b = ? AND dt = ? AND ts = ? AND tstz = ?";

  static Path dir;
  static BufferAllocator allocator;
  static TestWarehouse warehouse;
  static TestQueryServer server;
  static FlightSqlClient sqlClient;

  static final org.apache.iceberg.Schema THINGS = new org.apache.iceberg.Schema(
      NestedField.required(1, "id", org.apache.iceberg.types.Types.LongType.get()),
      NestedField.optional(2, "n", org.apache.iceberg.types.Types.IntegerType.get()),
      NestedField.optional(3, "f", org.apache.iceberg.types.Types.FloatType.get()),
      NestedField.optional(4, "d", org.apache.iceberg.types.Types.DoubleType.get()),
      NestedField.optional(5, "dec", org.apache.iceberg.types.Types.DecimalType.of(10, 2)),
      NestedField.optional(6, "s", org.apache.iceberg.types.Types.StringType.get()),
      NestedField.optional(7, "b", org.apache.iceberg.types.Types.BooleanType.get()),
      NestedField.optional(8, "dt", org.apache.iceberg.types.Types.DateType.get()),
      NestedField.optional(9, "ts", org.apache.iceberg.types.Types.TimestampType.withoutZone()),
      NestedField.optional(10, "tstz", org.apache.iceberg.types.Types.TimestampType.withZone()));

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-params");
    allocator = new RootAllocator();
    warehouse = new TestWarehouse();
    Catalog catalog = warehouse.localCatalog("warehouse", dir.resolve("warehouse"));
    Table things = TestWarehouse.createTable(catalog, "params", "things", THINGS, PartitionSpec.unpartitioned());
    List<Record> rows = new ArrayList<>();
    rows.add(thing(1, 10, "alpha", true, LocalDate.of(2024, 1, 1)));
    rows.add(thing(2, 20, "beta", false, LocalDate.of(2024, 2, 2)));
    rows.add(TestWarehouse.record(THINGS, 3L));
    TestWarehouse.append(things, rows);
    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    sqlClient = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build());
  }

  /** A row whose every column derives from {@code id} and {@code n}, so a test can name its values. */
  static Record thing(long id, int n, String s, boolean b, LocalDate dt) {
    return TestWarehouse.record(THINGS, id, n, n + 0.5f, n * 1.25, new BigDecimal(n + ".25"), s, b, dt,
        LocalDateTime.of(2024, 1, 2, 3, 4, 5, 678_000_000).plusHours(n),
        OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC).plusHours(n));
  }

  @AfterAll
  static void tearDown() throws Exception {
    sqlClient.close();
    if (server != null) {
      server.close();
    }
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static HeaderCallOption tenant() {
    return QueryFlightSqlProducerTest.tenant("warehouse");
  }

  static Connection jdbc(int port) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("useEncryption", "false");
    properties.setProperty(QueryMetadataInterceptor.HEADER_NAME, "{\"catalog_id\":\"warehouse\"}");
    return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + port, properties);
  }

  static List<String> column(ResultSet rs) throws SQLException {
    List<String> out = new ArrayList<>();
    while (rs.next()) {
      out.add(String.valueOf(rs.getObject(1)));
    }
    return out;
  }

  static void bindEveryType(PreparedStatement statement, int id, int n) throws SQLException {
    statement.setLong(1, id);
    statement.setInt(2, n);
    statement.setShort(3, (short) n);
    statement.setFloat(4, n + 0.5f);
    statement.setDouble(5, n * 1.25);
    statement.setBigDecimal(6, new BigDecimal(n + ".25"));
    statement.setString(7, id == 1 ? "alpha" : "beta");
    statement.setBoolean(8, id == 1);
    statement.setObject(9, id == 1 ? java.sql.Date.valueOf("2024-01-01") : java.sql.Date.valueOf("2024-02-02"));
    statement.setTimestamp(10, java.sql.Timestamp.valueOf(LocalDateTime.of(2024, 1, 2, 3, 4, 5, 678_000_000).plusHours(n)));
    statement.setTimestamp(11, java.sql.Timestamp.from(OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC)
        .plusHours(n).toInstant()));
  }

  @Test
  void jdbcBindsEveryTypeAndRebindsOnTheSameStatement() throws Exception {
    try (Connection connection = jdbc(server.port()); PreparedStatement statement = connection.prepareStatement(SELECT_BY_EVERY_TYPE)) {
      assertThat(statement.getParameterMetaData().getParameterCount()).isEqualTo(11);
      bindEveryType(statement, 1, 10);
      try (ResultSet rs = statement.executeQuery()) {
        assertThat(column(rs)).containsExactly("1");
      }
      bindEveryType(statement, 2, 20);
      try (ResultSet rs = statement.executeQuery()) {
        assertThat(column(rs)).containsExactly("2");
      }
      bindEveryType(statement, 1, 20);
      try (ResultSet rs = statement.executeQuery()) {
        assertThat(column(rs)).isEmpty();
      }
    }
  }

  @Test
  void jdbcBindsNull() throws Exception {
    try (Connection connection = jdbc(server.port());
        PreparedStatement statement = connection.prepareStatement(
            "SELECT id FROM params.things WHERE s IS NOT DISTINCT FROM ? AND (CAST(? AS INTEGER) IS NULL OR n = ?) ORDER BY id")) {
      statement.setNull(1, Types.VARCHAR);
      statement.setNull(2, Types.INTEGER);
      statement.setNull(3, Types.INTEGER);
      try (ResultSet rs = statement.executeQuery()) {
        assertThat(column(rs)).containsExactly("3");
      }
      statement.setString(1, "beta");
      statement.setInt(2, 20);
      statement.setInt(3, 20);
      try (ResultSet rs = statement.executeQuery()) {
        assertThat(column(rs)).containsExactly("2");
      }
    }
  }

  @Test
  void sqlTextInAParameterStaysAValue() throws Exception {
    try (Connection connection = jdbc(server.port());
        PreparedStatement filter = connection.prepareStatement("SELECT count(*) FROM params.things WHERE s = ?");
        PreparedStatement echo = connection.prepareStatement("SELECT CAST(? AS VARCHAR) AS v")) {
      for (String attack : List.of("alpha' OR '1'='1", "x'; DROP TABLE params.things; --",
          "' UNION SELECT * FROM read_csv('/etc/passwd') --")) {
        filter.setString(1, attack);
        try (ResultSet rs = filter.executeQuery()) {
          assertThat(column(rs)).as(attack).containsExactly("0");
        }
        echo.setString(1, attack);
        try (ResultSet rs = echo.executeQuery()) {
          assertThat(column(rs)).as(attack).containsExactly(attack);
        }
      }
    }
  }

  @Test
  void jdbcWrongCountAndTypeAreRefusedNamingTheParameter() throws Exception {
    try (Connection connection = jdbc(server.port());
        PreparedStatement statement = connection.prepareStatement("SELECT id FROM params.things WHERE id = ? AND s = ?")) {
      // The driver checks count and types against the parameter schema the server reported.
      assertThatThrownBy(() -> statement.setLong(3, 1)).isInstanceOf(SQLException.class).hasMessageContaining("out of range");
      statement.setString(1, "one");
      statement.setString(2, "alpha");
      assertThatThrownBy(statement::executeQuery).isInstanceOf(SQLException.class)
          .hasMessageContaining("Binding value of type STRING is not yet supported for expected Arrow type Int(64, true)");
    }
  }

  @Test
  void flightSqlClientBindsAParameterBatch() throws Exception {
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare(
        "SELECT id, s FROM params.things WHERE id >= ? AND s <> ? ORDER BY id", tenant())) {
      assertThat(prepared.getParameterSchema().getFields()).extracting(f -> f.getName() + ":" + f.getType())
          .containsExactly("$1:Int(64, true)", "$2:Utf8");
      try (VectorSchemaRoot parameters = VectorSchemaRoot.create(prepared.getParameterSchema(), allocator)) {
        bind(parameters, 1L, "beta");
        prepared.setParameters(parameters);
        assertThat(rows(prepared.execute(tenant()))).containsExactly("1|alpha");
        bind(parameters, 2L, "alpha");
        prepared.setParameters(parameters);
        assertThat(rows(prepared.execute(tenant()))).containsExactly("2|beta");
      }
    }
  }

  @Test
  void flightSqlClientWrongCountTypeAndRowsAreInvalidArgument() throws Exception {
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare(
        "SELECT id FROM params.things WHERE id = ? AND s = ?", tenant())) {
      Schema oneParameter = new Schema(List.of(Field.nullable("$1", new ArrowType.Int(64, true))));
      try (VectorSchemaRoot parameters = VectorSchemaRoot.create(oneParameter, allocator)) {
        ((BigIntVector) parameters.getVector(0)).setSafe(0, 1L);
        parameters.setRowCount(1);
        prepared.setParameters(parameters);
        assertInvalid(() -> prepared.execute(tenant()), "statement has 2 parameters, but 1 value was bound");
      }
      Schema swapped = new Schema(List.of(Field.nullable("$1", ArrowType.Utf8.INSTANCE),
          Field.nullable("$2", ArrowType.Utf8.INSTANCE)));
      try (VectorSchemaRoot parameters = VectorSchemaRoot.create(swapped, allocator)) {
        ((VarCharVector) parameters.getVector(0)).setSafe(0, "1".getBytes(StandardCharsets.UTF_8));
        ((VarCharVector) parameters.getVector(1)).setSafe(0, "alpha".getBytes(StandardCharsets.UTF_8));
        parameters.setRowCount(1);
        prepared.setParameters(parameters);
        assertInvalid(() -> prepared.execute(tenant()), "parameter 1: expected BIGINT, got utf8");
      }
      try (VectorSchemaRoot parameters = VectorSchemaRoot.create(prepared.getParameterSchema(), allocator)) {
        bind(parameters, 1L, "alpha");
        ((BigIntVector) parameters.getVector(0)).setSafe(1, 2L);
        ((VarCharVector) parameters.getVector(1)).setSafe(1, "beta".getBytes(StandardCharsets.UTF_8));
        parameters.setRowCount(2);
        prepared.setParameters(parameters);
        assertInvalid(() -> prepared.execute(tenant()), "parameter batch has 2 rows: bind exactly one row");
      }
    }
    assertInvalid(() -> sqlClient.execute("SELECT id FROM params.things WHERE id = ?", tenant()),
        "statement has 1 parameter, but no values were bound");
    assertInvalid(() -> sqlClient.prepare("SELECT id FROM params.things WHERE id = $wanted", tenant()),
        "named parameter `$wanted` is not supported");
  }

  @Test
  void aBoundHandleAndItsTicketWorkOnAFreshServerInstance() throws Exception {
    FlightInfo info;
    try (FlightSqlClient.PreparedStatement prepared = sqlClient.prepare(
        "SELECT id, s FROM params.things WHERE id = ? AND s = ?", tenant());
        VectorSchemaRoot parameters = VectorSchemaRoot.create(prepared.getParameterSchema(), allocator)) {
      bind(parameters, 2L, "beta");
      prepared.setParameters(parameters);
      info = prepared.execute(tenant());
    }
    // The first instance is gone; a new one (as behind a load balancer) serves both the bound
    // prepared statement and the ticket planned by the first.
    try (TestQueryServer fresh = new TestQueryServer(allocator, warehouse, dir.resolve("fresh"));
        FlightSqlClient client = new FlightSqlClient(
            FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", fresh.port())).build())) {
      FlightInfo replanned;
      try (FlightClient raw = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", fresh.port())).build()) {
        replanned = raw.getInfo(info.getDescriptor(), tenant());
      }
      assertThat(rows(client, replanned)).containsExactly("2|beta");
      assertThat(rows(client, info)).containsExactly("2|beta");
      assertInvalid(() -> client.getStream(info.getEndpoints().get(0).getTicket(),
          QueryFlightSqlProducerTest.tenant("other")).next(), "belongs to catalog `warehouse`");
    }
  }

  static void bind(VectorSchemaRoot parameters, long id, String s) {
    parameters.allocateNew();
    ((BigIntVector) parameters.getVector(0)).setSafe(0, id);
    ((VarCharVector) parameters.getVector(1)).setSafe(0, s.getBytes(StandardCharsets.UTF_8));
    parameters.setRowCount(1);
  }

  static List<String> rows(FlightInfo info) throws Exception {
    return rows(sqlClient, info);
  }

  static List<String> rows(FlightSqlClient client, FlightInfo info) throws Exception {
    List<String> out = new ArrayList<>();
    try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), tenant())) {
      while (stream.next()) {
        VectorSchemaRoot root = stream.getRoot();
        for (int row = 0; row < root.getRowCount(); row++) {
          List<String> values = new ArrayList<>();
          for (int column = 0; column < root.getFieldVectors().size(); column++) {
            values.add(String.valueOf(root.getVector(column).getObject(row)));
          }
          out.add(String.join("|", values));
        }
      }
    }
    return out;
  }

  static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
    assertThatThrownBy(call).isInstanceOf(FlightRuntimeException.class).hasMessageContaining(message)
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
  }
}

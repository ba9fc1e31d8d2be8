package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
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
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Everything outside read-only queries over the selected tenant is refused before anything is read. */
class QuerySecurityTest {
  static Path dir;
  static Path secret;
  static BufferAllocator allocator;
  static TestQueryServer server;
  static FlightSqlClient client;

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-security");
    secret = dir.resolve("secret.csv");
    Files.writeString(secret, "password\nhunter2\n");
    allocator = new RootAllocator();
    TestWarehouse warehouse = new TestWarehouse();
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()));
    Catalog tenant = warehouse.localCatalog("tenant", dir.resolve("tenant"));
    Table table = TestWarehouse.createTable(tenant, "ns", "t", schema, PartitionSpec.unpartitioned());
    TestWarehouse.append(table, List.of(TestWarehouse.record(schema, 1L, "mine")));
    Catalog neighbour = warehouse.localCatalog("neighbour", dir.resolve("neighbour"));
    Table theirs = TestWarehouse.createTable(neighbour, "private", "accounts", schema, PartitionSpec.unpartitioned());
    TestWarehouse.append(theirs, List.of(TestWarehouse.record(schema, 2L, "theirs")));
    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    client = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build());
  }

  @AfterAll
  static void tearDown() throws Exception {
    client.close();
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static HeaderCallOption tenant() {
    return new HeaderCallOption(QueryFlightSqlProducerTest.headers("tenant"));
  }

  static Stream<Arguments> refused() {
    String file = secret.toString();
    return Stream.of(
        Arguments.of("INSERT INTO ns.t VALUES (3, 'x')", "INSERT statements are not allowed"),
        Arguments.of("UPDATE ns.t SET name = 'x'", "UPDATE statements are not allowed"),
        Arguments.of("DELETE FROM ns.t", "DELETE statements are not allowed"),
        Arguments.of("MERGE INTO ns.t USING ns.t s ON true WHEN MATCHED THEN DELETE", "MERGE statements are not allowed"),
        Arguments.of("CREATE TABLE x (a INT)", "CREATE statements are not allowed"),
        Arguments.of("DROP TABLE ns.t", "DROP statements are not allowed"),
        Arguments.of("ALTER TABLE ns.t ADD COLUMN z INT", "ALTER statements are not allowed"),
        Arguments.of("BEGIN TRANSACTION", "BEGIN is not allowed"),
        Arguments.of("COPY ns.t TO '" + dir.resolve("out.csv") + "'", "COPY statements are not allowed"),
        Arguments.of("ATTACH '" + dir.resolve("x.db") + "' AS x", "ATTACH statements are not allowed"),
        Arguments.of("DETACH x", "DETACH statements are not allowed"),
        Arguments.of("INSTALL httpfs", "INSTALL statements are not allowed"),
        Arguments.of("LOAD httpfs", "LOAD statements are not allowed"),
        Arguments.of("SET enable_external_access = true", "SET statements are not allowed"),
        Arguments.of("RESET threads", "RESET statements are not allowed"),
        Arguments.of("PRAGMA database_list", "PRAGMA statements are not allowed"),
        Arguments.of("CALL duckdb_settings()", "CALL statements are not allowed"),
        Arguments.of("EXPORT DATABASE '" + dir + "'", "EXPORT statements are not allowed"),
        Arguments.of("IMPORT DATABASE '" + dir + "'", "IMPORT statements are not allowed"),
        Arguments.of("SELECT * FROM read_csv('" + file + "')", "table function `read_csv` is not allowed"),
        Arguments.of("SELECT * FROM read_parquet('" + file + "')", "table function `read_parquet` is not allowed"),
        Arguments.of("SELECT * FROM read_json('" + file + "')", "table function `read_json` is not allowed"),
        Arguments.of("SELECT * FROM read_text('" + file + "')", "table function `read_text` is not allowed"),
        Arguments.of("SELECT * FROM read_blob('" + file + "')", "table function `read_blob` is not allowed"),
        Arguments.of("SELECT * FROM glob('/etc/*')", "table function `glob` is not allowed"),
        Arguments.of("SELECT * FROM '" + file + "'", "reading files is not allowed"),
        Arguments.of("SELECT getenv('HOME')", "function `getenv` is not allowed"),
        Arguments.of("SELECT current_setting('temp_directory')", "function `current_setting` is not allowed"),
        Arguments.of("SELECT * FROM ns.t WHERE id IN (SELECT count(*) FROM read_csv('" + file + "'))",
            "table function `read_csv` is not allowed"),
        Arguments.of("WITH x AS (SELECT * FROM duckdb_settings()) SELECT * FROM x", "table function `duckdb_settings` is not allowed"),
        Arguments.of("SELECT * FROM query('SELECT 1')", "table function `query` is not allowed"),
        Arguments.of("SELECT * FROM memory.main.t", "catalog `memory` is not available"),
        Arguments.of("SELECT * FROM system.main.duckdb_tables", "catalog `system` is not available"),
        Arguments.of("SELECT * FROM pg_catalog.pg_class", "schema `pg_catalog` is not available"),
        Arguments.of("SELECT * FROM t", "table `t` does not exist in namespace default"),
        Arguments.of("SELECT * FROM ns.t AT (VERSION => 1)", "has no snapshot 1"),
        Arguments.of("SELECT * FROM \"default\".\"ns\".t; ATTACH '" + dir.resolve("y.db") + "' AS y",
            "multiple statements are not allowed"),
        Arguments.of("SELECT 1; SELECT 2", "multiple statements are not allowed"),
        Arguments.of("SELECT * FROM default.\"ns\"\".t", "SQL"),
        Arguments.of("SELECT * FROM ns.\"t\"\"; DROP TABLE x; --\"", "does not exist"),
        Arguments.of("SHOW DATABASES", "SHOW databases is not supported"),
        Arguments.of("SELECT * FROM information_schema.views", "information_schema.views does not exist"),
        Arguments.of("", "SQL is empty"));
  }

  @ParameterizedTest
  @MethodSource("refused")
  void refusesWithAClearError(String sql, String message) {
    assertThatThrownBy(() -> client.execute(sql, tenant()))
        .isInstanceOf(FlightRuntimeException.class)
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code())
            .isIn(FlightStatusCode.INVALID_ARGUMENT, FlightStatusCode.NOT_FOUND));
    assertThat(Files.exists(dir.resolve("out.csv"))).isFalse();
    assertThat(Files.exists(dir.resolve("x.db"))).isFalse();
    assertThat(Files.exists(dir.resolve("y.db"))).isFalse();
  }

  @Test
  void transactionsAndUpdatesThroughFlightSqlAreRefused() {
    assertThatThrownBy(() -> client.beginTransaction(tenant()))
        .hasMessageContaining("transactions are not supported");
    assertThatThrownBy(() -> client.executeUpdate("DELETE FROM ns.t", tenant()))
        .hasMessageContaining("DELETE statements are not allowed");
  }

  @Test
  void otherTenantsTablesAreInvisible() throws Exception {
    assertThatThrownBy(() -> client.execute("SELECT * FROM private.accounts", tenant()))
        .hasMessageContaining("table default.\"private\".\"accounts\" does not exist")
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
    assertThatThrownBy(() -> client.execute("SELECT * FROM neighbour.private.accounts", tenant()))
        .hasMessageContaining("catalog `neighbour` is not available");
    FlightInfo info = client.execute("SELECT table_schema, table_name FROM information_schema.tables", tenant());
    try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), tenant())) {
      assertThat(stream.next()).isTrue();
      assertThat(stream.getRoot().contentToTSVString()).contains("ns\tt").doesNotContain("accounts");
    }
  }

  @Test
  void quotedDefaultAndQuotedNamesStillResolveSafely() throws Exception {
    for (String sql : List.of("SELECT name FROM \"default\".\"ns\".\"t\"", "SELECT name FROM DEFAULT.ns.t",
        "SELECT name FROM ns.t /* default.x; ATTACH */ WHERE name <> 'default.ns; DROP'")) {
      FlightInfo info = client.execute(sql, tenant());
      try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), tenant())) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getVector(0).getObject(0).toString()).as(sql).isEqualTo("mine");
      }
    }
  }
}

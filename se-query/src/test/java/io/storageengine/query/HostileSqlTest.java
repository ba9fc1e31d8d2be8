package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.QueryDatabasePool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
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
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.DataFile;
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

/**
 * A hostile tenant ({@code atk}) against a server that also holds a victim tenant whose table has
 * the same namespace and name and a marker value. Every escape attempt is refused with
 * INVALID_ARGUMENT (or NOT_FOUND for a table the attacker does not have) naming the function or
 * construct, and no message names a server path, a setting value or the victim's marker. The
 * second wall (the locked DuckDB database) is tested on a pooled database directly.
 */
class HostileSqlTest {
  static final String MARKER = "VICTIM-" + UUID.randomUUID();
  static Path dir;
  static Path victimFile;
  static BufferAllocator allocator;
  static TestQueryServer server;
  static FlightSqlClient client;

  @BeforeAll
  static void setUp() throws Exception {
    dir = Files.createTempDirectory("se-query-hostile");
    allocator = new RootAllocator();
    TestWarehouse warehouse = new TestWarehouse();
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "ts", Types.TimestampType.withoutZone()),
        Types.NestedField.optional(4, "tags", Types.ListType.ofOptional(5, Types.StringType.get())));
    Catalog attacker = warehouse.localCatalog("atk", dir.resolve("atk"));
    Table mine = TestWarehouse.createTable(attacker, "atk", "t", schema, PartitionSpec.unpartitioned());
    TestWarehouse.append(mine, List.of(
        TestWarehouse.record(schema, 1L, "mine", java.time.LocalDateTime.parse("2024-03-01T10:15:00"), List.of("a", "b")),
        TestWarehouse.record(schema, 2L, "also mine", java.time.LocalDateTime.parse("2024-03-01T11:45:00"), List.of("c"))));
    Catalog victim = warehouse.localCatalog("victim", dir.resolve("victim"));
    Table theirs = TestWarehouse.createTable(victim, "atk", "t", schema, PartitionSpec.unpartitioned());
    List<DataFile> files = TestWarehouse.append(theirs, List.of(
        TestWarehouse.record(schema, 1L, MARKER, java.time.LocalDateTime.parse("2024-03-01T10:00:00"), List.of(MARKER))));
    TestWarehouse.createTable(victim, "private", "accounts", schema, PartitionSpec.unpartitioned());
    victimFile = Path.of(java.net.URI.create(files.get(0).location()));
    server = new TestQueryServer(allocator, warehouse, dir.resolve("local"));
    client = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build());
    // The victim's files are read once, so their directories are known to the server.
    assertThat(rows("victim", "SELECT name FROM atk.t")).containsExactly(MARKER);
  }

  @AfterAll
  static void tearDown() throws Exception {
    client.close();
    server.close();
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }

  static HeaderCallOption tenant(String id) {
    return new HeaderCallOption(QueryFlightSqlProducerTest.headers(id));
  }

  static List<String> rows(String tenant, String sql) throws Exception {
    return rows(tenant, client.execute(sql, tenant(tenant)));
  }

  static List<String> rows(String tenant, FlightInfo info) throws Exception {
    List<String> out = new ArrayList<>();
    try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), tenant(tenant))) {
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

  /** Strings no error may contain: server paths, settings and the victim's data. */
  static List<String> secrets() {
    List<String> out = new ArrayList<>(List.of(MARKER, dir.toString(), victimFile.getParent().toString(), "/tmp", "/root",
        "stored_secrets", "spill", System.getProperty("java.io.tmpdir"), System.getProperty("user.dir")));
    String home = System.getProperty("user.home");
    if (home != null && home.length() > 1) {
      out.add(home);
    }
    return out;
  }

  static void assertClean(String message) {
    for (String secret : secrets()) {
      assertThat(message).as("error message must not contain %s", secret).doesNotContain(secret);
    }
  }

  static Stream<Arguments> attempts() {
    String victimDir = victimFile.getParent().toString();
    String inner = "SELECT count(*) FROM read_parquet(''" + victimDir + "/*.parquet'') WHERE name = ''" + MARKER + "''";
    List<Arguments> out = new ArrayList<>();
    // Replacement scans: file names and URLs used as tables.
    out.add(Arguments.of("SELECT * FROM 'x.parquet'", "`x.parquet` is not a table of the selected catalog"));
    out.add(Arguments.of("SELECT * FROM '/etc/passwd'", "`passwd` is not a table of the selected catalog"));
    out.add(Arguments.of("SELECT * FROM \"file.csv\"", "`file.csv` is not a table of the selected catalog"));
    out.add(Arguments.of("SELECT * FROM \"/etc/passwd\"", "`passwd` is not a table of the selected catalog"));
    out.add(Arguments.of("SELECT * FROM '" + victimFile + "'", "reading files is not allowed"));
    out.add(Arguments.of("SELECT * FROM '" + victimDir + "/*.parquet'", "reading files is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t JOIN 'x.csv' ON true", "`x.csv` is not a table"));
    out.add(Arguments.of("SELECT * FROM atk.t WHERE id IN (SELECT id FROM 'a.json')", "`a.json` is not a table"));
    out.add(Arguments.of("SELECT * FROM 's3://bucket/x.parquet'", "`x.parquet` is not a table"));
    out.add(Arguments.of("SELECT * FROM 'https://example.com/x.csv'", "`x.csv` is not a table"));
    out.add(Arguments.of("WITH c AS (SELECT * FROM '" + victimFile + "') SELECT * FROM c", "reading files is not allowed"));
    // Every file reader and file metadata function.
    for (String reader : List.of("read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
        "read_json_objects", "read_ndjson", "read_ndjson_objects", "read_text", "read_blob", "glob", "sniff_csv",
        "parquet_metadata", "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata", "parquet_full_metadata",
        "read_duckdb", "read_single_parquet_file")) {
      out.add(Arguments.of("SELECT * FROM " + reader + "('" + victimDir + "/*.parquet')",
          "table function `" + reader + "` is not allowed"));
    }
    out.add(Arguments.of("SELECT read_text('" + victimFile + "')", "function `read_text` is not allowed"));
    out.add(Arguments.of("SELECT parquet_bloom_probe('" + victimFile + "', 'name', 'x')", "function `parquet_bloom_probe` is not allowed"));
    // DuckDB's catalog and state functions.
    for (String function : List.of("duckdb_settings", "duckdb_databases", "duckdb_tables", "duckdb_views", "duckdb_columns",
        "duckdb_functions", "duckdb_secrets", "duckdb_extensions", "duckdb_memory", "duckdb_temporary_files", "duckdb_logs",
        "duckdb_variables", "duckdb_prepared_statements", "duckdb_external_file_cache", "duckdb_schemas", "duckdb_dependencies")) {
      out.add(Arguments.of("SELECT * FROM " + function + "()", "table function `" + function + "` is not allowed"));
    }
    for (String function : List.of("pragma_version()", "pragma_database_size()", "pragma_table_info('atk.t')",
        "pragma_storage_info('atk.t')", "pragma_show('atk.t')", "pragma_platform()", "pragma_metadata_info()",
        "pragma_user_agent()", "pragma_collations()")) {
      String name = function.substring(0, function.indexOf('('));
      out.add(Arguments.of("SELECT * FROM " + function, "table function `" + name + "` is not allowed"));
    }
    // The planner and serializer: the reported break-out and its variants.
    out.add(Arguments.of("SELECT json_serialize_plan('" + inner + "', optimize := true) FROM default.atk.t",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT json_serialize_plan('SELECT * FROM glob(''" + victimDir + "/*'')')",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT json_serialize_sql('" + inner + "')", "function `json_serialize_sql` is not allowed"));
    out.add(Arguments.of("SELECT json_deserialize_sql(json_serialize_sql('SELECT 1'))", "function `json_deserialize_sql` is not allowed"));
    out.add(Arguments.of("SELECT * FROM json_execute_serialized_sql('{}')", "table function `json_execute_serialized_sql` is not allowed"));
    out.add(Arguments.of("WITH p AS (SELECT json_serialize_plan('" + inner + "') AS plan) SELECT * FROM p",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t WHERE name = (SELECT json_serialize_plan('" + inner + "'))",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT list_transform([1], x -> json_serialize_plan('" + inner + "'))",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT row_number() OVER (PARTITION BY json_serialize_plan('" + inner + "')) FROM atk.t",
        "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT json_serialize_plan(?) FROM atk.t", "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT \"JSON_SERIALIZE_PLAN\"('SELECT 1')", "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT JsOn_SeRiAlIzE_pLaN('SELECT 1')", "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT json_serialize_plan /* between */ ('SELECT 1')", "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT json_serialize_plan -- comment\n('SELECT 1')", "function `json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT main.json_serialize_plan('SELECT 1')", "function `main.json_serialize_plan` is not allowed"));
    out.add(Arguments.of("SELECT \"system\".\"main\".json_serialize_plan('SELECT 1')",
        "function `system.main.json_serialize_plan` is not allowed"));
    // Settings, the environment and the session.
    for (String setting : List.of("temp_directory", "secret_directory", "allowed_directories", "home_directory",
        "extension_directories", "memory_limit")) {
      out.add(Arguments.of("SELECT current_setting('" + setting + "')", "function `current_setting` is not allowed"));
    }
    out.add(Arguments.of("SELECT current_setting(?)", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT current_database()", "function `current_database` is not allowed"));
    out.add(Arguments.of("SELECT current_catalog()", "function `current_catalog` is not allowed"));
    out.add(Arguments.of("SELECT current_schema()", "function `current_schema` is not allowed"));
    out.add(Arguments.of("SELECT current_schemas(true)", "function `current_schemas` is not allowed"));
    out.add(Arguments.of("SELECT current_query()", "function `current_query` is not allowed"));
    out.add(Arguments.of("SELECT current_catalog", "function `current_catalog` is not allowed"));
    out.add(Arguments.of("SELECT user", "function `user` is not allowed"));
    out.add(Arguments.of("SELECT CURRENT_USER, session_user", "function `CURRENT_USER` is not allowed"));
    out.add(Arguments.of("SELECT getenv('HOME')", "function `getenv` is not allowed"));
    out.add(Arguments.of("SELECT getvariable('x')", "function `getvariable` is not allowed"));
    out.add(Arguments.of("SELECT version()", "function `version` is not allowed"));
    out.add(Arguments.of("SELECT in_search_path('memory', 'main')", "function `in_search_path` is not allowed"));
    out.add(Arguments.of("SELECT txid_current()", "function `txid_current` is not allowed"));
    out.add(Arguments.of("SELECT stats(id) FROM atk.t", "function `stats` is not allowed"));
    out.add(Arguments.of("SELECT * FROM which_secret('s3://bucket/x', 's3')", "table function `which_secret` is not allowed"));
    // Functions that leak through messages, touch state or run other SQL.
    // error() is allowed: its message is the caller's own (here its own row), never another tenant's.
    out.add(Arguments.of("SELECT error((SELECT name FROM atk.t ORDER BY id LIMIT 1))", "query failed: Invalid Input Error: mine"));
    out.add(Arguments.of("SELECT assert_true(false, 'x')", "function `assert_true` is not allowed"));
    out.add(Arguments.of("SELECT write_log('x')", "function `write_log` is not allowed"));
    out.add(Arguments.of("SELECT sleep_ms(100000)", "function `sleep_ms` is not allowed"));
    out.add(Arguments.of("SELECT pg_sleep(100)", "function `pg_sleep` is not allowed"));
    out.add(Arguments.of("SELECT nextval('s')", "function `nextval` is not allowed"));
    out.add(Arguments.of("SELECT setseed(0.5)", "function `setseed` is not allowed"));
    out.add(Arguments.of("SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')", "table function `query` is not allowed"));
    out.add(Arguments.of("SELECT * FROM query_table('atk.t')", "table function `query_table` is not allowed"));
    out.add(Arguments.of("SELECT finalize(count(id) EXPORT_STATE) FROM atk.t", "function `finalize` is not allowed"));
    out.add(Arguments.of("SELECT count(id) EXPORT_STATE FROM atk.t", "EXPORT_STATE is not allowed"));
    out.add(Arguments.of("SELECT list_aggregate([1], 'combine_aggr')", "`combine_aggr` is not"));
    out.add(Arguments.of("SELECT list_aggregate([1], ?)", "the aggregate must be a string constant"));
    out.add(Arguments.of("SELECT has_table_privilege('atk.t', 'select')", "function `has_table_privilege` is not allowed"));
    out.add(Arguments.of("SELECT __internal_barrier(1)", "function `__internal_barrier` is not allowed"));
    out.add(Arguments.of("SELECT * FROM repeat_row(1, num_rows := 1000000000)", "table function `repeat_row` is not allowed"));
    out.add(Arguments.of("SELECT * FROM test_all_types()", "table function `test_all_types` is not allowed"));
    out.add(Arguments.of("SELECT * FROM histogram_values(atk.t, id)", "table function `histogram_values` is not allowed"));
    // Refused functions wrapped everywhere an expression can be.
    String leak = "current_setting('temp_directory')";
    out.add(Arguments.of("SELECT CASE WHEN true THEN " + leak + " END", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT coalesce(NULL, " + leak + ")", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT CAST(" + leak + " AS VARCHAR)", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT {'a': " + leak + "}", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t WHERE name IN ('x', " + leak + ")", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM (VALUES (" + leak + ")) v(x)", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t ORDER BY " + leak, "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t LIMIT (SELECT length(" + leak + "))", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT count(*) FILTER (WHERE name = " + leak + ") FROM atk.t", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT DISTINCT ON (" + leak + ") id FROM atk.t", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT id FROM atk.t QUALIFY " + leak + " IS NULL", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT count(*) FROM atk.t GROUP BY " + leak + " HAVING " + leak + " <> ''",
        "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t a JOIN atk.t b ON a.name = " + leak, "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM atk.t, LATERAL (SELECT " + leak + ") l", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT name FROM atk.t UNION ALL SELECT " + leak, "function `current_setting` is not allowed"));
    out.add(Arguments.of("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT length(" + leak + ") FROM r WHERE x < 2) "
        + "SELECT * FROM r", "function `current_setting` is not allowed"));
    out.add(Arguments.of("DESCRIBE SELECT " + leak, "function `current_setting` is not allowed"));
    out.add(Arguments.of("SUMMARIZE SELECT " + leak, "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM (SELECT 'x' AS k, 1 AS v) PIVOT (max(" + leak + ") FOR k IN ('x'))",
        "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT list_reduce([1, 2], (a, b) -> a + length(" + leak + "))", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT [length(" + leak + ") FOR x IN [1]]", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT struct_pack(a := " + leak + ")", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM range(length(" + leak + "))", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM unnest([" + leak + "])", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT id FROM atk.t WHERE EXISTS (SELECT * FROM duckdb_settings())",
        "table function `duckdb_settings` is not allowed"));
    out.add(Arguments.of("SELECT * FROM (FROM (FROM (FROM duckdb_databases())))", "table function `duckdb_databases` is not allowed"));
    // Quoting, case and Unicode: DuckDB's names, never a look-alike.
    out.add(Arguments.of("SELECT \"current_setting\"('temp_directory')", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT CURRENT_SETTING('temp_directory')", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT CuRrEnT_sEtTiNg('temp_directory')", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT \"ｃｕｒｒｅｎｔ＿ｓｅｔｔｉｎｇ\"('temp_directory')", "function `ｃｕｒｒｅｎｔ＿ｓｅｔｔｉｎｇ` is not allowed"));
    out.add(Arguments.of("SELECT \"\u212Aurtosis\"(id) FROM atk.t", "function `\u212Aurtosis` is not allowed"));
    out.add(Arguments.of("SELECT current_setting/**/('temp_directory')", "function `current_setting` is not allowed"));
    out.add(Arguments.of("SELECT * FROM \"DUCKDB_SETTINGS\"()", "table function `duckdb_settings` is not allowed"));
    out.add(Arguments.of("SELECT * FROM \"read_csv\" /* x */ ('/etc/passwd')", "table function `read_csv` is not allowed"));
    out.add(Arguments.of("SELECT * FROM (WITH Duckdb_Tables AS (SELECT 1 AS x) SELECT 1) s, duckdb_tables",
        "table `duckdb_tables` does not exist in namespace default"));
    out.add(Arguments.of("SELECT * FROM (WITH duckdb_views AS (SELECT 1) SELECT 1), duckdb_views",
        "table `duckdb_views` does not exist in namespace default"));
    out.add(Arguments.of("WITH a AS (SELECT * FROM duckdb_types), duckdb_types AS (SELECT 1) SELECT * FROM a",
        "table `duckdb_types` does not exist in namespace default"));
    out.add(Arguments.of("WITH RECURSIVE duckdb_types AS (SELECT type_name FROM duckdb_types UNION ALL "
        + "SELECT type_name FROM duckdb_types WHERE false) SELECT count(*) FROM duckdb_types",
        "table `duckdb_types` does not exist in namespace default"));
    out.add(Arguments.of("WITH RECURSIVE duckdb_columns AS (SELECT column_name FROM duckdb_columns UNION "
        + "SELECT column_name FROM duckdb_columns) SELECT * FROM duckdb_columns", "table `duckdb_columns` does not exist in namespace default"));
    // Catalogs and schemas DuckDB or the engine attach.
    out.add(Arguments.of("SELECT * FROM system.main.duckdb_settings", "catalog `system` is not available"));
    out.add(Arguments.of("SELECT * FROM \"system\".\"information_schema\".\"tables\"", "catalog `system` is not available"));
    out.add(Arguments.of("SELECT * FROM temp.main.x", "catalog `temp` is not available"));
    out.add(Arguments.of("SELECT * FROM memory.main.x", "catalog `memory` is not available"));
    out.add(Arguments.of("SELECT * FROM \"MEMORY\".main.x", "catalog `MEMORY` is not available"));
    out.add(Arguments.of("SELECT * FROM victim.atk.t", "catalog `victim` is not available"));
    out.add(Arguments.of("SELECT * FROM system.duckdb_types", "`system.duckdb_types` is ambiguous"));
    out.add(Arguments.of("SELECT * FROM temp.x", "`temp.x` is ambiguous"));
    out.add(Arguments.of("SELECT * FROM \"Memory\".x", "`Memory.x` is ambiguous"));
    out.add(Arguments.of("SELECT * FROM __se_meta.deletes_0", "schema `__se_meta` is not available"));
    out.add(Arguments.of("SELECT * FROM \"default\".\"__SE_META\".\"describe\"", "schema `__SE_META` is not available"));
    out.add(Arguments.of("SELECT * FROM __se_information_schema.tables", "schema `__se_information_schema` is not available"));
    out.add(Arguments.of("SELECT * FROM pg_catalog.pg_class", "schema `pg_catalog` is not available"));
    out.add(Arguments.of("SELECT * FROM \"PG_CATALOG\".pg_type", "schema `PG_CATALOG` is not available"));
    out.add(Arguments.of("SELECT * FROM duckdb_settings", "table `duckdb_settings` does not exist in namespace default"));
    out.add(Arguments.of("SELECT * FROM \"default\".t", "table `t` needs a namespace"));
    out.add(Arguments.of("SELECT * FROM private.accounts", "does not exist"));
    out.add(Arguments.of("SELECT * FROM atk.t AT (VERSION => 1)", "has no snapshot 1"));
    out.add(Arguments.of("SELECT * FROM atk.t AT (TIMESTAMP => now())", "the time travel value must be a literal"));
    out.add(Arguments.of("SELECT * FROM atk.t AT (VERSION => (SELECT max(id) FROM atk.t))", "must be a literal"));
    out.add(Arguments.of("SELECT * FROM atk.t AT (TIMESTAMP => CAST(getenv('HOME') AS TIMESTAMP))", "must be a literal"));
    out.add(Arguments.of("SELECT * FROM atk.t FOR VERSION AS OF (SELECT 1)", "the time travel value must be a literal"));
    out.add(Arguments.of("SELECT * FROM atk.\"t$snapshots\" AT (VERSION => 1)", "cannot be read with time travel"));
    out.add(Arguments.of("SELECT * FROM private.\"accounts$files\"", "does not exist"));
    out.add(Arguments.of("SELECT CAST(id AS main.secret_type) FROM atk.t", "type `main.secret_type` is not allowed"));
    out.add(Arguments.of("SELECT CAST(id AS system.main.integer) FROM atk.t", "type `system.main.integer` is not allowed"));
    // Statements that are not queries.
    out.add(Arguments.of("COPY atk.t TO '" + dir.resolve("out.csv") + "'", "COPY statements are not allowed"));
    out.add(Arguments.of("COPY (SELECT 1) TO '" + dir.resolve("out.csv") + "'", "COPY statements are not allowed"));
    out.add(Arguments.of("ATTACH '" + dir.resolve("x.db") + "' AS x", "ATTACH statements are not allowed"));
    out.add(Arguments.of("ATTACH ':memory:' AS m", "ATTACH statements are not allowed"));
    out.add(Arguments.of("DETACH \"default\"", "DETACH statements are not allowed"));
    out.add(Arguments.of("INSTALL httpfs", "INSTALL statements are not allowed"));
    out.add(Arguments.of("LOAD httpfs", "LOAD statements are not allowed"));
    out.add(Arguments.of("SET enable_external_access = true", "SET statements are not allowed"));
    out.add(Arguments.of("SET VARIABLE x = 1", "SET statements are not allowed"));
    out.add(Arguments.of("RESET allowed_directories", "RESET statements are not allowed"));
    out.add(Arguments.of("PRAGMA database_list", "PRAGMA statements are not allowed"));
    out.add(Arguments.of("CALL duckdb_settings()", "CALL statements are not allowed"));
    out.add(Arguments.of("EXPORT DATABASE '" + dir.resolve("export") + "'", "EXPORT statements are not allowed"));
    out.add(Arguments.of("IMPORT DATABASE '" + dir.resolve("export") + "'", "IMPORT statements are not allowed"));
    out.add(Arguments.of("CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')", "CREATE statements are not allowed"));
    out.add(Arguments.of("CREATE MACRO m() AS current_setting('temp_directory')", "CREATE statements are not allowed"));
    out.add(Arguments.of("USE memory", "USE statements are not allowed"));
    out.add(Arguments.of("PREPARE p AS SELECT 1", "PREPARE statements are not allowed"));
    out.add(Arguments.of("EXPLAIN DELETE FROM atk.t", "DELETE statements are not allowed"));
    out.add(Arguments.of("CHECKPOINT", "CHECKPOINT statements are not allowed"));
    out.add(Arguments.of("SELECT 1; SET enable_external_access = true", "multiple statements are not allowed"));
    return out.stream();
  }

  @Test
  void theSuiteHasOverAHundredDistinctAttempts() {
    Set<String> distinct = new HashSet<>();
    attempts().forEach(arguments -> distinct.add((String) arguments.get()[0]));
    assertThat(distinct).hasSizeGreaterThanOrEqualTo(100);
  }

  @ParameterizedTest
  @MethodSource("attempts")
  void anEscapeAttemptIsRefusedNamingWhatWasRefused(String sql, String message) {
    assertThatThrownBy(() -> rows("atk", sql))
        .isInstanceOf(FlightRuntimeException.class)
        .hasMessageContaining(message)
        .satisfies(e -> {
          assertThat(((FlightRuntimeException) e).status().code())
              .isIn(FlightStatusCode.INVALID_ARGUMENT, FlightStatusCode.NOT_FOUND);
          assertClean(e.getMessage());
        });
    assertThat(Files.exists(dir.resolve("out.csv"))).isFalse();
    assertThat(Files.exists(dir.resolve("x.db"))).isFalse();
    assertThat(Files.exists(dir.resolve("export"))).isFalse();
  }

  @Test
  void aRefusedFunctionInAPreparedStatementIsRefusedWhenPrepared() {
    assertThatThrownBy(() -> client.prepare("SELECT current_setting(?) FROM atk.t", tenant("atk")))
        .hasMessageContaining("function `current_setting` is not allowed");
    assertThatThrownBy(() -> client.prepare("SELECT json_serialize_plan(?)", tenant("atk")))
        .hasMessageContaining("function `json_serialize_plan` is not allowed");
  }

  @Test
  void aParameterValueIsDataNeverSql() throws Exception {
    String inner = "SELECT current_setting('temp_directory') FROM read_parquet('" + victimFile + "')";
    try (FlightSqlClient.PreparedStatement prepared = client.prepare(
        "SELECT name, CAST(? AS VARCHAR) AS p FROM atk.t WHERE id = 1", tenant("atk"))) {
      try (VectorSchemaRoot parameters = VectorSchemaRoot.create(prepared.getParameterSchema(), allocator)) {
        ((VarCharVector) parameters.getVector(0)).setSafe(0, inner.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        parameters.setRowCount(1);
        prepared.setParameters(parameters);
        assertThat(rows("atk", prepared.execute(tenant("atk")))).containsExactly("mine|" + inner);
      }
    }
  }

  @Test
  void legitimateQueriesStillWorkAndNeverSeeTheVictim() throws Exception {
    assertThat(rows("atk", "SELECT id, name FROM atk.t ORDER BY id")).containsExactly("1|mine", "2|also mine");
    assertThat(rows("atk", "SELECT count(*), sum(id), max(name), string_agg(name, ',' ORDER BY id) FROM default.atk.t"))
        .containsExactly("2|3|mine|mine,also mine");
    assertThat(rows("atk", "SELECT id, row_number() OVER (ORDER BY id DESC), lag(name) OVER (ORDER BY id) FROM atk.t ORDER BY id"))
        .containsExactly("1|2|null", "2|1|mine");
    assertThat(rows("atk", "SELECT CAST(date_trunc('hour', ts) AS VARCHAR), CAST(time_bucket(INTERVAL '1 hour', ts) AS VARCHAR), "
        + "strftime(ts, '%Y-%m'), extract(hour FROM ts) FROM atk.t WHERE ts BETWEEN TIMESTAMP '2024-03-01' AND TIMESTAMP '2024-03-02' "
        + "ORDER BY ts"))
        .containsExactly("2024-03-01 10:00:00|2024-03-01 10:00:00|2024-03|10", "2024-03-01 11:00:00|2024-03-01 11:00:00|2024-03|11");
    assertThat(rows("atk", "SELECT upper(name), regexp_replace(name, 'm(i)ne', 'y\\1'), name LIKE '%mine', name ILIKE 'ALSO%', "
        + "CASE WHEN id IN (1, 3) THEN 'odd' ELSE 'even' END, len(tags), tags[1], list_transform(tags, lambda x: upper(x)), "
        + "{'k': id}.k FROM atk.t ORDER BY id"))
        .containsExactly("MINE|yi|true|false|odd|2|a|[\"A\",\"B\"]|1", "ALSO MINE|also yi|true|true|even|1|c|[\"C\"]|2");
    assertThat(rows("atk", "WITH u AS (SELECT unnest(tags) AS tag FROM atk.t) SELECT tag FROM u ORDER BY tag"))
        .containsExactly("a", "b", "c");
    assertThat(rows("atk", "SELECT * FROM range(3) r(i) WHERE i NOT IN (SELECT id FROM atk.t) ORDER BY i")).containsExactly("0");
    assertThat(rows("atk", "SELECT table_schema, table_name FROM information_schema.tables")).containsExactly("atk|t");
    assertThat(rows("atk", "SHOW TABLES")).containsExactly("default|atk|t");
    assertThat(rows("atk", "DESCRIBE atk.t")).extracting(row -> row.split("\\|")[0]).containsExactly("id", "name", "ts", "tags");
    // A column named like a SQL value function (user, current_role, ...) is read qualified.
    assertThat(rows("atk", "SELECT t.user FROM (SELECT name AS user FROM atk.t) t WHERE t.user = 'mine'")).containsExactly("mine");
  }

  /** Second wall: a pooled database, as a query gets it, refuses what the analyzer would have let through. */
  @Test
  void theQueryDatabaseCannotReachFilesOrSettingsOutsideItsTenant() throws Exception {
    Path mine = dir.resolve("wall-mine");
    Files.createDirectories(mine);
    try (Connection writer = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = writer.createStatement()) {
      statement.execute("COPY (SELECT 1 AS id) TO '" + mine.resolve("a.parquet") + "' (FORMAT parquet)");
    }
    try (DuckRuntime duckdb = DuckRuntime.open(dir.resolve("wall-local"), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
        QueryDatabasePool.Lease lease = duckdb.queryDatabases("128MB", 1).acquire("atk", Set.of(mine + "/"))) {
      Connection c = lease.connection();
      assertThat(query(c, "SELECT id FROM read_parquet('" + mine.resolve("a.parquet") + "')")).isEqualTo("1");
      for (String sql : List.of("SELECT * FROM read_parquet('" + victimFile + "')", "SELECT * FROM read_text('/etc/passwd')",
          "SELECT * FROM glob('" + victimFile.getParent() + "/*')", "COPY (SELECT 1) TO '" + dir.resolve("out.csv") + "'",
          "COPY (SELECT 1) TO '" + victimFile.getParent().resolve("planted.parquet") + "'",
          "ATTACH '" + dir.resolve("x.db") + "' AS x", "LOAD httpfs", "LOAD '" + victimFile + "'")) {
        assertThatThrownBy(() -> query(c, sql)).as(sql).isInstanceOf(SQLException.class)
            .hasMessageContaining("Permission Error")
            .satisfies(e -> {
              SeException translated = DuckDbErrors.translate((SQLException) e);
              assertThat(translated.code()).as(sql).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(translated.getMessage()).as(sql)
                  .isEqualTo("query refused: it tries to access files or settings, which is not allowed");
              assertClean(translated.getMessage());
            });
      }
      // Extensions cannot be installed: no home directory DuckDB could install into.
      assertThatThrownBy(() -> query(c, "INSTALL httpfs")).isInstanceOf(SQLException.class)
          .satisfies(e -> assertClean(DuckDbErrors.translate((SQLException) e).getMessage()));
      assertThat(Files.exists(victimFile.getParent().resolve("planted.parquet"))).isFalse();
      for (String sql : List.of("SET enable_external_access = true", "SET allowed_directories = ['/']",
          "RESET lock_configuration", "SET secret_directory = '/tmp'", "SET home_directory = '/root'")) {
        assertThatThrownBy(() -> query(c, sql)).as(sql).isInstanceOf(SQLException.class)
            .hasMessageContaining("configuration has been locked");
      }
      assertThat(Files.exists(dir.resolve("out.csv"))).isFalse();
      assertThat(Files.exists(dir.resolve("x.db"))).isFalse();
      // No setting names a directory outside the database's own spill directory and the tenant's data.
      String home = System.getProperty("user.home");
      try (Statement statement = c.createStatement();
          ResultSet settings = statement.executeQuery("SELECT name, value FROM duckdb_settings()")) {
        while (settings.next()) {
          String value = String.valueOf(settings.getString(2));
          assertThat(value).as(settings.getString(1)).doesNotContain(home).doesNotContain(victimFile.getParent().toString());
        }
      }
      for (String setting : List.of("temp_directory", "secret_directory", "home_directory")) {
        assertThat(query(c, "SELECT current_setting('" + setting + "')")).as(setting)
            .startsWith(dir.resolve("wall-local").resolve("spill").toString());
      }
      assertThat(query(c, "SELECT current_setting('allow_persistent_secrets')")).isEqualTo("false");
    }
  }

  @Test
  void duckDbErrorTextIsScrubbedOfPathsAndSettings() throws Exception {
    Path notParquet = dir.resolve("not-parquet.parquet");
    Files.writeString(notParquet, "hello");
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:")) {
      assertThatThrownBy(() -> query(c, "SELECT * FROM read_parquet('" + notParquet + "')"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining(notParquet.toString())
          .satisfies(e -> {
            SeException translated = DuckDbErrors.translate((SQLException) e);
            assertThat(translated.getMessage()).contains(DuckDbErrors.PATH);
            assertClean(translated.getMessage());
          });
      assertThatThrownBy(() -> query(c, "SELECT CAST('" + dir + "/a' AS INTEGER)"))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> {
            SeException translated = DuckDbErrors.translate((SQLException) e);
            assertThat(translated.getMessage()).startsWith("query failed: Conversion Error").contains(DuckDbErrors.PATH);
            assertClean(translated.getMessage());
          });
    }
    String home = System.getProperty("user.home");
    assertThat(DuckDbErrors.scrub("Binder Error: cannot open " + home + "/x and file:///srv/data/y.parquet, C:\\data\\z.csv; 7/2 = 3.5"))
        .isEqualTo("Binder Error: cannot open <path> and <path>, <path>; 7/2 = 3.5");
    assertThat(DuckDbErrors.scrub("IO Error: Cannot open file \"/var/lib/se/spill/x.tmp\": No such file"))
        .isEqualTo("IO Error: Cannot open file \"<path>\": No such file");
  }

  @Test
  void aSyntaxErrorNamesNoServerPath() {
    assertThatThrownBy(() -> rows("atk", "SELECT * FROM '" + victimFile + "' WHERE"))
        .hasMessageContaining("SQL parser error")
        .satisfies(e -> assertClean(e.getMessage()));
  }

  static String query(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      if (!statement.execute(sql)) {
        return null;
      }
      try (ResultSet rows = statement.getResultSet()) {
        return rows.next() ? rows.getString(1) : null;
      }
    }
  }
}

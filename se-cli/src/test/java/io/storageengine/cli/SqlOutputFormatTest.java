package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.server.EngineServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se sql} on a real server: dates, times and timestamps print as ISO-8601 in the table,
 * CSV and JSON formats; CSV tells NULL (the null string) from the empty string and empty bytes
 * (a quoted {@code ""}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlOutputFormatTest {
  private static final String QUERY = "SELECT * FROM default.demo.types ORDER BY id";

  @TempDir static Path dir;
  private EngineServer server;

  @BeforeAll
  void start() throws Exception {
    server = Cli.startServer(dir.resolve("data"));
    try (RESTCatalog rest = RemoteCatalog.open(Cli.address(server), "warehouse")) {
      Tables.create(rest, TableIdentifier.parse("demo.types"), TableDefinition.builder(
          "id int not null, d date, t time, ts timestamp, tstz timestamptz, s string, b binary").build());
    }
    Path csv = dir.resolve("types.csv");
    Files.writeString(csv, """
        id,d,t,ts,tstz,s,b
        1,1900-01-01,10:00:00,2026-01-02T03:04:05.123456,2026-01-02T03:04:05.5Z,"",""
        2,,,,,,
        3,2026-03-04,23:59:59.000001,1970-01-01T00:00:00,1969-12-31T23:59:59.999999Z,"a,b",abc
        """);
    Cli.ok("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--table", "demo.types",
        csv.toString());
    Cli.await(out -> out.contains("3 rows"), sql("table"));
  }

  @AfterAll
  void stop() {
    server.close();
  }

  @Test
  void csvPrintsIsoTemporalsAndTellsNullFromEmpty() {
    assertThat(Cli.ok(sql("csv"))).isEqualTo("""
        id,d,t,ts,tstz,s,b
        1,1900-01-01,10:00:00,2026-01-02T03:04:05.123456,2026-01-02T03:04:05.5Z,"",""
        2,,,,,,
        3,2026-03-04,23:59:59.000001,1970-01-01T00:00:00,1969-12-31T23:59:59.999999Z,"a,b",616263
        """);
  }

  @Test
  void csvNullStringIsWrittenForNullAndAValueEqualToItIsQuoted() {
    assertThat(Cli.ok(sql("csv", "--null-string", "NULL"))).contains("""
        2,NULL,NULL,NULL,NULL,NULL,NULL
        """).contains(",\"\",\"\"\n");
    assertThat(Cli.ok("sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", "csv",
        "--null-string", "x", "SELECT 'x' AS v, NULL AS w")).isEqualTo("""
        v,w
        "x",x
        """);
  }

  @Test
  void jsonPrintsIsoTemporalsAndNulls() {
    assertThat(Cli.ok(sql("json"))).isEqualTo("""
        {"id":1,"d":"1900-01-01","t":"10:00:00","ts":"2026-01-02T03:04:05.123456","tstz":"2026-01-02T03:04:05.5Z","s":"","b":""}
        {"id":2,"d":null,"t":null,"ts":null,"tstz":null,"s":null,"b":null}
        {"id":3,"d":"2026-03-04","t":"23:59:59.000001","ts":"1970-01-01T00:00:00","tstz":"1969-12-31T23:59:59.999999Z","s":"a,b","b":"616263"}
        """);
  }

  @Test
  void tablePrintsIsoTemporals() {
    String out = Cli.ok(sql("table"));
    assertThat(out).contains("| 1  | 1900-01-01 | 10:00:00 ").contains("2026-01-02T03:04:05.5Z")
        .contains("| 2  | NULL ").contains("1969-12-31T23:59:59.999999Z").doesNotContain("-25567");
  }

  @Test
  void nullStringOutsideCsvIsRefused() {
    Cli.Result r = Cli.run(sql("json", "--null-string", "NULL"));
    assertThat(r.rc()).isEqualTo(2);
    assertThat(r.err()).contains("--null-string applies to --format csv only, not json");
  }

  private String[] sql(String format, String... extra) {
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("sql", "--server-address",
        Cli.address(server), "--catalog-id", "warehouse", "--format", format));
    args.addAll(java.util.List.of(extra));
    args.add(QUERY);
    return args.toArray(String[]::new);
  }
}

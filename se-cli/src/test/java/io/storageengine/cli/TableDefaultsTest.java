package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.server.EngineServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Iceberg v3 defaults and nanosecond timestamps through the CLI on a real server:
 * {@code se table create --schema '... default ...'} and {@code se table alter --add-column
 * '... default ...'} set initial-default and write-default, {@code se ingest} rows without the
 * column get the write default (append and new entity rows) while partial updates keep the old
 * value, queries read both, and {@code DESCRIBE} names the exact types and the defaults.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TableDefaultsTest {
  @TempDir static Path dir;
  private EngineServer server;

  @BeforeAll
  void start() {
    server = Cli.startServer(dir.resolve("data"));
  }

  @AfterAll
  void stop() {
    server.close();
  }

  @Test
  void appendRowsWithoutAColumnGetItsDefaultAndAddedColumnsReadTheirs() throws Exception {
    Cli.ok(table("create", "d.events", "--schema",
        "id int not null, tier int default 0, name string default 'it''s', seen timestamptz_ns, n timestamp_ns"));
    Table t = load("d.events");
    assertThat(t.schema().findField("tier").initialDefault()).isEqualTo(0);
    assertThat(t.schema().findField("tier").writeDefault()).isEqualTo(0);
    assertThat(t.schema().findField("name").writeDefault().toString()).isEqualTo("it's");

    ingest("d.events", "a.jsonl", """
        {"id":1,"seen":"2026-01-02T03:04:05.123456789+01:00","n":"2026-01-02T03:04:05.000000001"}
        {"id":2,"tier":7,"name":null}
        """);
    Cli.await(out -> out.contains("2\n"), sql("csv", "SELECT count(*) FROM d.events"));
    String out = Cli.ok(table("alter", "d.events", "--add-column", "c bigint default 5"));
    assertThat(out).contains("d.events: added column c long default 5");
    assertThat(load("d.events").schema().findField("c").writeDefault()).isEqualTo(5L);
    ingest("d.events", "b.csv", "id,name\n3,\n4,four\n");
    Cli.await(out2 -> out2.contains("4\n"), sql("csv", "SELECT count(*) FROM d.events"));

    assertThat(Cli.ok(sql("csv", "SELECT id, tier, name, c, seen, n FROM d.events ORDER BY id"))).isEqualTo("""
        id,tier,name,c,seen,n
        1,0,it's,5,2026-01-02T02:04:05.123456789Z,2026-01-02T03:04:05.000000001
        2,7,,5,,
        3,0,it's,5,,
        4,0,four,5,,
        """);
    assertThat(Cli.ok(sql("csv", "DESCRIBE d.events"))).isEqualTo("""
        column_name,column_type,null,key,default,extra
        id,INTEGER,NO,,,
        tier,INTEGER,YES,,0,
        name,VARCHAR,YES,,it's,
        seen,TIMESTAMPTZ_NS,YES,,,
        n,TIMESTAMP_NS,YES,,,
        c,BIGINT,YES,,5,
        """);
  }

  @Test
  void newEntityRowsGetTheDefaultAndPartialUpdatesKeepTheOldValue() throws Exception {
    Cli.ok(table("create", "d.people", "--schema", "id int not null, tier int default 0, name string",
        "--mode", "entity", "--primary-key", "id"));
    ingest("d.people", "seed.jsonl", """
        {"id":1,"tier":3,"name":"one"}
        {"id":2,"name":"two"}
        """);
    Cli.await(out -> out.contains("2\n"), sql("csv", "SELECT count(*) FROM d.people"));
    ingest("d.people", "update.jsonl", """
        {"id":1,"name":"uno"}
        {"id":3,"name":"three"}
        """);
    assertThat(Cli.await(out -> out.contains("3,0,three"), sql("csv", "SELECT id, tier, name FROM d.people ORDER BY id")))
        .isEqualTo("""
            id,tier,name
            1,3,uno
            2,0,two
            3,0,three
            """);
  }

  @Test
  void requiredColumnsCanBeAddedWithADefaultAndBadDefaultsAreNamed() {
    Cli.ok(table("create", "d.alter", "--schema", "id int not null"));
    Cli.ok(table("alter", "d.alter", "--add-column", "flag boolean not null default true"));
    Types.NestedField flag = load("d.alter").schema().findField("flag");
    assertThat(flag.isRequired()).isTrue();
    assertThat(flag.initialDefault()).isEqualTo(true);
    Cli.ok(table("alter", "d.alter", "--add-column", "loc struct<lat: double default 0.5, lon: double>"));
    assertThat(load("d.alter").schema().findField("loc.lat").writeDefault()).isEqualTo(0.5);
    assertThat(load("d.alter").schema().findField("loc.lon").writeDefault()).isNull();
    Cli.Result bad = Cli.run(table("alter", "d.alter", "--add-column", "x int default 'x'"));
    assertThat(bad.rc()).isEqualTo(2);
    assertThat(bad.err()).contains("--add-column 'x int default 'x'': schema: default 'x' of column 'x' is not a valid int");
    Cli.Result required = Cli.run(table("alter", "d.alter", "--add-column", "y int not null"));
    assertThat(required.rc()).isEqualTo(2);
    assertThat(required.err()).contains("a new column cannot be not null without a default");
  }

  @Test
  void structFieldDefaultsUnknownColumnsAndChangedDefaults() throws Exception {
    Cli.ok(table("create", "d.nested", "--schema",
        "id int not null, tier int default 0, s struct<a: int default 1, b: string, t: struct<x: string default 'dx'>>,"
            + " u unknown"));
    Table t = load("d.nested");
    assertThat(t.schema().findField("s.a").writeDefault()).isEqualTo(1);
    assertThat(t.schema().findField("s.t.x").initialDefault().toString()).isEqualTo("dx");
    assertThat(t.schema().findType("u")).isEqualTo(Types.UnknownType.get());

    // Absent keys get the write default, an explicit null stays null.
    ingest("d.nested", "n1.jsonl", """
        {"id":1,"s":{"b":"x"}}
        {"id":2,"s":{"a":null,"b":"y","t":{}}}
        {"id":3,"tier":4,"s":{"a":7,"t":{"x":null}}}
        """);
    // Reconciled before the change: the top-level default is written at reconciliation.
    awaitReconciled("d.nested", 3);
    String out = Cli.ok(table("alter", "d.nested", "--set-default", "tier=9", "--set-default", "s.a=2",
        "--set-default", "s.t.x='nx'"));
    assertThat(out).contains("d.nested: set the write default of tier to 9",
        "d.nested: set the write default of s.a to 2");
    Types.NestedField a = load("d.nested").schema().findField("s.a");
    assertThat(a.writeDefault()).isEqualTo(2);
    assertThat(a.initialDefault()).isEqualTo(1);
    // A CSV cell of a struct column holds JSON; an absent struct (t in row 1) is null.
    ingest("d.nested", "n2.csv", "id,s\n4,\"{\"\"b\"\":\"\"z\"\",\"\"t\"\":{}}\"\n");
    awaitReconciled("d.nested", 4);

    assertThat(Cli.ok(sql("csv", "SELECT id, tier, s.a, s.b, s.t.x, u FROM d.nested ORDER BY id"))).isEqualTo("""
        id,tier,a,b,x,u
        1,0,1,x,,
        2,0,,y,dx,
        3,4,7,,,
        4,9,2,z,nx,
        """);

    Cli.Result bad = Cli.run(table("alter", "d.nested", "--set-default", "s.b=3"));
    assertThat(bad.rc()).isEqualTo(2);
    assertThat(bad.err()).contains("--set-default s.b=3: default: default '3' of column 's.b' is not a valid string");
    Cli.Result missing = Cli.run(table("alter", "d.nested", "--set-default", "nope=3"));
    assertThat(missing.err()).contains("--set-default nope: the table has no column nope");
    Cli.Result struct = Cli.run(table("alter", "d.nested", "--set-default", "s=3"));
    assertThat(struct.err()).contains("--set-default s=3: column s of type struct<");
    Cli.ok(table("alter", "d.nested", "--set-default", "s.a=null"));
    assertThat(load("d.nested").schema().findField("s.a").writeDefault()).isNull();
  }

  /** Waits until the table's current snapshot holds {@code rows} rows (reconciliation caught up). */
  private void awaitReconciled(String name, long rows) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
    while (true) {
      Table t = load(name);
      if (t.currentSnapshot() != null
          && Long.parseLong(t.currentSnapshot().summary().getOrDefault("total-records", "0")) == rows) {
        return;
      }
      assertThat(System.nanoTime()).as("reconciled %d rows into %s", rows, name).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private void ingest(String table, String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, text);
    Cli.ok("ingest", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--table", table,
        file.toString());
  }

  private String[] sql(String format, String query) {
    return new String[] {"sql", "--server-address", Cli.address(server), "--catalog-id", "warehouse", "--format", format,
        query};
  }

  private String[] table(String command, String name, String... extra) {
    List<String> args = new java.util.ArrayList<>(List.of("table", command, "--server-address",
        Cli.address(server), "--catalog-id", "warehouse", "--table", name));
    args.addAll(List.of(extra));
    return args.toArray(String[]::new);
  }

  private Table load(String name) {
    return server.registry().catalog("warehouse").loadTable(TableIdentifier.parse(name));
  }
}

package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.server.EngineServer;
import java.nio.file.Path;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code se table create --property} and {@code se table alter} through the REST facade of a real server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TableAlterTest {
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
  void createWithPropertiesThenEvolveEverything() throws Exception {
    Cli.ok(table("create", "ops.events", "--schema", "id int not null, name string, ts timestamptz, old string",
        "--property", "se.maintenance.min-input-files=10", "--property", "note=a=b"));
    Table t = load("ops.events");
    assertThat(t.properties()).containsEntry("se.maintenance.min-input-files", "10").containsEntry("note", "a=b");

    String out = Cli.ok(table("alter", "ops.events", "--add-column", "tags list<string>", "--rename-column", "name=title",
        "--drop-column", "old", "--widen-column", "id bigint", "--set-property", "se.maintenance.enabled=false",
        "--unset-property", "note", "--partition-by", "day(ts), bucket(4, id)", "--sort-by", "title desc"));
    assertThat(out).contains("ops.events: added column tags list<string>", "renamed column name to title",
        "widened column id to long", "partitioned by");
    t = load("ops.events");
    assertThat(t.schema().findField("id").type()).isEqualTo(Types.LongType.get());
    assertThat(t.schema().findField("title")).isNotNull();
    assertThat(t.schema().findField("old")).isNull();
    assertThat(t.schema().findField("tags").type()).isInstanceOf(Types.ListType.class);
    assertThat(t.properties()).containsEntry("se.maintenance.enabled", "false").doesNotContainKey("note");
    assertThat(t.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("day", "bucket[4]");
    assertThat(t.sortOrder().fields()).hasSize(1);
    assertThat(t.sortOrder().fields().get(0).direction().toString()).isEqualTo("DESC");

    Cli.ok(table("alter", "ops.events", "--partition-by", "", "--sort-by", ""));
    t = load("ops.events");
    assertThat(t.spec().isUnpartitioned()).isTrue();
    assertThat(t.sortOrder().isUnsorted()).isTrue();
  }

  @Test
  void badInputIsNamed() {
    Cli.ok(table("create", "ops.bad", "--schema", "id int not null, name string"));
    assertFails(table("create", "ops.bad2", "--schema", "id int", "--property", "novalue"),
        "--property: expected KEY=VALUE, got 'novalue'");
    assertFails(table("alter", "ops.bad"), "nothing to change");
    assertFails(table("alter", "ops.bad", "--widen-column", "name int"), "Cannot change column type: name: string -> int");
    assertFails(table("alter", "ops.bad", "--drop-column", "nope"), "--drop-column nope: the table has no column nope (columns: id, name)");
    assertFails(table("alter", "ops.bad", "--add-column", "x int not null"), "a new column cannot be not null");
    assertFails(table("alter", "ops.bad", "--add-column", "x blob"), "--add-column 'x blob'");
    assertFails(table("alter", "ops.bad", "--unset-property", "nope"), "--unset-property nope: the table has no such property");
    assertFails(table("alter", "ops.bad", "--partition-by", "day(nope)"), "nope");
    Cli.Result missing = Cli.run(table("alter", "ops.absent", "--drop-column", "x"));
    assertThat(missing.rc()).isNotZero();
    assertThat(missing.err()).contains("table 'ops.absent' not found in catalog 'warehouse'");
  }

  private void assertFails(String[] args, String message) {
    Cli.Result r = Cli.run(args);
    assertThat(r.rc()).as(r.out() + r.err()).isEqualTo(2);
    assertThat(r.err()).contains(message);
  }

  private String[] table(String command, String name, String... extra) {
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("table", command, "--server-address",
        Cli.address(server), "--catalog-id", "warehouse", "--table", name));
    args.addAll(java.util.List.of(extra));
    return args.toArray(String[]::new);
  }

  private Table load(String name) throws Exception {
    try (RESTCatalog rest = RemoteCatalog.open(Cli.address(server), "warehouse")) {
      return rest.loadTable(TableIdentifier.parse(name));
    }
  }
}

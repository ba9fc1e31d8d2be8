package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.server.EngineServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se ingest} of JSON lines and CSV into an entity table on a real server: a column a row
 * lacks keeps its stored value, an explicit null sets null, and rows of one key apply in file
 * order even when their column sets differ. Read back with Iceberg's own reader.
 */
class IngestPartialUpsertTest {
  private static final TableIdentifier CUSTOMERS = TableIdentifier.parse("crm.customers");

  @TempDir Path dir;
  private EngineServer server;

  @BeforeEach
  void start() {
    server = Cli.startServer(dir.resolve("data"));
    try (RESTCatalog rest = RemoteCatalog.open(address(), "warehouse")) {
      Tables.create(rest, CUSTOMERS, TableDefinition.builder("id bigint not null, name string, email string, score int")
          .mode(TableDefinition.Mode.ENTITY).primaryKey("id").build());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void jsonLinesMissingKeysKeepStoredValuesPerRow() throws Exception {
    ingest(file("seed.jsonl", """
        {"id":1,"name":"ann","email":"a@x","score":10}
        {"id":2,"name":"bob","email":"b@x","score":20}
        {"id":3,"name":"cat","email":"c@x","score":30}
        """));
    awaitRows("1|ann|a@x|10", "2|bob|b@x|20", "3|cat|c@x|30");

    String out = ingest(file("mixed.jsonl", """
        {"id":2,"email":"b@new"}
        {"id":3,"name":"cat2","email":"c@new"}
        {"id":1,"name":null}
        {"id":2,"score":21}
        {"id":3,"email":"c@newer"}
        """));

    assertThat(out).contains("mixed.jsonl: 5 rows acknowledged");
    // id 2: name and score kept by the email update; id 1: explicit null; id 3: the later
    // line (another column set) wins.
    awaitRows("1|null|a@x|10", "2|bob|b@new|21", "3|cat2|c@newer|30");
  }

  @Test
  void csvEmptyCellIsAbsentQuotedEmptyIsEmptyAndNullStringIsNull() throws Exception {
    ingest(file("seed.csv", """
        id,name,email,score
        1,ann,a@x,10
        2,bob,b@x,20
        3,cat,c@x,30
        """));
    awaitRows("1|ann|a@x|10", "2|bob|b@x|20", "3|cat|c@x|30");

    ingest(file("update.csv", """
        id,name,email
        1,\\N,a@new
        2,,b@new
        3,"",
        """), "--null-string", "\\N");

    // score is not in the header: absent for every row. id 2's empty name cell: kept.
    awaitRows("1|null|a@new|10", "2|bob|b@new|20", "3||c@x|30");
  }

  @Test
  void aCsvRowWithAnEmptyKeyCellIsRefusedNamingTheFileRowAndColumnAfterTheRowsBeforeItAreAcknowledged()
      throws Exception {
    ingest(file("seed.csv", "id,name\n1,ann\n"));
    awaitRows("1|ann|null|null");
    // One row per batch: rows 1 and 2 are sent before row 3 is read.
    Path bad = file("bad.csv", "id,name\n2,bob\n4,dan\n,nobody\n5,eve\n");
    Cli.Result failure = ingestFailing(bad, "--batch-rows", "1");
    String printed = failure.err();
    assertThat(failure.rc()).as(printed).isEqualTo(2);
    assertThat(printed).contains("se: " + bad + ": INVALID_ARGUMENT: row 3: column `id` has no value")
        .contains("se: 2 rows acknowledged before the failure");
    // The rows before the refused one are acknowledged (and so land); nothing after it is sent.
    ingest(file("after.csv", "id,name\n3,cat\n"));
    awaitRows("1|ann|null|null", "2|bob|null|null", "3|cat|null|null", "4|dan|null|null");
  }

  @Test
  void aValueThatDoesNotConvertIsNamedWithItsRowColumnAndTextAndTheRowsAcknowledgedBeforeItLand() throws Exception {
    // Early in a file: the read fails before the first batch.
    Cli.Result json = ingestFailing(file("bad.jsonl", """
        {"id":1,"name":"ann","score":10}
        {"id":2,"name":"bob","score":"ten"}
        """));
    assertThat(json.rc()).as(json.err()).isEqualTo(2);
    assertThat(json.err()).contains("bad.jsonl: INVALID_ARGUMENT: row 2, column `score`: \"ten\" is not a valid int"
        + " (Conversion Error: ").contains("se: 0 rows acknowledged before the failure");

    // Deep in a file: batches before it may be streamed, sent and acknowledged first (DuckDB may
    // also read that far before the first batch).
    StringBuilder csv = new StringBuilder("id,name,score\n");
    for (int i = 1; i <= 100_000; i++) {
      csv.append(i).append(",n").append(i).append(',').append(i == 90_001 ? "9x" : String.valueOf(i % 100)).append('\n');
    }
    Cli.Result late = ingestFailing(file("late.csv", csv.toString()));
    assertThat(late.rc()).as(late.err()).isEqualTo(2);
    assertThat(late.err()).contains("late.csv: INVALID_ARGUMENT: row 90001, column `score`: \"9x\" is not a valid int");
    java.util.regex.Matcher acked = java.util.regex.Pattern.compile("se: (\\d+) rows acknowledged before the failure")
        .matcher(late.err());
    assertThat(acked.find()).as(late.err()).isTrue();
    long rows = Long.parseLong(acked.group(1));
    assertThat(rows).isBetween(0L, 90_000L);
    // Exactly the acknowledged rows land: ids 1..rows (rows of one key arrive in file order).
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (readRows().size() != rows && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    List<String> landed = readRows();
    assertThat(landed).hasSize((int) rows);
    if (rows > 0) {
      assertThat(landed).contains("1|n1|null|1", rows + "|n" + rows + "|null|" + (rows % 100));
    }
  }

  @Test
  void skipRowsResumesAFileWhereARefusedRowStoppedItWithNoRowTwice() throws Exception {
    TableIdentifier events = TableIdentifier.parse("crm.events");
    try (RESTCatalog rest = RemoteCatalog.open(address(), "warehouse")) {
      Tables.create(rest, events, TableDefinition.builder("id bigint, name string, score int").build());
    }
    // Rows 4 and 5 do not fit int; one row per batch, so rows 1-3 are sent before row 4 is read.
    Path file = dir.resolve("events.csv");
    Files.writeString(file, "id,name,score\n1,a,1\n2,b,2\n3,c,3\n4,d,99999999999\n5,e,99999999999\n");
    Cli.Result first = ingestFailing(file, "--table", "crm.events", "--batch-rows", "1");
    assertThat(first.rc()).as(first.err()).isEqualTo(2);
    assertThat(first.err()).contains("INVALID_ARGUMENT: row 4, column `score`: 99999999999 does not fit int")
        .contains("se: 3 rows acknowledged before the failure")
        .contains("se: to go on from the refused row once it is mended: --skip-rows 3 " + file);

    // Row 4 mended; row 5 is still bad and is named by its row in the file, not in the resumed part.
    Files.writeString(file, "id,name,score\n1,a,1\n2,b,2\n3,c,3\n4,d,4\n5,e,99999999999\n");
    Cli.Result second = ingestFailing(file, "--table", "crm.events", "--batch-rows", "1", "--skip-rows", "3");
    assertThat(second.err()).contains("INVALID_ARGUMENT: row 5, column `score`: 99999999999 does not fit int")
        .contains("se: 1 rows acknowledged before the failure").contains("--skip-rows 4 " + file);

    // A value DuckDB cannot convert in a skipped row is not read at all.
    Files.writeString(file, "id,name,score\n1,a,x\n2,b,2\n3,c,3\n4,d,4\n5,e,5\n");
    ingest(file, "--table", "crm.events", "--skip-rows", "4");
    Table table = server.registry().catalog("warehouse").loadTable(events);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<String> rows = List.of();
    while (System.nanoTime() < deadline) {
      table.refresh();
      rows = new ArrayList<>();
      try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
        for (Record r : records) {
          rows.add(r.getField("id") + "|" + r.getField("name") + "|" + r.getField("score"));
        }
      }
      rows.sort(null);
      if (rows.size() >= 5) {
        break;
      }
      Thread.sleep(100);
    }
    assertThat(rows).containsExactly("1|a|1", "2|b|2", "3|c|3", "4|d|4", "5|e|5");
  }

  /** Runs {@code se ingest} of {@code file} (options {@code extra}) and returns what it printed. */
  private Cli.Result ingestFailing(Path file, String... extra) {
    return Cli.run(ingestArgs(file, extra));
  }

  private String ingest(Path file, String... extra) {
    return Cli.ok(ingestArgs(file, extra));
  }

  /** {@code se ingest}'s arguments for {@code file}: {@code extra}, into crm.customers unless they name a table. */
  private String[] ingestArgs(Path file, String... extra) {
    List<String> args = new ArrayList<>(List.of("ingest", "--server-address", address(),
        "--catalog-id", "warehouse"));
    args.addAll(List.of(extra));
    if (!args.contains("--table")) {
      args.addAll(List.of("--table", "crm.customers"));
    }
    args.add(file.toString());
    return args.toArray(String[]::new);
  }

  private Path file(String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, text);
    return file;
  }

  private String address() {
    return Cli.address(server);
  }

  /** Waits until Iceberg's reader returns exactly {@code expected} (id|name|email|score). */
  private void awaitRows(String... expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<String> rows = List.of();
    while (System.nanoTime() < deadline) {
      rows = readRows();
      if (rows.equals(List.of(expected))) {
        return;
      }
      Thread.sleep(100);
    }
    assertThat(rows).containsExactly(expected);
  }

  private List<String> readRows() throws Exception {
    Table table = server.registry().catalog("warehouse").loadTable(CUSTOMERS);
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(r.getField("id") + "|" + r.getField("name") + "|" + r.getField("email") + "|" + r.getField("score"));
      }
    }
    rows.sort(null);
    return rows;
  }
}

package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine's own rules on the REST paths Iceberg's compatibility kit does not judge: the
 * storage-root and entity-table checks on register, multi-table transactions and views; the
 * advertised endpoints and a config that needs no upstream; pagination; metrics reports in
 * {@code /metrics}. Iceberg's {@code RESTCatalog} client and plain HTTP against the real listener.
 */
class RestFacadeTest {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "body", Types.StringType.get()));

  @TempDir Path dir;
  private EngineServer server;
  private RESTCatalog rest;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString()), Role.DEV);
    rest = new RESTCatalog();
    rest.initialize("se", Map.of("uri", base() + "/catalogs/warehouse"));
  }

  @AfterEach
  void stop() throws Exception {
    rest.close();
    server.close();
  }

  @Test
  void configAdvertisesExactlyTheServedEndpointsAndNeedsNoUpstream() throws Exception {
    JsonNode config = json(send("GET", "/catalogs/warehouse/v1/config", null));
    List<String> endpoints = new ArrayList<>();
    config.get("endpoints").forEach(e -> endpoints.add(e.asText()));
    assertThat(endpoints).hasSize(29).contains(
        "POST /v1/{prefix}/transactions/commit",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
        "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/views/rename",
        Endpoint.V1_SUBMIT_TABLE_SCAN_PLAN.toString(),
        Endpoint.V1_FETCH_TABLE_SCAN_PLAN.toString(),
        Endpoint.V1_CANCEL_TABLE_SCAN_PLAN.toString(),
        Endpoint.V1_FETCH_TABLE_SCAN_PLAN_TASKS.toString(),
        Endpoint.V1_TABLE_CREDENTIALS.toString());
    assertThat(endpoints).doesNotContain(Endpoint.V1_TABLE_REMOTE_SIGN.toString());

    // A REST tenant whose upstream does not answer: config comes from the stored config.
    HttpResponse<String> created = send("POST", "/catalogs",
        "{\"catalog_id\":\"down\",\"config\":{\"type\":\"rest\",\"uri\":\"http://127.0.0.1:1\"}}");
    assertThat(created.statusCode()).isEqualTo(201);
    HttpResponse<String> down = send("GET", "/catalogs/down/v1/config?warehouse=x", null);
    assertThat(down.statusCode()).as(down.body()).isEqualTo(200);
    assertThat(json(down).get("endpoints").size()).isEqualTo(29);
    HttpResponse<String> unknown = send("GET", "/catalogs/nope/v1/config", null);
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.body()).contains("nope");
  }

  @Test
  void listingsPageByTokenAndSize() throws Exception {
    rest.createNamespace(Namespace.of("p"));
    for (String name : List.of("a", "b", "c")) {
      rest.createTable(TableIdentifier.of("p", name), SCHEMA);
    }
    JsonNode first = json(send("GET", "/catalogs/warehouse/v1/namespaces/p/tables?pageToken=&pageSize=2", null));
    assertThat(first.get("identifiers")).hasSize(2);
    String next = first.get("next-page-token").asText();
    JsonNode second = json(send("GET", "/catalogs/warehouse/v1/namespaces/p/tables?pageToken=" + next + "&pageSize=2", null));
    assertThat(second.get("identifiers")).hasSize(1);
    assertThat(second.has("next-page-token")).isFalse();
    List<String> names = new ArrayList<>();
    first.get("identifiers").forEach(i -> names.add(i.get("name").asText()));
    second.get("identifiers").forEach(i -> names.add(i.get("name").asText()));
    assertThat(names).containsExactlyInAnyOrder("a", "b", "c");

    JsonNode all = json(send("GET", "/catalogs/warehouse/v1/namespaces/p/tables", null));
    assertThat(all.get("identifiers")).hasSize(3);
    JsonNode namespaces = json(send("GET", "/catalogs/warehouse/v1/namespaces?pageSize=1", null));
    assertThat(namespaces.get("namespaces")).hasSize(1);

    HttpResponse<String> badToken = send("GET", "/catalogs/warehouse/v1/namespaces/p/tables?pageToken=x&pageSize=2", null);
    assertThat(badToken.statusCode()).isEqualTo(400);
    assertThat(badToken.body()).contains("invalid pageToken 'x'");
    HttpResponse<String> badSize = send("GET", "/catalogs/warehouse/v1/namespaces/p/views?pageSize=0", null);
    assertThat(badSize.statusCode()).isEqualTo(400);
    assertThat(badSize.body()).contains("invalid pageSize '0': must be an integer from 1 to 10000");
  }

  @Test
  void aTransactionTouchingAnEntityTableIsRefusedWholeAndChangesNothing() {
    Table entity = Tables.create(rest, TableIdentifier.of("crm", "people"),
        TableDefinition.builder("id bigint not null, name string, v bigint not null")
            .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    Table append = Tables.create(rest, TableIdentifier.of("raw", "events"),
        TableDefinition.builder("id bigint not null, body string").build());

    TableCommit appendCommit = appendCommit(append, "events.parquet");
    TableCommit entityCommit = appendCommit(entity, "people.parquet");
    assertThatThrownBy(() -> rest.commitTransaction(appendCommit, entityCommit))
        .isInstanceOf(ForbiddenException.class)
        .hasMessageContaining("crm.people is an entity table")
        .hasMessageContaining("an outside 'append' commit is refused");
    append.refresh();
    entity.refresh();
    assertThat(append.currentSnapshot()).as("the append table's change was not applied either").isNull();
    assertThat(entity.currentSnapshot()).isNull();

    // Without the entity table, the same kind of transaction commits.
    rest.commitTransaction(appendCommit(append, "events.parquet"));
    append.refresh();
    assertThat(append.currentSnapshot().summary()).containsEntry("added-data-files", "1");
  }

  @Test
  void registerHoldsMetadataAndTableLocationsToTheRootAndNeverOverwritesAnEntityTable() {
    rest.createNamespace(Namespace.of("r"));
    Table source = rest.createTable(TableIdentifier.of("r", "source"), SCHEMA);
    TableMetadata metadata = ((HasTableOperations) source).operations().current();

    assertThatThrownBy(() -> rest.registerTable(TableIdentifier.of("r", "etc"), "file:/etc/passwd.metadata.json"))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("metadata file 'file:/etc/passwd.metadata.json' is outside the catalog's storage root");

    // A metadata file inside the root whose table lives outside it: refused, and nothing is left registered.
    String outsideMetadata = metadata.location() + "/metadata/outside.metadata.json";
    TableMetadataParser.write(TableMetadata.buildFrom(metadata).setLocation("file:/tmp/elsewhere").build(),
        source.io().newOutputFile(outsideMetadata));
    assertThatThrownBy(() -> rest.registerTable(TableIdentifier.of("r", "moved"), outsideMetadata))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("table location 'file:/tmp/elsewhere' is outside the catalog's storage root");
    assertThat(rest.tableExists(TableIdentifier.of("r", "moved"))).isFalse();

    Tables.create(rest, TableIdentifier.of("r", "people"),
        TableDefinition.builder("id bigint not null, v bigint not null")
            .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    assertThatThrownBy(() -> rest.registerTable(TableIdentifier.of("r", "people"), metadata.metadataFileLocation(), true))
        .isInstanceOf(ForbiddenException.class)
        .hasMessageContaining("table r.people is an entity table")
        .hasMessageContaining("registering other metadata over it is refused");

    // Dropped without purge, the table registers again from its own metadata.
    rest.dropTable(TableIdentifier.of("r", "source"), false);
    Table registered = rest.registerTable(TableIdentifier.of("r", "source"), metadata.metadataFileLocation());
    assertThat(registered.location()).isEqualTo(metadata.location());
  }

  @Test
  void aDroppedTableIsCreatedAgainInAFreshLocation() {
    TableIdentifier id = TableIdentifier.of("d", "t");
    rest.createNamespace(id.namespace());
    Table first = rest.createTable(id, SCHEMA);
    rest.dropTable(id, false); // its files stay
    Table second = rest.createTable(id, SCHEMA);
    assertThat(second.location()).startsWith(first.location() + "-").isNotEqualTo(first.location());
  }

  @Test
  void viewLocationsStayUnderTheRoot() {
    rest.createNamespace(Namespace.of("v"));
    assertThatThrownBy(() -> rest.buildView(TableIdentifier.of("v", "outside"))
        .withSchema(SCHEMA).withDefaultNamespace(Namespace.of("v"))
        .withQuery("spark", "select 1").withLocation("file:/tmp/outside").create())
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("view location 'file:/tmp/outside' is outside the catalog's storage root");
    rest.buildView(TableIdentifier.of("v", "inside"))
        .withSchema(SCHEMA).withDefaultNamespace(Namespace.of("v")).withQuery("spark", "select 1").create();
    assertThat(rest.listViews(Namespace.of("v"))).containsExactly(TableIdentifier.of("v", "inside"));
  }

  @Test
  void scanReportsOfClientsReachTheMetrics() throws Exception {
    TableIdentifier id = TableIdentifier.of("m", "t");
    rest.createNamespace(id.namespace());
    Table table = rest.createTable(id, SCHEMA);
    table.newAppend().appendFile(dataFile(table, "a.parquet")).commit();
    try (CloseableIterable<?> tasks = table.newScan().planFiles()) {
      assertThat(tasks).hasSize(1);
    }
    String expected = "se_iceberg_client_scans_total{catalog=\"warehouse\",table=\"m.t\"} 1.0";
    String metrics = "";
    for (int i = 0; i < 50 && !metrics.contains(expected); i++) {
      metrics = send("GET", "/metrics", null).body();
      Thread.sleep(100);
    }
    assertThat(metrics).contains(expected)
        .contains("se_iceberg_client_scan_data_files_total{catalog=\"warehouse\",table=\"m.t\"} 1.0")
        .contains("se_iceberg_client_commits_total{catalog=\"warehouse\",operation=\"append\",table=\"m.t\"} 1.0");

    HttpResponse<String> bad = send("POST", "/catalogs/warehouse/v1/namespaces/m/tables/t/metrics", "{\"report-type\":1}");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("invalid ReportMetricsRequest");
  }

  private TableCommit appendCommit(Table table, String file) {
    Transaction tx = table.newTransaction();
    tx.newAppend().appendFile(dataFile(table, file)).commit();
    BaseTransaction base = (BaseTransaction) tx;
    return TableCommit.create(TableIdentifier.parse(table.name().substring(table.name().indexOf('.') + 1)),
        base.startMetadata(), base.currentMetadata());
  }

  private static DataFile dataFile(Table table, String name) {
    return DataFiles.builder(table.spec())
        .withPath(table.location() + "/data/" + name)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(1)
        .build();
  }

  private String base() {
    return "http://127.0.0.1:" + server.port();
  }

  private static JsonNode json(HttpResponse<String> response) {
    return Json.parse(response.body().getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}

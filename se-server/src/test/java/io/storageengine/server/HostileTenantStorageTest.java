package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.LoggingCatalog;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile tenant ({@code atk}) against a victim ({@code warehouse}) on one dev server, with
 * only what a tenant has: its own catalog's REST facade, Flight ingestion and Flight SQL. It may
 * place no table in the victim's warehouse or on a host directory, reach none through a path-like
 * name, make maintenance delete nothing of the victim's, and pick no tenant through a duplicated
 * key. The victim's rows are counted before and after, and the host sentinel file survives.
 */
class HostileTenantStorageTest {
  private static final String MARKER = "victim-secret-7f3a";

  @TempDir Path dir;
  @TempDir Path host;
  private EngineServer server;
  private BufferAllocator allocator;
  private final HttpClient http = HttpClient.newHttpClient();
  private Path sentinel;

  @BeforeEach
  void start() throws Exception {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(ConfigKey.MAINTENANCE_INTERVAL, "1s"), Role.DEV);
    allocator = new RootAllocator();
    sentinel = Files.writeString(host.resolve("sentinel.txt"), "host file");
    assertThat(post("/catalogs", "{\"catalog_id\":\"atk\",\"config\":{\"type\":\"embedded\"}}").statusCode())
        .isEqualTo(201);
  }

  @AfterEach
  void stop() {
    server.close();
    allocator.close();
  }

  @Test
  void attackerCannotPlaceReadOrDeleteTheVictimsFiles() throws Exception {
    TableIdentifier vault = TableIdentifier.of("secret_ns", "vault");
    Table victim = createTable("warehouse", vault, Map.of());
    ingest("warehouse", vault, 1, 2, 3);
    assertThat(awaitCount("warehouse", "SELECT count(*) FROM default.secret_ns.vault", 3)).isEqualTo(3);
    victim.refresh();
    String victimLocation = victim.location();
    List<Path> victimFiles = filesUnder(localPath(victimLocation));
    assertThat(victimFiles).isNotEmpty();

    // 1. A table inside the victim's warehouse, by location, by '..', by another spelling.
    String atkRoot = server.registry().factory().storageRoot("atk",
        server.registry().config("atk")).orElseThrow();
    for (String location : List.of(victimLocation, victimLocation + "/evil", "file://" + localPath(victimLocation),
        atkRoot + "/../../warehouse/warehouse/secret_ns/vault", atkRoot + "/%2e%2e/%2e%2e/warehouse",
        atkRoot + "/a/..", "file://otherhost" + localPath(atkRoot) + "/x", host.toString(), "file:" + host,
        atkRoot + "/x\\..\\..\\y")) {
      HttpResponse<String> r = createViaFacade("atk", "atk_ns", "t", location, Map.of());
      assertThat(r.statusCode()).as(location).isEqualTo(400);
      assertThat(r.body()).as(location).containsAnyOf("outside the catalog's storage root", "segments are not allowed",
          "must not name a host", "backslashes are not allowed", "encoded slashes");
    }
    // ... nor through a path property, nor a raw catalog client bypassing the engine's checks:
    // the tenant's FileIO refuses to write outside the tenant's root.
    HttpResponse<String> byProperty = createViaFacade("atk", "atk_ns", "t2", null,
        Map.of("write.data.path", victimLocation + "/data"));
    assertThat(byProperty.statusCode()).isEqualTo(400);
    assertThat(byProperty.body()).contains("write.data.path").contains("outside the catalog's storage root");
    Catalog rawAtk = ((LoggingCatalog) server.registry().catalog("atk")).delegate();
    ((SupportsNamespaces) rawAtk).createNamespace(Namespace.of("raw"));
    assertThatThrownBy(() -> rawAtk.buildTable(TableIdentifier.of("raw", "t"), schema())
        .withLocation(victimLocation + "/raw").create())
        .hasMessageContaining("outside the catalog's storage root");
    assertThatThrownBy(() -> rawAtk.buildTable(TableIdentifier.of("raw", "h"), schema())
        .withLocation(host.toString()).create())
        .hasMessageContaining("outside the catalog's storage root");

    // 2. Moving an existing table there, or redirecting its files.
    Table own = createTable("atk", TableIdentifier.of("atk_ns", "mine"), Map.of());
    String tableUrl = "/catalogs/atk/v1/namespaces/atk_ns/tables/mine";
    HttpResponse<String> move = post(tableUrl,
        "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"" + victimLocation + "\"}]}");
    assertThat(move.statusCode()).isEqualTo(400);
    assertThat(move.body()).contains("outside the catalog's storage root");
    HttpResponse<String> redirect = post(tableUrl, "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\","
        + "\"updates\":{\"write.metadata.path\":\"" + victimLocation + "/metadata\"}}]}");
    assertThat(redirect.statusCode()).isEqualTo(400);
    assertThat(redirect.body()).contains("write.metadata.path");
    HttpResponse<String> inside = post(tableUrl, "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\","
        + "\"updates\":{\"write.data.path\":\"" + atkRoot + "/elsewhere\"}}]}");
    assertThat(inside.statusCode()).isEqualTo(400);
    assertThat(inside.body()).contains("must lie under the table location");
    own.refresh();
    assertThat(own.location()).startsWith(atkRoot);

    // 3. Path traversal from Flight alone: a bulk-ingest table name is a name.
    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema()), allocator)) {
      fill(root, 9);
      for (String table : List.of("a/../../../../../../.." + host + "/bulk-escape", "..", "x\\y", "t\u0000")) {
        FlightSqlClient.ExecuteIngestOptions options = new FlightSqlClient.ExecuteIngestOptions(table,
            TableDefinitionOptions.newBuilder()
                .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
                .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build(),
            "atk", "atk_ns", Map.of());
        assertThatThrownBy(() -> sql.executeIngest(root, options))
            .as(table)
            .isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("table name");
      }
      FlightSqlClient.ExecuteIngestOptions noNamespace = new FlightSqlClient.ExecuteIngestOptions("t",
          TableDefinitionOptions.newBuilder()
              .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE).build(),
          "atk", null, Map.of());
      assertThatThrownBy(() -> sql.executeIngest(root, noNamespace))
          .hasMessageContaining("schema: required");
    }
    try (Stream<Path> listing = Files.list(host)) {
      assertThat(listing.map(p -> p.getFileName().toString())).containsExactly("sentinel.txt");
    }

    // 4. Maintenance deletes nothing that is not the table's own, even when an outside client
    // placed a table on the victim's location (within the victim's own catalog, where the root
    // allows it) with an orphan age of one second.
    Catalog rawVictim = ((LoggingCatalog) server.registry().catalog("warehouse")).delegate();
    ((SupportsNamespaces) rawVictim).createNamespace(Namespace.of("other"));
    TableIdentifier overlapping = TableIdentifier.of("other", "overlap");
    rawVictim.buildTable(overlapping, schema()).withLocation(victimLocation)
        .withProperty("se.maintenance.orphan-age", "PT1S").create();
    ingest("warehouse", overlapping, 100);
    assertThat(awaitCount("warehouse", "SELECT count(*) FROM default.other.overlap", 1)).isEqualTo(1);
    Thread.sleep(4_000); // several maintenance passes with a 1 s orphan age
    assertThat(victimFiles).allSatisfy(f -> assertThat(f).exists());
    assertThat(awaitCount("warehouse", "SELECT count(*) FROM default.secret_ns.vault", 3)).isEqualTo(3);
    // The engine itself refuses such a table: it would share the victim's storage.
    HttpResponse<String> sameTenant = createViaFacade("warehouse", "other", "again", victimLocation, Map.of());
    assertThat(sameTenant.statusCode()).isEqualTo(400);
    assertThat(sameTenant.body()).contains("already holds files");
    HttpResponse<String> nested = createViaFacade("warehouse", "other", "nested", victimLocation + "/sub", Map.of());
    assertThat(nested.statusCode()).isEqualTo(400);
    assertThat(nested.body()).contains("lies inside the location of another table");

    // The victim's rows, read with Iceberg's own reader, are all there and carry the marker.
    Table reloaded = server.registry().catalog("warehouse").loadTable(vault);
    List<Object> ids = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(reloaded).build()) {
      for (Record r : records) {
        ids.add(r.getField("id"));
        assertThat(r.getField("name")).isEqualTo(MARKER);
      }
    }
    assertThat(ids).containsExactlyInAnyOrder(1L, 2L, 3L);
    assertThat(sentinel).exists();
  }

  @Test
  void aNewCatalogCannotClaimAnotherTenantsStorage() throws Exception {
    String victimWarehouse = server.registry().factory().storageRoot("warehouse",
        server.registry().config("warehouse")).orElseThrow();
    for (String warehouse : List.of(victimWarehouse, victimWarehouse + "/secret_ns", dir.toUri().toString(),
        dir.resolve("secrets").toString(), dir.getParent().toString())) {
      HttpResponse<String> r = post("/catalogs", "{\"catalog_id\":\"grab\",\"config\":{\"type\":\"sql\","
          + "\"uri\":\"jdbc:sqlite:" + host.resolve("grab.db") + "\",\"warehouse\":\"" + warehouse + "\"}}");
      assertThat(r.statusCode()).as(warehouse).isEqualTo(400);
      assertThat(r.body()).as(warehouse).contains("overlaps the engine's cluster storage");
    }
    String own = host.resolve("wh1").toUri().toString();
    assertThat(post("/catalogs", "{\"catalog_id\":\"first\",\"config\":{\"type\":\"sql\",\"uri\":\"jdbc:sqlite:"
        + host.resolve("first.db") + "\",\"warehouse\":\"" + own + "\"}}").statusCode()).isEqualTo(201);
    HttpResponse<String> inside = post("/catalogs", "{\"catalog_id\":\"second\",\"config\":{\"type\":\"rest\","
        + "\"uri\":\"http://127.0.0.1:1\",\"properties\":{\"se.storage-root\":\"" + own + "/sub\"}}}");
    assertThat(inside.statusCode()).isEqualTo(400);
    assertThat(inside.body()).contains("overlaps the storage root of another catalog").doesNotContain("first");
    assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/catalogs/first"))
        .DELETE().build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(204);
    assertThat(post("/catalogs", "{\"catalog_id\":\"second\",\"config\":{\"type\":\"rest\","
        + "\"uri\":\"http://127.0.0.1:1\",\"properties\":{\"se.storage-root\":\"" + own + "/sub\"}}}").statusCode())
        .isEqualTo(201);
  }

  @Test
  void duplicateKeysNeverPickATenant() throws Exception {
    HttpResponse<String> twice = post("/catalogs",
        "{\"catalog_id\":\"evil\",\"catalog_id\":\"other\",\"config\":{\"type\":\"embedded\"}}");
    assertThat(twice.statusCode()).isEqualTo(400);
    assertThat(twice.body()).contains("Duplicate field 'catalog_id'");
    HttpResponse<String> facade = post("/catalogs/atk/v1/namespaces",
        "{\"namespace\":[\"a\"],\"namespace\":[\"b\"]}");
    assertThat(facade.statusCode()).isEqualTo(400);
    assertThat(facade.body()).contains("Duplicate field 'namespace'");

    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      CallHeaders dupKey = new FlightCallHeaders();
      dupKey.insert("se-query-metadata", "{\"catalog_id\":\"atk\",\"catalog_id\":\"warehouse\"}");
      assertThatThrownBy(() -> sql.execute("SELECT 1", new HeaderCallOption(dupKey)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("Duplicate field 'catalog_id'");
      CallHeaders sentTwice = new FlightCallHeaders();
      sentTwice.insert("se-query-metadata", "{\"catalog_id\":\"atk\"}");
      sentTwice.insert("se-query-metadata", "{\"catalog_id\":\"warehouse\"}");
      assertThatThrownBy(() -> sql.execute("SELECT 1", new HeaderCallOption(sentTwice)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("sent 2 times");

      // The native ingest header.
      try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema()), allocator)) {
        SyncPutListener result = new SyncPutListener();
        FlightClient.ClientStreamListener put = client.startPut(IngestProtocol.descriptor(), root, result);
        byte[] header = ("{\"request_id\":0,\"catalog\":\"atk\",\"catalog\":\"warehouse\","
            + "\"namespace\":[\"secret_ns\"],\"table_name\":\"vault\"}").getBytes(StandardCharsets.UTF_8);
        ArrowBuf buf = allocator.buffer(header.length);
        buf.writeBytes(header);
        put.putMetadata(buf);
        put.completed();
        assertThatThrownBy(put::getResult)
            .isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("Duplicate field 'catalog'");
        result.close();
      }
    }
  }

  // ---- helpers ----

  private static Schema schema() {
    return new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()));
  }

  private Table createTable(String catalogId, TableIdentifier id, Map<String, String> properties) {
    RESTCatalog rest = new RESTCatalog();
    rest.initialize("se", Map.of("uri", "http://127.0.0.1:" + server.port() + "/catalogs/" + catalogId));
    try {
      TableDefinition.Builder definition = TableDefinition.builder("id bigint not null, name string");
      properties.forEach(definition::property);
      Tables.create(rest, id, definition.build());
    } finally {
      try {
        rest.close();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }
    return server.registry().catalog(catalogId).loadTable(id);
  }

  private HttpResponse<String> createViaFacade(String catalogId, String namespace, String table, String location,
      Map<String, String> properties) throws Exception {
    post("/catalogs/" + catalogId + "/v1/namespaces", "{\"namespace\":[\"" + namespace + "\"]}");
    StringBuilder props = new StringBuilder("{");
    properties.forEach((k, v) -> props.append(props.length() > 1 ? "," : "").append('"').append(k).append("\":\"")
        .append(v).append('"'));
    props.append('}');
    String body = "{\"name\":\"" + table + "\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        + "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]},"
        + (location == null ? "" : "\"location\":\"" + location.replace("\\", "\\\\") + "\",")
        + "\"properties\":" + props + "}";
    return post("/catalogs/" + catalogId + "/v1/namespaces/" + namespace + "/tables", body);
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private void ingest(String catalogId, TableIdentifier id, long... ids) throws Exception {
    try (IngestClient client = IngestClient.connect(location(), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema()), allocator);
        IngestStream stream = client.open(catalogId, List.of(id.namespace().levels()), id.name(),
            WalOperation.UPSERT, root.getSchema())) {
      fill(root, ids);
      stream.send(root).get();
      stream.finish();
    }
  }

  private static void fill(VectorSchemaRoot root, long... ids) {
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector name = (VarCharVector) root.getVector(1);
    for (int i = 0; i < ids.length; i++) {
      id.setSafe(i, ids[i]);
      name.setSafe(i, MARKER.getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(ids.length);
  }

  private long awaitCount(String catalogId, String query, long expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    long count = -1;
    while (System.nanoTime() < deadline) {
      count = count(catalogId, query);
      if (count >= expected) {
        return count;
      }
      Thread.sleep(100);
    }
    return count;
  }

  private long count(String catalogId, String query) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\"}");
    HeaderCallOption tenant = new HeaderCallOption(headers);
    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      FlightInfo info = sql.execute(query, tenant);
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), tenant)) {
        long n = 0;
        while (stream.next()) {
          if (stream.getRoot().getRowCount() > 0) {
            n = ((BigIntVector) stream.getRoot().getVector(0)).get(0);
          }
        }
        return n;
      }
    }
  }

  private Location location() {
    return Location.forGrpcInsecure("127.0.0.1", server.port());
  }

  private static Path localPath(String location) {
    return Path.of(URI.create(location.startsWith("file:/") && !location.startsWith("file://")
        ? "file://" + location.substring("file:".length()) : location).getPath());
  }

  private static List<Path> filesUnder(Path dir) throws Exception {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).toList();
    }
  }
}

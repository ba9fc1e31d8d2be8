package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.auth.AuthConfig;
import io.storageengine.common.Json;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The catalog HTTP API of ARCHITECTURE.md section 4 against the real listener. */
class CatalogApiTest {
  private static final String REST_BODY =
      "{\"catalog_id\":\"example\",\"config\":{\"type\":\"rest\",\"uri\":\"http://localhost:8181\","
          + "\"properties\":{\"credential\":\"id:s3cr3t\",\"header.X-Tenant\":\"t1\"}}}";

  @TempDir Path dir;
  private EngineServer server;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() {
    server = EngineServer.start(config(), Role.DEV);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private ServerConfig config() {
    return ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        // se start roles default to --auth.mode tokens; the test calls without credentials, on loopback.
        .with(AuthConfig.MODE, "none");
  }

  private HttpResponse<String> send(String method, String path, String contentType, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> create(String body) throws Exception {
    return send("POST", "/catalogs", "application/json", body);
  }

  @Test
  void healthIsOkWithEmptyBody() throws Exception {
    HttpResponse<String> r = send("GET", "/health", null, null);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEmpty();
  }

  @Test
  void createReturns201WithLocationAndRedactedSecrets() throws Exception {
    HttpResponse<String> r = create(REST_BODY);
    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.headers().firstValue("Location")).contains("/catalogs/example");
    JsonNode json = Json.parse(r.body().getBytes(StandardCharsets.UTF_8));
    assertThat(json.get("name").asText()).isEqualTo("catalogs/example");
    assertThat(json.at("/config/type").asText()).isEqualTo("rest");
    assertThat(json.at("/config/uri").asText()).isEqualTo("http://localhost:8181");
    assertThat(json.at("/config/properties/header.X-Tenant").asText()).isEqualTo("t1");
    assertThat(r.body()).doesNotContain("s3cr3t");

    HttpResponse<String> get = send("GET", "/catalogs/example", null, null);
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(get.body()).contains("\"name\":\"catalogs/example\"").doesNotContain("s3cr3t");
  }

  @Test
  void duplicateCreateIs409() throws Exception {
    assertThat(create(REST_BODY).statusCode()).isEqualTo(201);
    HttpResponse<String> again = create(REST_BODY);
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(again.body()).contains("example");
  }

  @Test
  void invalidIdIs400() throws Exception {
    HttpResponse<String> r = create(REST_BODY.replace("\"example\"", "\"Bad-Id\""));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("Bad-Id");
    assertThat(send("GET", "/catalogs/9abc", null, null).statusCode()).isEqualTo(400);
    assertThat(send("DELETE", "/catalogs/UPPER", null, null).statusCode()).isEqualTo(400);
  }

  @Test
  void invalidJsonIs400() throws Exception {
    HttpResponse<String> r = create("{\"catalog_id\": ");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("invalid JSON");
  }

  @Test
  void wrongShapeIs422NamingTheField() throws Exception {
    HttpResponse<String> r = create("{\"catalog_id\":\"x\",\"config\":{\"type\":\"rest\"}}");
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.body()).contains("uri");
    HttpResponse<String> unknown = create("{\"catalog_id\":\"x\",\"config\":{\"type\":\"rest\",\"uri\":\"http://h\"},\"extra\":1}");
    assertThat(unknown.statusCode()).isEqualTo(422);
    assertThat(unknown.body()).contains("extra");
    HttpResponse<String> array = create("[1,2]");
    assertThat(array.statusCode()).isEqualTo(422);
  }

  @Test
  void missingJsonContentTypeIs415() throws Exception {
    assertThat(send("POST", "/catalogs", null, REST_BODY).statusCode()).isEqualTo(415);
    HttpResponse<String> text = send("POST", "/catalogs", "text/plain", REST_BODY);
    assertThat(text.statusCode()).isEqualTo(415);
    assertThat(text.body()).contains("application/json");
  }

  @Test
  void listingIs405() throws Exception {
    HttpResponse<String> r = send("GET", "/catalogs", null, null);
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).contains("POST");
  }

  @Test
  void missingCatalogIs404AndDeleteIsIdempotent() throws Exception {
    assertThat(send("GET", "/catalogs/nothing", null, null).statusCode()).isEqualTo(404);
    assertThat(send("DELETE", "/catalogs/nothing", null, null).statusCode()).isEqualTo(204);
    assertThat(create(REST_BODY).statusCode()).isEqualTo(201);
    assertThat(send("DELETE", "/catalogs/example", null, null).statusCode()).isEqualTo(204);
    assertThat(send("GET", "/catalogs/example", null, null).statusCode()).isEqualTo(404);
    assertThat(send("DELETE", "/catalogs/example", null, null).statusCode()).isEqualTo(204);
  }

  @Test
  void catalogSurvivesRestart() throws Exception {
    assertThat(create(REST_BODY).statusCode()).isEqualTo(201);
    server.close();
    server = EngineServer.start(config(), Role.SERVER);
    HttpResponse<String> r = send("GET", "/catalogs/example", null, null);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("http://localhost:8181");
  }

  @Test
  void storageOutageIs503WithoutDetail() throws Exception {
    server.close();
    FaultInjectingObjectStore faults = new FaultInjectingObjectStore(new FsObjectStore(dir.resolve("faulty")));
    server = EngineServer.start(config(), Role.SERVER, faults);
    faults.startOutage();
    HttpResponse<String> r = create(REST_BODY);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("\"code\":\"UNAVAILABLE\"").contains("catalog 'example'")
        .doesNotContain("injected").doesNotContain(dir.toString());
    HttpResponse<String> get = send("GET", "/catalogs/example", null, null);
    assertThat(get.statusCode()).isEqualTo(503);
    faults.endOutage();
    assertThat(create(REST_BODY).statusCode()).isEqualTo(201);
  }

  @Test
  void icebergRestConfigPerCatalog() throws Exception {
    HttpResponse<String> r = send("GET", "/catalogs/warehouse/v1/config?warehouse=ignored", null, null);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode json = Json.parse(r.body().getBytes(StandardCharsets.UTF_8));
    assertThat(json.get("defaults").isObject()).isTrue();
    assertThat(json.get("defaults").size()).isZero();
    assertThat(json.get("overrides").size()).isZero();
    assertThat(json.get("endpoints").isArray()).isTrue();
    HttpResponse<String> missing = send("GET", "/catalogs/nothing/v1/config", null, null);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("\"error\"").contains("nothing");
  }

  @Test
  void icebergRestClientCreatesNamespaceAndTableThroughTheFacade() {
    try (RESTCatalog client = new RESTCatalog()) {
      client.initialize("se", Map.of("uri", "http://127.0.0.1:" + server.port() + "/catalogs/warehouse"));
      Namespace ns = Namespace.of("analytics", "events");
      client.createNamespace(Namespace.of("analytics"));
      client.createNamespace(ns);
      Schema schema = new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()));
      Table created = client.createTable(TableIdentifier.of(ns, "page_views"), schema);
      assertThat(created.schema().columns()).hasSize(2);
      assertThat(client.listNamespaces(Namespace.of("analytics"))).containsExactly(ns);
      assertThat(client.listTables(ns)).containsExactly(TableIdentifier.of(ns, "page_views"));
      // The table exists in the tenant's own (embedded) catalog, not only in the facade.
      assertThat(server.registry().catalog("warehouse").tableExists(TableIdentifier.of(ns, "page_views"))).isTrue();
      assertThat(client.dropTable(TableIdentifier.of(ns, "page_views"))).isTrue();
    } catch (java.io.IOException e) {
      throw new RuntimeException(e);
    }
  }
}

package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.common.telemetry.EndedSpanListener;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.S3ProxyFixture;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Credential vending for a tenant whose warehouse is on S3 (S3Proxy, in-process): Iceberg's
 * {@code RESTCatalog} client with no storage credentials of its own reads an engine-written table
 * through the credentials the facade hands out for {@code X-Iceberg-Access-Delegation:
 * vended-credentials}, with client-side and with server-side planning. Without the header no
 * credential is in the response, and the secret reaches no log line, span or error body.
 */
class VendedCredentialsTest {
  @TempDir Path dir;
  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private Telemetry telemetry;
  private EngineServer server;
  private BufferAllocator allocator;
  private S3ProxyFixture s3;

  @BeforeEach
  void start() {
    // S3Proxy rejects the SDK's default flexible checksums (chunked trailers).
    System.setProperty("aws.requestChecksumCalculation", "when_required");
    System.setProperty("aws.responseChecksumValidation", "when_required");
    s3 = S3ProxyFixture.shared();
    logs.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
    telemetry = Telemetry.builder().spanProcessor(
        new EndedSpanListener(span -> spans.add(span.toSpanData()))).build();
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms");
    server = EngineServer.start(EngineContext.builder(config).devKey(true).launch(AuthConfig.Launch.DEV)
        .duckdbDirectory(config.duckdbDirectory()).telemetry(telemetry).build(), Role.DEV);
    allocator = new RootAllocator();
  }

  @AfterEach
  void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    server.close();
    allocator.close();
    telemetry.close();
  }

  @Test
  void aClientWithoutStorageCredentialsReadsAnS3TableThroughVendedOnes() throws Exception {
    String root = "s3://" + s3.bucket() + "/vended-" + UUID.randomUUID();
    server.registry().create("lake", new CatalogConfig(CatalogConfig.Type.SQL,
        "jdbc:sqlite:" + dir.resolve("lake.db"), root, Map.of(
            "s3.endpoint", s3.endpoint().toString(),
            "s3.path-style-access", "true",
            "s3.access-key-id", s3.accessKey(),
            "s3.secret-access-key", s3.secretKey(),
            "client.region", S3ProxyFixture.REGION)));
    Catalog local = server.registry().catalog("lake");
    TableIdentifier id = TableIdentifier.of("crm", "people");
    Table table = Tables.create(local, id, TableDefinition.builder("id bigint not null, name string").build());
    ingest(table);
    awaitSnapshot(table);

    // Iceberg's client, no s3.* properties of its own; with the header, load answers credentials.
    for (String mode : List.of("client", "server")) {
      try (RESTCatalog client = new RESTCatalog()) {
        client.initialize("lake", Map.of("uri", base() + "/catalogs/lake",
            "header.X-Iceberg-Access-Delegation", "vended-credentials", "scan-planning-mode", mode));
        Table remote = client.loadTable(id);
        List<String> rows = new ArrayList<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(remote).build()) {
          records.forEach(r -> rows.add(r.getField("id") + "|" + r.getField("name")));
        }
        assertThat(rows).as(mode + " planning").containsExactlyInAnyOrder("1|ann", "2|bob");
      }
    }

    String path = "/catalogs/lake/v1/namespaces/crm/tables/people";
    JsonNode vended = json(send("GET", path, true), 200);
    assertThat(vended.get("config").get("s3.secret-access-key").asText()).isEqualTo(s3.secretKey());
    JsonNode credential = vended.get("storage-credentials").get(0);
    assertThat(credential.get("prefix").asText()).isEqualTo(table.location());
    assertThat(credential.get("config").get("s3.access-key-id").asText()).isEqualTo(s3.accessKey());
    assertThat(credential.get("config").get("s3.endpoint").asText()).isEqualTo(s3.endpoint().toString());
    JsonNode credentials = json(send("GET", path + "/credentials", false), 200);
    assertThat(credentials.get("storage-credentials").get(0).get("config").get("s3.secret-access-key").asText())
        .isEqualTo(s3.secretKey());

    // Without the header: no credential in the response.
    HttpResponse<String> plain = send("GET", path, false);
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.body()).doesNotContain(s3.secretKey()).doesNotContain("storage-credentials");
    // Errors name no credential either.
    HttpResponse<String> missing = send("GET", "/catalogs/lake/v1/namespaces/crm/tables/nope", true);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).doesNotContain(s3.secretKey());
    HttpResponse<String> badPlan = send("POST", path + "/plan", true, "{\"snapshot-id\":1}");
    assertThat(badPlan.statusCode()).isEqualTo(400);
    assertThat(badPlan.body()).doesNotContain(s3.secretKey());

    assertThat(spans).isNotEmpty();
    for (SpanData span : spans) {
      assertThat(span.toString()).as(span.getName()).doesNotContain(s3.secretKey());
    }
    for (ILoggingEvent event : logs.list) {
      assertThat(event.getFormattedMessage()).doesNotContain(s3.secretKey());
      if (event.getThrowableProxy() != null) {
        assertThat(event.getThrowableProxy().getMessage() == null ? "" : event.getThrowableProxy().getMessage())
            .doesNotContain(s3.secretKey());
      }
    }
  }

  private void ingest(Table table) throws Exception {
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("lake", List.of("crm"), "people", WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      String[] names = {"ann", "bob"};
      for (int i = 0; i < names.length; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, i + 1);
        ((VarCharVector) root.getVector(1)).setSafe(i, names[i].getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(names.length);
      stream.send(root).get();
      stream.finish();
    }
  }

  private static void awaitSnapshot(Table table) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline && table.currentSnapshot() == null) {
      Thread.sleep(100);
      table.refresh();
    }
    assertThat(table.currentSnapshot()).isNotNull();
  }

  private String base() {
    return "http://127.0.0.1:" + server.port();
  }

  private static JsonNode json(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    return Json.parse(response.body().getBytes(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> send(String method, String path, boolean delegation) throws Exception {
    return send(method, path, delegation, null);
  }

  private HttpResponse<String> send(String method, String path, boolean delegation, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path));
    if (delegation) {
      b.header("X-Iceberg-Access-Delegation", "vended-credentials");
    }
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}

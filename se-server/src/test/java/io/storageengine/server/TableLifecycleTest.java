package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@code se dev} server: a stream whose table is dropped stops being acknowledged and
 * ends NOT_FOUND; a table whose reconcile keeps failing is listed by {@code /health?detail=true}
 * and {@code GET /catalogs/{id}/tables/{uuid}/reconcile}, while plain {@code /health} stays 200
 * with an empty body.
 */
class TableLifecycleTest {
  @TempDir Path dir;
  private EngineServer server;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "20ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "100ms"), Role.DEV);
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void batchesSentAfterTheTableWasDroppedAreNeverAcknowledged() throws Exception {
    Catalog catalog = server.registry().catalog("warehouse");
    TableIdentifier id = TableIdentifier.parse("app.orders");
    Table table = Tables.create(catalog, id, TableDefinition.builder("id bigint not null").build());
    List<CompletableFuture<Long>> beforeDrop = new ArrayList<>();
    List<CompletableFuture<Long>> afterDrop = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator();
        IngestClient client = IngestClient.connect(
            Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(
            IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("warehouse", List.of("app"), "orders",
            WalOperation.UPSERT, root.getSchema())) {
      BigIntVector column = (BigIntVector) root.getVector(0);
      column.allocateNew(1);
      root.setRowCount(1);
      for (int i = 0; i < 200; i++) {
        column.set(0, i);
        beforeDrop.add(stream.send(root));
      }
      CompletableFuture.allOf(beforeDrop.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      assertThat(catalog.dropTable(id)).isTrue();
      // The user's stream kept going: 300 more rows.
      for (int i = 200; i < 500; i++) {
        column.set(0, i);
        try {
          afterDrop.add(stream.send(root));
        } catch (FlightRuntimeException e) {
          break; // the stream has ended
        }
      }
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
          .hasMessageContaining("table `warehouse.app.orders` was dropped");
    }
    assertThat(afterDrop).isNotEmpty().allSatisfy(ack -> assertThat(ack).isCompletedExceptionally());
    // What was written after the drop waits in the dropped table's WAL until it is collected.
    TableWal wal = new TableWal("warehouse", table.uuid());
    assertThat(server.store().list(wal.walPrefix())).isNotEmpty();
  }

  @Test
  void aTableWhoseReconcileKeepsFailingIsListedForOperators() throws Exception {
    HttpResponse<String> plain = get("/health");
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.body()).isEmpty();
    JsonNode ok = Json.parse(get("/health?detail=true").body().getBytes(StandardCharsets.UTF_8));
    assertThat(ok.get("status").asText()).isEqualTo("ok");
    assertThat(ok.get("failing_tables")).isEmpty();

    Table table = Tables.create(server.registry().catalog("warehouse"),
        TableIdentifier.parse("ops.stuck"), TableDefinition.builder("id bigint not null").build());
    TableWal wal = new TableWal("warehouse", table.uuid());
    assertThat(Json.parse(get("/catalogs/warehouse/tables/" + table.uuid() + "/reconcile").body()
        .getBytes(StandardCharsets.UTF_8)).toString()).isEqualTo("{\"state\":\"healthy\"}");
    // As ingestion does before its first segment; then a segment that cannot be decoded.
    ObjectStoreWal writer = new ObjectStoreWal(server.store(), "test");
    writer.registerTableName(wal, new TableName(List.of("ops"), "stuck"));
    server.store().put(wal.segmentKey(1), "not a WAL segment".getBytes(StandardCharsets.UTF_8));
    // As a writer does after each segment: the pending marker makes the next tick look at it.
    writer.markPending(wal);

    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    JsonNode detail;
    do {
      assertThat(System.nanoTime()).as("the stuck table was never listed").isLessThan(deadline);
      Thread.sleep(100);
      detail = Json.parse(get("/health?detail=true").body().getBytes(StandardCharsets.UTF_8));
    } while (detail.get("failing_tables").isEmpty());
    assertThat(detail.get("status").asText()).isEqualTo("degraded");
    JsonNode entry = detail.get("failing_tables").get(0);
    assertThat(entry.get("catalog").asText()).isEqualTo("warehouse");
    assertThat(entry.get("table_uuid").asText()).isEqualTo(table.uuid().toString());
    assertThat(entry.get("table").asText()).isEqualTo("ops.stuck");
    assertThat(entry.get("state").asText()).isEqualTo("failing");
    assertThat(entry.get("consecutive_failures").asInt()).isPositive();
    assertThat(entry.get("last_error").asText()).startsWith("INTERNAL: corrupt WAL segment "
        + wal.segmentKey(1));
    assertThat(entry.get("pending_from_seq").asLong()).isEqualTo(1);
    assertThat(entry.get("pending_to_seq").asLong()).isEqualTo(1);
    assertThat(entry.get("summary").asText()).startsWith("failing since ");

    JsonNode status = Json.parse(get("/catalogs/warehouse/tables/" + table.uuid() + "/reconcile")
        .body().getBytes(StandardCharsets.UTF_8));
    assertThat(status.get("state").asText()).isEqualTo("failing");
    assertThat(status.get("last_error").asText()).isEqualTo(entry.get("last_error").asText());
    assertThat(server.context().observability().telemetry().metrics().scrape()).contains(
        "se_reconcile_table_failing{catalog=\"warehouse\",table=\"ops.stuck\"} 1");

    HttpResponse<String> plainAgain = get("/health");
    assertThat(plainAgain.statusCode()).isEqualTo(200);
    assertThat(plainAgain.body()).isEmpty();
    HttpResponse<String> badUuid = get("/catalogs/warehouse/tables/not-a-uuid/reconcile");
    assertThat(badUuid.statusCode()).isEqualTo(400);
    assertThat(badUuid.body()).contains("invalid table uuid 'not-a-uuid': expected the Iceberg table UUID");
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }
}

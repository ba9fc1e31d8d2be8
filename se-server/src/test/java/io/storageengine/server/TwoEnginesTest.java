package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.FsObjectStore;
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
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two engines in one JVM share no state: each {@code se dev} engine has its own data directory,
 * fs store, port, {@link EngineContext} and telemetry (its {@code /metrics} counts only its own
 * work); closing one leaves the other ingesting, reconciling, answering queries and reporting.
 */
class TwoEnginesTest {
  private static final TableIdentifier EVENTS = TableIdentifier.parse("app.events");
  private static final String INGESTED_ROWS = "se_ingest_rows_total{catalog=\"warehouse\",table=\"app.events\"}";
  private static final String RECONCILED_ROWS =
      "se_reconcile_rows_total{catalog=\"warehouse\",table=\"app.events\"}";

  @TempDir Path dir;
  private final BufferAllocator client = new RootAllocator();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stop() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    client.close();
  }

  @Test
  void closingOneEngineLeavesTheOtherWorking() throws Exception {
    EngineServer first = start("first");
    EngineServer second = start("second");

    assertThat(first.context()).isNotSameAs(second.context());
    assertThat(first.context().tombstones()).isNotSameAs(second.context().tombstones());
    assertThat(first.context().allocator(EngineContext.Subsystem.INGEST))
        .isNotSameAs(second.context().allocator(EngineContext.Subsystem.INGEST));
    assertThat(first.context().wal()).isNotSameAs(second.context().wal());
    assertThat(first.context().observability().telemetry())
        .isNotSameAs(second.context().observability().telemetry());

    for (EngineServer server : List.of(first, second)) {
      Tables.create(server.registry().catalog("warehouse"), EVENTS,
          TableDefinition.builder("id bigint not null, name string").build());
    }
    ingest(first, 1, 2, 3);
    ingest(second, 10, 20);
    assertThat(awaitRows(first, 3)).containsExactly("1|n1", "2|n2", "3|n3");
    assertThat(awaitRows(second, 2)).containsExactly("10|n10", "20|n20");
    // Each engine's /metrics counts its own ingest and reconcile only.
    assertThat(awaitMetric(first, RECONCILED_ROWS + " 3.0")).contains(INGESTED_ROWS + " 3.0");
    assertThat(awaitMetric(second, RECONCILED_ROWS + " 2.0")).contains(INGESTED_ROWS + " 2.0");

    first.close();
    assertThat(first.context().isClosed()).isTrue();
    assertThat(second.context().isClosed()).isFalse();

    // The second engine still ingests, reconciles (the rows become queryable) and answers.
    ingest(second, 30);
    assertThat(awaitRows(second, 3)).containsExactly("10|n10", "20|n20", "30|n30");
    assertThat(second.reconcileLoop()).isPresent();
    // ... and its telemetry, which the first engine's close did not reach, keeps counting.
    assertThat(awaitMetric(second, RECONCILED_ROWS + " 3.0")).contains(INGESTED_ROWS + " 3.0");
  }

  /** The engine's {@code /metrics} once it contains {@code line} (or after a minute). */
  private String awaitMetric(EngineServer server, String line) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String metrics = "";
    while (System.nanoTime() < deadline) {
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + server.port() + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      metrics = response.body();
      if (metrics.contains(line)) {
        return metrics;
      }
      Thread.sleep(100);
    }
    assertThat(metrics).contains(line);
    return metrics;
  }

  private EngineServer start(String name) {
    Path data = dir.resolve(name);
    FsObjectStore store = new FsObjectStore(data);
    toClose.add(store);
    EngineServer server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, data.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms"), Role.DEV, store);
    toClose.add(server);
    return server;
  }

  private static Location location(EngineServer server) {
    return Location.forGrpcInsecure("127.0.0.1", server.port());
  }

  private static HeaderCallOption tenant() {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"warehouse\"}");
    return new HeaderCallOption(headers);
  }

  private void ingest(EngineServer server, long... ids) throws Exception {
    try (IngestClient ingest = IngestClient.connect(location(server), client);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(
            server.registry().catalog("warehouse").loadTable(EVENTS).schema()), client);
        IngestStream stream = ingest.open("warehouse", List.of("app"), "events", WalOperation.UPSERT,
            root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < ids.length; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, ids[i]);
        ((VarCharVector) root.getVector(1)).setSafe(i, ("n" + ids[i]).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(ids.length);
      stream.send(root).get();
      stream.finish();
    }
  }

  private List<String> awaitRows(EngineServer server, int expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    List<String> rows = List.of();
    while (System.nanoTime() < deadline) {
      rows = query(server);
      if (rows.size() >= expected) {
        return rows;
      }
      Thread.sleep(100);
    }
    return rows;
  }

  private List<String> query(EngineServer server) throws Exception {
    List<String> rows = new ArrayList<>();
    try (FlightClient flight = FlightClient.builder(client, location(server)).build();
        FlightSqlClient sql = new FlightSqlClient(flight)) {
      FlightInfo info = sql.execute("SELECT id, name FROM default.app.events ORDER BY id", tenant());
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), tenant())) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          for (int i = 0; i < root.getRowCount(); i++) {
            rows.add(root.getVector(0).getObject(i) + "|" + root.getVector(1).getObject(i));
          }
        }
      }
    }
    return rows;
  }
}

package io.storageengine.server.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.telemetry.EndedSpanListener;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineContext;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real server with tracing into memory: ingest over Flight, let the dev role reconcile, query
 * over Flight SQL, then check the spans (names, fields, nesting, no SQL text or credentials)
 * and that {@code /metrics} moved.
 */
class ObservabilityTest {
  private static final String SECRET_LITERAL = "hunter2-literal";

  @TempDir Path dir;
  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private Telemetry telemetry;
  private EngineServer server;
  private BufferAllocator allocator;

  @BeforeEach
  void start() {
    telemetry = Telemetry.builder().spanProcessor(
        new EndedSpanListener(span -> spans.add(span.toSpanData()))).build();
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "100ms");
    server = EngineServer.start(EngineContext.builder(config).devKey(true).launch(AuthConfig.Launch.DEV)
        .duckdbDirectory(config.duckdbDirectory()).telemetry(telemetry).build(), Role.DEV);
    allocator = new RootAllocator();
  }

  @AfterEach
  void stop() {
    server.close();
    allocator.close();
    telemetry.close();
  }

  @Test
  void flightCallsWalFlushesAndStorageAreTracedAndMetricsMove() throws Exception {
    Catalog catalog = server.registry().catalog("warehouse");
    TableIdentifier id = TableIdentifier.parse("analytics.events");
    Tables.create(catalog, id, TableDefinition.builder("id bigint not null, url string").build());
    Table table = catalog.loadTable(id);
    Location location = Location.forGrpcInsecure("127.0.0.1", server.port());
    try (IngestClient client = IngestClient.connect(location, allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("warehouse", List.of("analytics"), "events", WalOperation.UPSERT,
            root.getSchema())) {
      fill(root, 1, "/a");
      stream.send(root).get();
      fill(root, 2, "/b");
      stream.send(root).get();
      stream.finish();
    }

    String sql = "SELECT id, url FROM default.analytics.events WHERE url <> '" + SECRET_LITERAL + "'";
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    int rows = 0;
    while (rows < 2 && System.nanoTime() < deadline) {
      rows = query(location, sql);
      if (rows < 2) {
        Thread.sleep(100);
      }
    }
    assertThat(rows).isEqualTo(2);

    SpanData put = only("flight.DoPut");
    assertThat(put.getAttributes().get(SpanFields.FLIGHT_KIND)).isEqualTo("ingest");
    assertThat(put.getAttributes().get(SpanFields.CATALOG_ID)).isEqualTo("warehouse");
    assertThat(put.getAttributes().get(SpanFields.TABLE)).isEqualTo("analytics.events");
    assertThat(put.getAttributes().get(SpanFields.REQUEST_IDS)).containsExactly(1L, 2L);
    assertThat(put.getAttributes().get(SpanFields.RESPONSE_MESSAGES)).isEqualTo(3); // target ack + 2 batch acks
    assertThat(put.getAttributes().get(SpanFields.ERROR)).isFalse();
    // The WAL flush ran on the group committer, its storage calls under it.
    SpanData flush = spans.stream().filter(s -> s.getName().equals(SpanFields.WAL_FLUSH)).findFirst().orElseThrow();
    assertThat(flush.getAttributes().get(SpanFields.SEGMENT_SEQ)).isPositive();
    assertThat(spans).anySatisfy(s -> {
      assertThat(s.getName()).isEqualTo(SpanFields.STORAGE_OPERATION);
      assertThat(s.getParentSpanId()).isEqualTo(flush.getSpanId());
      assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("put_if_absent");
    });

    // Each batch is an ingest.batch child of the DoPut call, ended when durable.
    assertThat(spans.stream().filter(s -> s.getName().equals(SpanFields.INGEST_BATCH)
        && s.getParentSpanId().equals(put.getSpanId()))).hasSize(2);
    // The reconcile pass that published the rows is its own trace: run > materialize, commit.
    SpanData run = spans.stream().filter(s -> s.getName().equals(SpanFields.RECONCILE_RUN)
        && "committed".equals(s.getAttributes().get(SpanFields.OUTCOME))).findFirst().orElseThrow();
    assertThat(run.getParentSpanContext().isValid()).isFalse();
    assertThat(run.getAttributes().get(SpanFields.TABLE)).isEqualTo("analytics.events");
    assertThat(spans).anySatisfy(s -> {
      assertThat(s.getName()).isEqualTo(SpanFields.RECONCILE_MATERIALIZE);
      assertThat(s.getParentSpanId()).isEqualTo(run.getSpanId());
    });
    assertThat(spans).anySatisfy(s -> {
      assertThat(s.getName()).isEqualTo(SpanFields.RECONCILE_COMMIT);
      assertThat(s.getParentSpanId()).isEqualTo(run.getSpanId());
    });

    SpanData plan = spans.stream().filter(s -> s.getName().equals("flight.GetFlightInfo")
        && "query".equals(s.getAttributes().get(SpanFields.FLIGHT_KIND))).reduce((a, b) -> b).orElseThrow();
    assertThat(plan.getAttributes().get(SpanFields.FLIGHT_COMMAND)).isEqualTo("CommandStatementQuery");
    assertThat(plan.getAttributes().get(SpanFields.QUERY_LENGTH)).isEqualTo(sql.length());
    assertThat(plan.getAttributes().get(SpanFields.CATALOG_ID)).isEqualTo("warehouse");
    SpanData get = spans.stream().filter(s -> s.getName().equals("flight.DoGet")).reduce((a, b) -> b).orElseThrow();
    assertThat(get.getAttributes().get(SpanFields.FLIGHT_KIND)).isEqualTo("query");
    assertThat(get.getAttributes().get(SpanFields.RESPONSE_MESSAGES)).isPositive();

    // Never SQL text, tickets, headers or credentials in any field of any span.
    for (SpanData span : spans) {
      for (Map.Entry<AttributeKey<?>, Object> field : span.getAttributes().asMap().entrySet()) {
        assertThat(String.valueOf(field.getValue())).as(span.getName() + " " + field.getKey())
            .doesNotContain(SECRET_LITERAL).doesNotContain("SELECT").doesNotContain("catalog_id");
      }
    }

    String metrics = scrape();
    assertThat(metrics)
        .contains("se_flight_calls_total{kind=\"ingest\",method=\"DoPut\",status=\"OK\"} 1.0")
        .contains("se_query_requests_total{method=\"GetFlightInfo\"}")
        .contains("se_query_duration_seconds_count{method=\"DoGet\"}")
        .contains("se_wal_flush_size_bytes_count")
        .contains("se_ingest_rows_total{catalog=\"warehouse\",table=\"analytics.events\"}")
        .contains("se_reconcile_rows_total{catalog=\"warehouse\",table=\"analytics.events\"}")
        .contains("se_objectstore_operation_duration_seconds_count{operation=\"put_if_absent\",outcome=\"ok\",storage=\"cluster\"}")
        .contains("se_arrow_memory_allocated_bytes{allocator=\"root\"}")
        .contains("jvm_memory_used_bytes");
    // The reconcile pass published the WAL: nothing is left behind.
    assertThat(metrics).contains("se_wal_backlog_segments{catalog=\"warehouse\",table=\"analytics.events\"} 0.0");
  }

  private SpanData only(String name) {
    List<SpanData> named = spans.stream().filter(s -> s.getName().equals(name)).toList();
    assertThat(named).as(name).hasSize(1);
    return named.get(0);
  }

  private String scrape() throws Exception {
    HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("text/plain"));
    return response.body();
  }

  private int query(Location location, String sql) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    // Snapshot reads: the loop below waits for reconciliation, which a read of the WAL tail would
    // not (it sees acknowledged rows at once).
    headers.insert("se-query-metadata", "{\"catalog_id\":\"warehouse\",\"read\":\"snapshot\"}");
    HeaderCallOption tenant = new HeaderCallOption(headers);
    int rows = 0;
    try (FlightClient client = FlightClient.builder(allocator, location).build();
        FlightSqlClient flightSql = new FlightSqlClient(client)) {
      FlightInfo info = flightSql.execute(sql, tenant);
      try (FlightStream stream = flightSql.getStream(info.getEndpoints().get(0).getTicket(), tenant)) {
        while (stream.next()) {
          rows += stream.getRoot().getRowCount();
        }
      }
    }
    return rows;
  }

  private static void fill(VectorSchemaRoot root, long id, String url) {
    root.allocateNew();
    ((BigIntVector) root.getVector(0)).setSafe(0, id);
    ((VarCharVector) root.getVector(1)).setSafe(0, url.getBytes(StandardCharsets.UTF_8));
    root.setRowCount(1);
  }
}

package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
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
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server-side scan planning through the facade, with Iceberg's own {@code RESTCatalog} client in
 * {@code scan-planning-mode=server}: an engine-written entity table with deletion vectors reads
 * the same rows as a local plan, with a plan of one task per response (so the client fetches the
 * rest as plan tasks), for the current snapshot, a filter and time travel; an incremental append
 * scan, a cancelled plan and a foreign plan task over plain HTTP.
 */
class RestScanPlanningTest {
  @TempDir Path dir;
  private EngineServer server;
  private BufferAllocator allocator;
  private RESTCatalog planning;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(ConfigKey.REST_PLAN_PAGE_SIZE, "1"), Role.DEV);
    allocator = new RootAllocator();
    planning = new RESTCatalog();
    planning.initialize("se", Map.of("uri", base() + "/catalogs/warehouse", "scan-planning-mode", "server"));
  }

  @AfterEach
  void stop() throws Exception {
    planning.close();
    server.close();
    allocator.close();
  }

  @Test
  void anEntityTableWithDeletionVectorsReadsTheSameRowsAsALocalPlan() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "people");
    Tables.create(planning, id, TableDefinition.builder("id bigint not null, name string, v bigint not null")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    Catalog local = server.registry().catalog("warehouse");
    ingest(local, id, new long[] {1, 2, 3}, new String[] {"ann", "bob", "cy"}, new long[] {1, 1, 1});
    Snapshot first = awaitSnapshots(local.loadTable(id), 1);
    // Updates rows of the first file: the engine marks them deleted in a deletion vector.
    ingest(local, id, new long[] {2, 4}, new String[] {"bob2", "dee"}, new long[] {2, 1});
    Table localTable = local.loadTable(id);
    awaitSnapshots(localTable, 2);

    Table remote = planning.loadTable(id);
    List<FileScanTask> tasks = tasks(remote.newScan());
    assertThat(tasks).hasSizeGreaterThan(1); // more than one page: plan tasks were fetched
    assertThat(paths(tasks)).containsExactlyInAnyOrderElementsOf(paths(tasks(localTable.newScan())));
    assertThat(tasks).anySatisfy(t -> assertThat(t.deletes()).isNotEmpty()
        .allSatisfy(d -> assertThat(d.format()).isEqualTo(FileFormat.PUFFIN)));

    assertThat(rows(remote, Expressions.alwaysTrue()))
        .containsExactlyInAnyOrder("1|ann", "2|bob2", "3|cy", "4|dee")
        .containsExactlyInAnyOrderElementsOf(rows(localTable, Expressions.alwaysTrue()));
    assertThat(rows(remote, Expressions.greaterThan("id", 2L))).containsExactlyInAnyOrder("3|cy", "4|dee");

    // Time travel: the first snapshot's rows, planned by the server.
    List<String> travelled = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(remote).useSnapshot(first.snapshotId()).build()) {
      records.forEach(r -> travelled.add(r.getField("id") + "|" + r.getField("name")));
    }
    assertThat(travelled).containsExactlyInAnyOrder("1|ann", "2|bob", "3|cy");
  }

  @Test
  void incrementalScansCancelledPlansAndForeignPlanTasksOverHttp() throws Exception {
    TableIdentifier id = TableIdentifier.of("raw", "events");
    Tables.create(planning, id, TableDefinition.builder("id bigint not null, name string").build());
    Catalog local = server.registry().catalog("warehouse");
    ingest(local, id, new long[] {1}, new String[] {"a"}, null);
    Snapshot first = awaitSnapshots(local.loadTable(id), 1);
    ingest(local, id, new long[] {2}, new String[] {"b"}, null);
    Snapshot second = awaitSnapshots(local.loadTable(id), 2);
    String table = "/catalogs/warehouse/v1/namespaces/raw/tables/events";

    // (first, second]: the second append's file only.
    JsonNode incremental = json(send("POST", table + "/plan", "{\"start-snapshot-id\":" + first.snapshotId()
        + ",\"end-snapshot-id\":" + second.snapshotId() + "}"), 200);
    assertThat(incremental.get("status").asText()).isEqualTo("completed");
    assertThat(incremental.get("file-scan-tasks")).hasSize(1);
    assertThat(incremental.has("plan-tasks")).isFalse();
    String appended = second.addedDataFiles(local.loadTable(id).io()).iterator().next().location();
    assertThat(incremental.get("file-scan-tasks").get(0).get("data-file").get("file-path").asText()).isEqualTo(appended);

    // The whole table: one task inline, one plan task; the plan can be fetched again, then cancelled.
    JsonNode plan = json(send("POST", table + "/plan", "{\"select\":[\"id\"]}"), 200);
    String planId = plan.get("plan-id").asText();
    assertThat(plan.get("file-scan-tasks")).hasSize(1);
    assertThat(plan.get("plan-tasks")).hasSize(1);
    String planTask = plan.get("plan-tasks").get(0).asText();
    JsonNode again = json(send("GET", table + "/plan/" + planId, null), 200);
    assertThat(again.get("status").asText()).isEqualTo("completed");
    assertThat(again.get("plan-tasks").get(0).asText()).isEqualTo(planTask);
    assertThat(send("DELETE", table + "/plan/" + planId, null).statusCode()).isEqualTo(204);
    HttpResponse<String> gone = send("GET", table + "/plan/" + planId, null);
    assertThat(gone.statusCode()).isEqualTo(404);
    assertThat(json(gone, 404).get("error").get("type").asText()).isEqualTo("NoSuchPlanIdException");

    // A plan task outlives its plan (it is planned again), but not on another table.
    JsonNode page = json(send("POST", table + "/tasks", "{\"plan-task\":\"" + planTask + "\"}"), 200);
    assertThat(page.get("file-scan-tasks")).hasSize(1);
    assertThat(page.get("file-scan-tasks").get(0).get("data-file").get("file-path").asText())
        .isNotEqualTo(plan.get("file-scan-tasks").get(0).get("data-file").get("file-path").asText());
    Tables.create(planning, TableIdentifier.of("raw", "other"), TableDefinition.builder("id bigint not null").build());
    HttpResponse<String> foreign = send("POST", "/catalogs/warehouse/v1/namespaces/raw/tables/other/tasks",
        "{\"plan-task\":\"" + planTask + "\"}");
    assertThat(json(foreign, 404).get("error").get("message").asText())
        .isEqualTo("plan task does not belong to table raw.other");
    HttpResponse<String> forged = send("POST", table + "/tasks", "{\"plan-task\":\"bm90LWEtdGFzaw\"}");
    assertThat(json(forged, 404).get("error").get("message").asText())
        .isEqualTo("invalid plan task: pass a plan-task of a plan response unchanged");
    HttpResponse<String> badSnapshot = send("POST", table + "/plan", "{\"snapshot-id\":42}");
    assertThat(json(badSnapshot, 400).get("error").get("message").asText())
        .isEqualTo("invalid PlanTableScanRequest: snapshot-id 42 is not a snapshot of the table");
  }

  private void ingest(Catalog catalog, TableIdentifier id, long[] ids, String[] names, long[] versions) throws Exception {
    Table table = catalog.loadTable(id);
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("warehouse", List.of(id.namespace().levels()), id.name(),
            WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < ids.length; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, ids[i]);
        ((VarCharVector) root.getVector(1)).setSafe(i, names[i].getBytes(StandardCharsets.UTF_8));
        if (versions != null) {
          ((BigIntVector) root.getVector(2)).setSafe(i, versions[i]);
        }
      }
      root.setRowCount(ids.length);
      stream.send(root).get();
      stream.finish();
    }
  }

  /** Waits until the table has {@code count} snapshots in its history; the latest. */
  private static Snapshot awaitSnapshots(Table table, int count) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline && history(table) < count) {
      Thread.sleep(100);
      table.refresh();
    }
    assertThat(history(table)).isGreaterThanOrEqualTo(count);
    return table.currentSnapshot();
  }

  private static int history(Table table) {
    int n = 0;
    for (Snapshot s = table.currentSnapshot(); s != null; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      n++;
    }
    return n;
  }

  private static List<FileScanTask> tasks(TableScan scan) throws Exception {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = scan.planFiles()) {
      planned.forEach(tasks::add);
    }
    return tasks;
  }

  private static List<String> paths(List<FileScanTask> tasks) {
    return tasks.stream().map(t -> t.file().location()).toList();
  }

  private static List<String> rows(Table table, Expression filter) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).where(filter).build()) {
      records.forEach(r -> rows.add(r.getField("id") + "|" + r.getField("name")));
    }
    return rows;
  }

  private String base() {
    return "http://127.0.0.1:" + server.port();
  }

  private static JsonNode json(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    return Json.parse(response.body().getBytes(StandardCharsets.UTF_8));
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

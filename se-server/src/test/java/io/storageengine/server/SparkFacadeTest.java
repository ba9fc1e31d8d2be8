package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.common.SparkModuleCommand;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
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
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark 4 ({@code local[1]}, Iceberg's Spark runtime) through a tenant's Iceberg REST facade,
 * with a bearer token: it creates a namespace and an append table and inserts into it (the engine
 * reads the rows back over Flight SQL), reads an engine-written entity table with deletion vectors
 * (the same rows as the engine's query), travels to an older snapshot, and is refused an
 * {@code INSERT} into the entity table with the facade's message to ingest instead. It reads the
 * engine's variant columns; it cannot load a table with a geometry or geography column at all.
 *
 * <p>Spark runs in a child JVM on the classpath the {@code se-spark} module resolved (Spark's
 * Jackson, Netty, Arrow, Hadoop and Scala versions differ from the engine's, so none of it is on
 * this module's classpath); the child runs {@code FacadeSqlDriver}, which prints one JSON line per
 * statement.
 */
class SparkFacadeTest {
  private static final Logger LOG = LoggerFactory.getLogger(SparkFacadeTest.class);
  private static final String BOOTSTRAP = "bootstrap-0123456789abcdef0123456789abcdef";
  private static final Path SPARK_MODULE = Path.of("..", "se-spark", "target");

  @TempDir Path dir;
  private EngineServer server;
  private BufferAllocator allocator;
  private String token;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.resolve("data").toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(AuthConfig.MODE, "tokens")
        .with(AuthConfig.BOOTSTRAP_TOKEN, BOOTSTRAP), Role.DEV);
    allocator = new RootAllocator();
    assertThat(send("POST", "/principals", "{\"name\":\"spark\"}").statusCode()).isEqualTo(201);
    HttpResponse<String> issued = send("POST", "/principals/spark/tokens", "{\"expires_in\":\"P1D\"}");
    assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
    token = Json.parse(issued.body().getBytes(StandardCharsets.UTF_8)).path("token").asText();
    // owner: facade writes (table DDL and commits) need it.
    assertThat(send("PUT", "/catalogs/warehouse/grants/spark", "{\"role\":\"owner\"}").statusCode()).isEqualTo(204);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    if (allocator != null) {
      allocator.close();
    }
  }

  @Test
  void sparkWritesAnAppendTableReadsAnEntityTableWithDeletionVectorsAndIsRefusedEntityWrites() throws Exception {
    Catalog local = server.registry().catalog("warehouse");
    TableIdentifier people = TableIdentifier.of("crm", "people");
    Tables.create(local, people, TableDefinition.builder("id bigint not null, name string, v bigint not null")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());
    ingest(local, people, new long[] {1, 2, 3}, new String[] {"ann", "bob", "cy"}, new long[] {1, 1, 1});
    Snapshot first = awaitSnapshots(local.loadTable(people), 1);
    // Updates a row of the first file: reconcile marks it deleted in a deletion vector.
    ingest(local, people, new long[] {2, 4}, new String[] {"bob2", "dee"}, new long[] {2, 1});
    Table peopleTable = local.loadTable(people);
    awaitSnapshots(peopleTable, 2);
    assertThat(tasks(peopleTable)).anySatisfy(t -> assertThat(t.deletes()).isNotEmpty()
        .allSatisfy(d -> assertThat(d.format()).isEqualTo(FileFormat.PUFFIN)));

    List<JsonNode> results = spark(
        "CREATE NAMESPACE se.raw",
        "CREATE TABLE se.raw.events (id BIGINT NOT NULL, body STRING) USING iceberg",
        "INSERT INTO se.raw.events VALUES (1, 'a'), (2, 'b')",
        "SELECT id, body FROM se.raw.events ORDER BY id",
        "SELECT id, name, v FROM se.crm.people ORDER BY id",
        "SELECT id, name, v FROM se.crm.people VERSION AS OF " + first.snapshotId() + " ORDER BY id",
        "INSERT INTO se.crm.people VALUES (5, 'eve', 1)",
        "SELECT count(*) AS n FROM se.crm.people");
    assertThat(results).hasSize(8);
    for (int i = 0; i < 6; i++) {
      assertThat(results.get(i).has("error")).as("%s", results.get(i)).isFalse();
    }

    // The append table Spark created and wrote: the engine's Flight SQL reads Spark's rows.
    assertThat(rows(results.get(3), "id", "body")).containsExactly("1|a", "2|b");
    assertThat(query("SELECT id, body FROM default.raw.events ORDER BY id")).containsExactly("1|a", "2|b");
    assertThat(local.loadTable(TableIdentifier.of("raw", "events")).properties()).doesNotContainKey("se.mode");

    // The entity table: Spark applies the deletion vector and reads what the engine's query reads.
    List<String> engine = query("SELECT id, name, v FROM default.crm.people ORDER BY id");
    assertThat(engine).containsExactly("1|ann|1", "2|bob2|2", "3|cy|1", "4|dee|1");
    assertThat(rows(results.get(4), "id", "name", "v")).containsExactlyElementsOf(engine);
    // Time travel: the first snapshot, before the update.
    assertThat(rows(results.get(5), "id", "name", "v")).containsExactly("1|ann|1", "2|bob|1", "3|cy|1");

    // INSERT into the entity table: refused, Spark shows the facade's reason, and nothing changed.
    JsonNode refused = results.get(6);
    assertThat(refused.path("error").asText()).as("%s", refused)
        .contains("crm.people is an entity table")
        .contains("Ingest the rows instead");
    assertThat(refused.path("causes").toString()).contains("org.apache.iceberg.exceptions.ForbiddenException");
    assertThat(rows(results.get(7), "n")).containsExactly("4");
  }

  @Test
  void sparkReadsTheEnginesVariantColumnAsVariantWithTheSameValues() throws Exception {
    Catalog local = server.registry().catalog("warehouse");
    TableIdentifier raw = TableIdentifier.of("docs", "raw");
    // Shredded into typed columns (a.b's int8 values are not int, so they stay in the binary value).
    Tables.create(local, raw, TableDefinition.builder("id bigint not null, doc variant")
        .property("se.variant.shredding.doc", "a struct<b: int>, s string, n double").build());
    List<String> docs = List.of("{\"a\":{\"b\":1},\"s\":\"x\"}", "{\"a\":{\"b\":-5},\"n\":2.5,\"s\":\"y\"}",
        "[1,\"two\",null]", "\"text\"");
    org.apache.arrow.vector.types.pojo.Schema json = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        IcebergArrowSchemas.toArrow(local.loadTable(raw).schema().findField("id")),
        org.apache.arrow.vector.types.pojo.Field.nullable("doc", org.apache.arrow.vector.types.pojo.ArrowType.Utf8.INSTANCE)));
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator, token);
        VectorSchemaRoot root = VectorSchemaRoot.create(json, allocator);
        IngestStream stream = client.open("warehouse", List.of("docs"), "raw", WalOperation.UPSERT, json)) {
      root.allocateNew();
      for (int i = 0; i < docs.size(); i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, i + 1);
        ((VarCharVector) root.getVector(1)).setSafe(i, docs.get(i).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(docs.size());
      stream.send(root).get();
      stream.finish();
    }
    awaitSnapshots(local.loadTable(raw), 1);

    List<JsonNode> results = spark(
        "SELECT id, typeof(doc) AS t, to_json(doc) AS j FROM se.docs.raw ORDER BY id",
        "SELECT id, variant_get(doc, '$.a.b', 'int') AS b, variant_get(doc, '$.s', 'string') AS s FROM se.docs.raw "
            + "WHERE variant_get(doc, '$.s', 'string') IS NOT NULL ORDER BY id");
    for (JsonNode result : results) {
      assertThat(result.has("error")).as("%s", result).isFalse();
    }
    // Spark sees VARIANT and the same JSON the engine's queries return.
    assertThat(rows(results.get(0), "t")).containsOnly("variant");
    List<String> engine = query("SELECT id, doc FROM default.docs.raw ORDER BY id");
    assertThat(engine).containsExactly("1|" + docs.get(0), "2|" + docs.get(1), "3|" + docs.get(2), "4|" + docs.get(3));
    assertThat(rows(results.get(0), "id", "j")).containsExactlyElementsOf(engine);
    assertThat(rows(results.get(1), "id", "b", "s")).containsExactly("1|1|x", "2|-5|y");
    assertThat(query("SELECT id, doc.a.b::INT, doc.s::VARCHAR FROM default.docs.raw WHERE doc.s IS NOT NULL ORDER BY id"))
        .containsExactlyElementsOf(rows(results.get(1), "id", "b", "s"));
  }

  @Test
  void sparkCannotReadTablesWithTheEnginesGeometryAndGeographyColumns() throws Exception {
    Catalog local = server.registry().catalog("warehouse");
    TableIdentifier places = TableIdentifier.of("geo", "places");
    Tables.create(local, places, TableDefinition.builder(
        "id bigint not null, g geometry, geog geography(OGC:CRS84, karney)").build());
    org.apache.arrow.vector.types.pojo.Schema wkt = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        IcebergArrowSchemas.toArrow(local.loadTable(places).schema().findField("id")),
        org.apache.arrow.vector.types.pojo.Field.nullable("g", org.apache.arrow.vector.types.pojo.ArrowType.Utf8.INSTANCE),
        org.apache.arrow.vector.types.pojo.Field.nullable("geog", org.apache.arrow.vector.types.pojo.ArrowType.Utf8.INSTANCE)));
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator, token);
        VectorSchemaRoot root = VectorSchemaRoot.create(wkt, allocator);
        IngestStream stream = client.open("warehouse", List.of("geo"), "places", WalOperation.UPSERT, wkt)) {
      root.allocateNew();
      ((BigIntVector) root.getVector(0)).setSafe(0, 1);
      ((VarCharVector) root.getVector(1)).setSafe(0, "POINT (1 2)".getBytes(StandardCharsets.UTF_8));
      ((VarCharVector) root.getVector(2)).setSafe(0, "POINT (170 -5)".getBytes(StandardCharsets.UTF_8));
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }
    awaitSnapshots(local.loadTable(places), 1);
    // The engine reads the data files it wrote.
    assertThat(query("SELECT id, ST_AsText(g), ST_AsText(geog::GEOMETRY) FROM default.geo.places"))
        .containsExactly("1|POINT (1 2)|POINT (170 -5)");

    Tables.create(local, TableIdentifier.of("geo", "areas"), TableDefinition.builder("id bigint not null, a geography").build());

    // Spark 4.0 has no geospatial type and Iceberg's Spark runtime (1.10) maps none: loading the
    // table fails on its schema, so not even the other columns can be read.
    List<JsonNode> results = spark(
        "SELECT id, g FROM se.geo.places",
        "SELECT id FROM se.geo.places",
        "SELECT id FROM se.geo.areas");
    for (int i = 0; i < 2; i++) {
      assertThat(results.get(i).path("error").asText()).as("%s", results.get(i))
          .isEqualTo("Cannot convert unsupported type to Spark: geometry");
      assertThat(results.get(i).path("causes").toString()).contains("java.lang.UnsupportedOperationException");
    }
    assertThat(results.get(2).path("error").asText()).as("%s", results.get(2))
        .isEqualTo("Cannot convert unsupported type to Spark: geography(OGC:CRS84, spherical)");
  }

  /**
   * Runs the statements in one Spark session in a child JVM against the tenant's facade and
   * returns the driver's JSON line for each, in order.
   */
  private List<JsonNode> spark(String... statements) throws Exception {
    Path work = Files.createDirectories(dir.resolve("spark"));
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    Path stdout = work.resolve("stdout.jsonl");
    Path stderr = work.resolve("stderr.log");
    // A short-lived JVM on a small machine: C1 only halves its CPU time (a first query: 15 s -> 8 s).
    List<String> command = SparkModuleCommand.of(SPARK_MODULE,
        List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx1g", "-Djava.io.tmpdir=" + tmp),
        "io.storageengine.spark.FacadeSqlDriver", List.of("http://127.0.0.1:" + server.port() + "/catalogs/warehouse"));
    ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
        .redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    builder.environment().put("SE_TOKEN", token);
    builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    long started = System.nanoTime();
    Process child = builder.start();
    try {
      child.getOutputStream().write((String.join("\n", statements) + "\n").getBytes(StandardCharsets.UTF_8));
      child.getOutputStream().close();
      boolean exited = child.waitFor(5, TimeUnit.MINUTES);
      assertThat(exited).as("the Spark child exits within 5 minutes; stderr:%n%s", tail(stderr)).isTrue();
      String out = Files.readString(stdout, StandardCharsets.UTF_8);
      assertThat(child.exitValue()).as("Spark child exit code; stdout:%n%s%nstderr:%n%s", out, tail(stderr)).isZero();
      List<JsonNode> results = new ArrayList<>();
      for (String line : out.split("\n")) {
        if (!line.isBlank()) {
          results.add(Json.parse(line.getBytes(StandardCharsets.UTF_8)));
        }
      }
      assertThat(results).as("one line per statement; stderr:%n%s", tail(stderr)).hasSize(statements.length);
      LOG.info("Spark child JVM: {} statements in {} ms", statements.length, (System.nanoTime() - started) / 1_000_000);
      return results;
    } finally {
      child.destroyForcibly();
    }
  }

  private static String tail(Path file) throws IOException {
    if (!Files.exists(file)) {
      return "";
    }
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
  }

  /** The rows of one driver result as {@code a|b|c} strings of the named columns. */
  private static List<String> rows(JsonNode result, String... columns) {
    List<String> rows = new ArrayList<>();
    for (JsonNode row : result.path("rows")) {
      List<String> values = new ArrayList<>();
      for (String column : columns) {
        values.add(row.path(column).asText());
      }
      rows.add(String.join("|", values));
    }
    return rows;
  }

  /** The engine's Flight SQL answer (JDBC driver, with the token) as {@code a|b|c} strings. */
  private List<String> query(String sql) throws Exception {
    Properties props = new Properties();
    props.setProperty("se-query-metadata", "{\"catalog_id\":\"warehouse\"}");
    String url = "jdbc:arrow-flight-sql://127.0.0.1:" + server.port() + "?useEncryption=false&token=" + token;
    List<String> rows = new ArrayList<>();
    try (Connection conn = DriverManager.getConnection(url, props);
        Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> values = new ArrayList<>();
        for (int c = 1; c <= columns; c++) {
          values.add(rs.getString(c));
        }
        rows.add(String.join("|", values));
      }
    }
    return rows;
  }

  private void ingest(Catalog catalog, TableIdentifier id, long[] ids, String[] names, long[] versions) throws Exception {
    Table table = catalog.loadTable(id);
    try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), allocator, token);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("warehouse", List.of(id.namespace().levels()), id.name(),
            WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < ids.length; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, ids[i]);
        ((VarCharVector) root.getVector(1)).setSafe(i, names[i].getBytes(StandardCharsets.UTF_8));
        ((BigIntVector) root.getVector(2)).setSafe(i, versions[i]);
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

  private static List<FileScanTask> tasks(Table table) throws IOException {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
      planned.forEach(tasks::add);
    }
    return tasks;
  }

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .header("Authorization", "Bearer " + BOOTSTRAP)
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}

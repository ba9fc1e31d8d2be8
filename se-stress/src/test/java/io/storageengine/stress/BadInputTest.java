package io.storageengine.stress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.server.ConfigKey;
import io.storageengine.wal.WalOperation;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bad-input suite: malformed and hostile input against a real in-process server. Each case
 * asserts the exact status and the shape of the message (it names the offending field, column or
 * id). After every case the server must still serve ({@code /health}, a fresh stream is
 * acknowledged) and the tables must hold exactly what was acknowledged: nothing lost, nothing
 * rejected written.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
  static final String CATALOG = "warehouse";
  static final List<String> NS = List.of("bad");
  static final Schema EVENTS = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  static final Schema PEOPLE = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("version", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("name", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  /** The server's global in-flight budget: a bigger batch is oversized. */
  static final String MEMORY_LIMIT = "4MiB";

  @TempDir static Path dataDir;
  TestServer server;
  BufferAllocator allocator;
  FlightClient flight;
  IngestClient ingest;
  SqlReader sql;
  /** Ids acknowledged into bad.events, with multiplicity 1 each. */
  final TreeSet<Long> eventIds = new TreeSet<>();
  /** The model of bad.people: id -> name of the acknowledged latest version. */
  final Map<Long, String> people = new TreeMap<>();
  long nextGoodId = 1;
  long nextVersion = 1;

  @BeforeAll
  void startServer() throws Exception {
    server = TestServer.start(dataDir, Map.of(ConfigKey.INGEST_MEMORY_LIMIT, MEMORY_LIMIT));
    allocator = new RootAllocator();
    flight = FlightClient.builder(allocator, server.endpoint.flightLocation()).build();
    ingest = new IngestClient(flight, allocator);
    sql = new SqlReader(allocator, server.endpoint, CATALOG, java.time.Duration.ofSeconds(60));
    try (RESTCatalog catalog = server.endpoint.restCatalog(CATALOG)) {
      Tables.create(catalog, TableIdentifier.of(Namespace.of("bad"), "events"),
          TableDefinition.builder("id bigint not null, name string").build());
      Tables.create(catalog, TableIdentifier.of(Namespace.of("bad"), "people"),
          TableDefinition.builder("id bigint not null, version bigint not null, name string")
              .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("version").build());
    }
    goodEvents(3);
    goodPeople(1, 2, 3);
  }

  @AfterEach
  void serverStillServesAndNothingAcknowledgedIsLost() throws Exception {
    assertThat(server.http("GET", "/health", null, null).statusCode()).isEqualTo(200);
    // A fresh stream is still accepted (the header is acknowledged) ...
    try (IngestStream stream = ingest.open(CATALOG, NS, "events", WalOperation.UPSERT, EVENTS)) {
      stream.finish();
    }
    // ... and the tables hold exactly what was acknowledged so far.
    awaitTablesMatchTheModel();
  }

  @AfterAll
  void stopServer() throws Exception {
    if (sql != null) {
      sql.close(); // closes its own Flight client
    }
    if (flight != null) {
      flight.close();
    }
    if (server != null) {
      server.close();
    }
    if (allocator != null) {
      allocator.close(); // last: a leaked buffer fails the suite
    }
  }

  // ---- Flight: stream header -------------------------------------------------------------

  @Test
  void malformedHeaderJsonIsInvalidArgument() throws Exception {
    assertThat(rawHeader("{\"request_id\":0,")).startsWith("INVALID_ARGUMENT: stream header: invalid JSON: ");
    assertThat(rawHeader("[1,2]")).isEqualTo("INVALID_ARGUMENT: stream header: expected a JSON object");
  }

  @Test
  void headerWithUnknownFieldIsRefusedNamingIt() throws Exception {
    assertThat(rawHeader("{\"request_id\":0,\"catalog\":\"warehouse\",\"namespace\":[\"bad\"],"
        + "\"table_name\":\"events\",\"colour\":\"red\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: unknown field `colour`");
  }

  @Test
  void headerWithoutRequestIdZeroIsRefused() throws Exception {
    assertThat(rawHeader("{\"catalog\":\"warehouse\",\"namespace\":[\"bad\"],\"table_name\":\"events\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: missing field `request_id`");
    assertThat(rawHeader("{\"request_id\":7,\"catalog\":\"warehouse\",\"namespace\":[\"bad\"],"
        + "\"table_name\":\"events\"}"))
        .isEqualTo("INVALID_ARGUMENT: stream header: field `request_id` must be 0, got 7");
  }

  @Test
  void invalidCatalogIdIsInvalidArgument() {
    assertThat(openFailure("Bad!", "events", WalOperation.UPSERT, EVENTS))
        .isEqualTo("INVALID_ARGUMENT: invalid catalog id 'Bad!': must match ^[a-z][a-z0-9_-]{0,62}$");
  }

  @Test
  void unknownCatalogAndTableAreNotFound() {
    assertThat(openFailure("nope", "events", WalOperation.UPSERT, EVENTS))
        .isEqualTo("NOT_FOUND: catalog 'nope' not found");
    assertThat(openFailure(CATALOG, "missing", WalOperation.UPSERT, EVENTS))
        .isEqualTo("NOT_FOUND: table `bad.missing` not found in catalog `warehouse`");
  }

  @Test
  void deleteOnAnAppendTableIsRefused() {
    assertThat(openFailure(CATALOG, "events", WalOperation.DELETE, EVENTS))
        .isEqualTo("INVALID_ARGUMENT: operation `delete`: table `warehouse.bad.events` is an "
            + "append table, which accepts only upsert (append)");
  }

  @Test
  void descriptorThatIsNotAnIngestCommandIsRefused() throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      Listener listener = new Listener();
      FlightClient.ClientStreamListener put = flight.startPut(
          FlightDescriptor.command("not a protobuf Any".getBytes(StandardCharsets.UTF_8)), root, listener);
      put.completed();
      // Arrow's Flight SQL layer answers for descriptors that are no protobuf Any at all.
      assertThat(failureOf(put)).isEqualTo("INVALID_ARGUMENT: Received invalid message from remote.");
    }
  }

  // ---- Flight: batches ---------------------------------------------------------------------

  @Test
  void batchWithRequestIdZeroIsRefused() throws Exception {
    assertThat(rawBatches(9001, "{\"request_id\":0}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: field `request_id` must be > 0 (0 is the header), got 0");
  }

  @Test
  void batchMetadataThatIsMalformedOrMissingIsRefused() throws Exception {
    assertThat(rawBatches(9001, "{\"request_id\":"))
        .startsWith("INVALID_ARGUMENT: batch app_metadata: invalid JSON: ");
    assertThat(rawBatches(9001, "{\"request_id\":1,\"x\":2}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: unknown field `x`");
    assertThat(rawBatches(9001, (String) null))
        .isEqualTo("INVALID_ARGUMENT: record batch without app_metadata: expected {\"request_id\":n}");
  }

  @Test
  void duplicateRequestIdIsRefusedAndTheFirstBatchIsKept() throws Exception {
    long id = nextGoodId++;
    assertThat(rawBatches(id, "{\"request_id\":5}", "{\"request_id\":5}"))
        .isEqualTo("INVALID_ARGUMENT: batch app_metadata: field `request_id` 5 is used twice in this stream");
    // rawBatches sends the same two rows each time: the first (acknowledged) batch stays.
    eventIds.add(id);
    eventIds.add(id + 10_000);
  }

  @Test
  void wrongSchemaUnknownColumnAndTypeMismatchNameTheColumn() {
    Schema unknown = new Schema(List.of(EVENTS.getFields().get(0),
        new Field("colour", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    assertThat(openFailure(CATALOG, "events", WalOperation.UPSERT, unknown))
        .isEqualTo("INVALID_ARGUMENT: column `colour`: not a column of table `warehouse.bad.events`");
    Schema mismatch = new Schema(List.of(
        new Field("id", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));
    assertThat(openFailure(CATALOG, "events", WalOperation.UPSERT, mismatch))
        .isEqualTo("INVALID_ARGUMENT: column `id`: expected long, got utf8");
    Schema missingRequired = new Schema(List.of(EVENTS.getFields().get(1)));
    assertThat(openFailure(CATALOG, "events", WalOperation.UPSERT, missingRequired))
        .isEqualTo("INVALID_ARGUMENT: column `id`: required column missing from the batch");
  }

  @Test
  void missingKeyOrVersionColumnIsRefused() {
    Schema noKey = new Schema(List.of(PEOPLE.getFields().get(1), PEOPLE.getFields().get(2)));
    assertThat(openFailure(CATALOG, "people", WalOperation.UPSERT, noKey))
        .isEqualTo("INVALID_ARGUMENT: column `id`: primary-key column missing from the batch");
    Schema noVersion = new Schema(List.of(PEOPLE.getFields().get(0), PEOPLE.getFields().get(2)));
    assertThat(openFailure(CATALOG, "people", WalOperation.UPSERT, noVersion))
        .isEqualTo("INVALID_ARGUMENT: column `version`: version column missing from the batch");
    assertThat(openFailure(CATALOG, "people", WalOperation.DELETE, PEOPLE))
        .isEqualTo("INVALID_ARGUMENT: column `name`: a delete carries only the primary-key and version columns");
  }

  @Test
  void nullInAKeyColumnFailsTheBatchAndNothingOfItIsWritten() throws Exception {
    Schema nullableKey = new Schema(List.of(
        new Field("id", FieldType.nullable(new ArrowType.Int(64, true)), null),
        PEOPLE.getFields().get(1), PEOPLE.getFields().get(2)));
    try (IngestStream stream = ingest.open(CATALOG, NS, "people", WalOperation.UPSERT, nullableKey);
        VectorSchemaRoot root = VectorSchemaRoot.create(nullableKey, allocator)) {
      root.allocateNew();
      ((BigIntVector) root.getVector("id")).setSafe(0, 900);
      ((BigIntVector) root.getVector("id")).setNull(1);
      ((BigIntVector) root.getVector("version")).setSafe(0, 1_000_000);
      ((BigIntVector) root.getVector("version")).setSafe(1, 1_000_000);
      root.setRowCount(2);
      CompletableFuture<Long> ack = stream.send(root);
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessage("batch request_id 1: column `id`: null at row 1 in a primary-key column");
      assertThat(ack).isCompletedExceptionally();
    }
  }

  @Test
  void oversizedBatchIsResourceExhaustedAndNotWritten() throws Exception {
    try (IngestStream stream = ingest.open(CATALOG, NS, "events", WalOperation.UPSERT, EVENTS);
        VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      root.allocateNew();
      byte[] big = new byte[1024];
      java.util.Arrays.fill(big, (byte) 'x');
      int rows = 6 * 1024; // about 6 MiB: over the 4 MiB budget
      for (int i = 0; i < rows; i++) {
        ((BigIntVector) root.getVector("id")).setSafe(i, 50_000 + i);
        ((VarCharVector) root.getVector("name")).setSafe(i, big);
      }
      root.setRowCount(rows);
      CompletableFuture<Long> ack = stream.send(root);
      assertThatThrownBy(stream::finish)
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED))
          .hasMessageMatching("batch of \\d+ bytes exceeds the server's "
              + "in-flight budget of 4194304 bytes: send smaller batches");
      assertThat(ack).isCompletedExceptionally();
    }
  }

  @Test
  void clientThatDisconnectsMidStreamLosesNothingAcknowledged() throws Exception {
    long first = nextGoodId;
    nextGoodId += 3;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      Listener listener = new Listener();
      FlightClient.ClientStreamListener put = flight.startPut(IngestProtocol.descriptor(), root, listener);
      put.putMetadata(buf(IngestProtocol.encodeHeader(header("events", WalOperation.UPSERT))));
      for (int b = 1; b <= 2; b++) {
        load(root, first + b - 1);
        put.putNext(buf(IngestProtocol.encodeRequestId(b)));
      }
      await(() -> listener.acks.contains(1L) && listener.acks.contains(2L));
      for (long id : new long[] {first, first + 1}) {
        eventIds.add(id);
        eventIds.add(id + 10_000);
      }
      // A third batch, then the client goes away without waiting for its ack.
      load(root, first + 2);
      put.putNext(buf(IngestProtocol.encodeRequestId(3)));
      put.error(CallStatus.CANCELLED.withDescription("client went away").toRuntimeException());
      assertThat(failureOf(put)).startsWith("CANCELLED");
    }
    // The unacknowledged batch may or may not be stored, but never half of it.
    Thread.sleep(1500);
    awaitEvents(ids -> ids.containsAll(eventIds));
    List<Long> ids = eventIdsNow();
    assertThat(ids.contains(first + 2)).as("both rows of the unacknowledged batch or neither")
        .isEqualTo(ids.contains(first + 2 + 10_000));
    if (ids.contains(first + 2)) {
      eventIds.add(first + 2);
      eventIds.add(first + 2 + 10_000);
    }
  }

  // ---- Flight SQL: SQL injection through identifiers --------------------------------------

  @Test
  void sqlInjectionThroughQuotedIdentifiersDoesNotEscapeTheName() {
    assertThat(sqlFailure("SELECT * FROM default.\"bad\".\"events\"\"; DROP TABLE events; --\""))
        .isEqualTo("NOT_FOUND: table default.\"bad\".\"events\"\"; DROP TABLE events; --\" does not exist");
  }

  @Test
  void sqlInjectionWithASecondStatementIsRefused() {
    assertThat(sqlFailure("SELECT id FROM default.\"bad\".events; DROP TABLE default.\"bad\".events"))
        .isEqualTo("INVALID_ARGUMENT: multiple statements are not allowed (found 2): send one query per call");
    assertThat(sqlFailure("SELECT id FROM default.\"bad\".events /* ; */ ; ATTACH 'x.db'"))
        .isEqualTo("INVALID_ARGUMENT: multiple statements are not allowed (found 2): send one query per call");
  }

  @Test
  void commentsAreJustComments() throws Exception {
    Long count = sql.queryLong("SELECT count(*) -- ; DROP TABLE x\nFROM default.\"bad\".events /* ; DELETE */");
    assertThat(count).isNotNull().isPositive();
  }

  @Test
  void sqlInjectionThroughIngestTableNameIsNotFound() {
    assertThat(openFailure(CATALOG, "events\"; DROP TABLE events; --", WalOperation.UPSERT, EVENTS))
        .isEqualTo("NOT_FOUND: table `bad.events\"; DROP TABLE events; --` not found in catalog `warehouse`");
    assertThat(openFailure(CATALOG, "events' OR '1'='1", WalOperation.UPSERT, EVENTS))
        .isEqualTo("NOT_FOUND: table `bad.events' OR '1'='1` not found in catalog `warehouse`");
  }

  // ---- HTTP ------------------------------------------------------------------------------

  @Test
  void catalogApiRefusesWrongContentTypes() throws Exception {
    assertError(server.http("POST", "/catalogs", "text/plain", "{\"catalog_id\":\"x\"}"),
        415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json, got 'text/plain'");
    assertError(server.http("POST", "/catalogs", null, "{\"catalog_id\":\"x\"}"),
        415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json, got none");
  }

  @Test
  void catalogApiRefusesMalformedAndMisshapenBodies() throws Exception {
    HttpResponse<String> invalid = server.http("POST", "/catalogs", "application/json", "{\"catalog_id\":");
    assertThat(invalid.statusCode()).isEqualTo(400);
    JsonNode error = Json.parse(invalid.body().getBytes(StandardCharsets.UTF_8)).path("error");
    assertThat(error.path("code").asText()).isEqualTo("INVALID_JSON");
    assertThat(error.path("message").asText()).startsWith("invalid JSON: ");
    assertError(server.http("POST", "/catalogs", "application/json", "{\"catalog_id\":\"x\"}"),
        422, "UNPROCESSABLE", "missing field 'config'");
    assertError(server.http("POST", "/catalogs", "application/json", "[]"),
        422, "UNPROCESSABLE", "request body must be a JSON object");
  }

  @Test
  void catalogApiRefusesInvalidAndUnknownIds() throws Exception {
    assertError(server.http("GET", "/catalogs/Bad%21", null, null),
        400, "INVALID_ARGUMENT", "invalid catalog id 'Bad!': must match ^[a-z][a-z0-9_-]{0,62}$");
    assertError(server.http("GET", "/catalogs/nope", null, null),
        404, "NOT_FOUND", "catalog 'nope' not found");
    assertThat(server.http("GET", "/catalogs", null, null).statusCode()).isEqualTo(405);
  }

  @Test
  void icebergRestFacadeRefusesMalformedBodiesInItsErrorModel() throws Exception {
    HttpResponse<String> r = server.http("POST", "/catalogs/warehouse/v1/namespaces",
        "application/json", "{\"namespace\":");
    assertThat(r.statusCode()).isEqualTo(400);
    JsonNode error = Json.parse(r.body().getBytes(StandardCharsets.UTF_8)).path("error");
    assertThat(error.path("code").asInt()).isEqualTo(400);
    assertThat(error.path("type").asText()).isEqualTo("BadRequestException");
    assertThat(error.path("message").asText()).isNotBlank();
    HttpResponse<String> missing = server.http("GET", "/catalogs/warehouse/v1/namespaces/bad/tables/nope", null, null);
    assertThat(missing.statusCode()).isEqualTo(404);
    JsonNode notFound = Json.parse(missing.body().getBytes(StandardCharsets.UTF_8)).path("error");
    assertThat(notFound.path("type").asText()).isEqualTo("NoSuchTableException");
    assertThat(notFound.path("message").asText()).contains("bad.nope");
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static void assertError(HttpResponse<String> response, int status, String code, String message) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode error = Json.parse(response.body().getBytes(StandardCharsets.UTF_8)).path("error");
    assertThat(error.path("code").asText()).isEqualTo(code);
    assertThat(error.path("message").asText()).isEqualTo(message);
  }

  /** Appends {@code n} good rows to bad.events and waits for their acks. */
  private void goodEvents(int n) throws Exception {
    try (IngestStream stream = ingest.open(CATALOG, NS, "events", WalOperation.UPSERT, EVENTS);
        VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      root.allocateNew();
      List<Long> ids = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        long id = nextGoodId++;
        ids.add(id);
        ((BigIntVector) root.getVector("id")).setSafe(i, id);
        ((VarCharVector) root.getVector("name")).setSafe(i, ("good " + id).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(n);
      stream.send(root).get(30, TimeUnit.SECONDS);
      stream.finish();
      eventIds.addAll(ids);
    }
  }

  /** Upserts the given people with a new version each and waits for the ack. */
  private void goodPeople(long... ids) throws Exception {
    try (IngestStream stream = ingest.open(CATALOG, NS, "people", WalOperation.UPSERT, PEOPLE);
        VectorSchemaRoot root = VectorSchemaRoot.create(PEOPLE, allocator)) {
      root.allocateNew();
      Map<Long, String> written = new HashMap<>();
      for (int i = 0; i < ids.length; i++) {
        String name = "person " + ids[i] + " v" + nextVersion;
        ((BigIntVector) root.getVector("id")).setSafe(i, ids[i]);
        ((BigIntVector) root.getVector("version")).setSafe(i, nextVersion++);
        ((VarCharVector) root.getVector("name")).setSafe(i, name.getBytes(StandardCharsets.UTF_8));
        written.put(ids[i], name);
      }
      root.setRowCount(ids.length);
      stream.send(root).get(30, TimeUnit.SECONDS);
      stream.finish();
      people.putAll(written);
    }
  }

  private void awaitTablesMatchTheModel() throws Exception {
    awaitEvents(ids -> ids.equals(new ArrayList<>(eventIds)));
    await(() -> {
      Map<Long, String> now = new TreeMap<>();
      long[] rows = {0};
      sql.query("SELECT id, name FROM default.\"bad\".people", root -> {
        for (int i = 0; i < root.getRowCount(); i++) {
          rows[0]++;
          now.put(((BigIntVector) root.getVector("id")).get(i), root.getVector("name").getObject(i).toString());
        }
      });
      return rows[0] == now.size() && now.equals(people);
    });
  }

  private void awaitEvents(java.util.function.Predicate<List<Long>> condition) throws Exception {
    try {
      await(() -> condition.test(eventIdsNow()));
    } catch (AssertionError e) {
      throw new AssertionError("ids in bad.events (sorted, with duplicates): " + eventIdsNow()
          + "; acknowledged: " + eventIds, e);
    }
  }

  /** Ids of bad.events through Flight SQL, sorted, duplicates kept. */
  private List<Long> eventIdsNow() throws Exception {
    List<Long> ids = new ArrayList<>();
    sql.query("SELECT id FROM default.\"bad\".events ORDER BY id", root -> {
      for (int i = 0; i < root.getRowCount(); i++) {
        ids.add(((BigIntVector) root.getVector("id")).get(i));
      }
    });
    return ids;
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  private static void await(Condition condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        if (condition.holds()) {
          return;
        }
      } catch (FlightRuntimeException e) {
        // table without a snapshot yet, or a transient error: look again
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not reached within 30 s");
      }
      Thread.sleep(100);
    }
  }

  private String openFailure(String catalog, String table, WalOperation op, Schema schema) {
    try (IngestStream stream = ingest.open(catalog, NS, table, op, schema)) {
      return "OK";
    } catch (FlightRuntimeException e) {
      return e.status().code() + ": " + e.status().description();
    }
  }

  private String sqlFailure(String query) {
    try {
      sql.query(query, root -> { });
      return "OK";
    } catch (FlightRuntimeException e) {
      return e.status().code() + ": " + e.status().description();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private IngestProtocol.Header header(String table, WalOperation op) {
    return new IngestProtocol.Header(CATALOG, NS, table, op);
  }

  private ArrowBuf buf(byte[] bytes) {
    ArrowBuf buf = allocator.buffer(bytes.length);
    buf.writeBytes(bytes);
    return buf;
  }

  /** Loads the two rows {@code id} and {@code id + 10000} into {@code root}. */
  private void load(VectorSchemaRoot root, long id) {
    try (VectorSchemaRoot data = VectorSchemaRoot.create(EVENTS, allocator)) {
      data.allocateNew();
      ((BigIntVector) data.getVector("id")).setSafe(0, id);
      ((BigIntVector) data.getVector("id")).setSafe(1, id + 10_000);
      ((VarCharVector) data.getVector("name")).setSafe(0, "x".getBytes(StandardCharsets.UTF_8));
      ((VarCharVector) data.getVector("name")).setSafe(1, "y".getBytes(StandardCharsets.UTF_8));
      data.setRowCount(2);
      try (ArrowRecordBatch batch = new VectorUnloader(data).getRecordBatch()) {
        new VectorLoader(root).load(batch);
      }
    }
  }

  /** Sends a raw header and returns "CODE: description" of how the call ended. */
  private String rawHeader(String json) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      FlightClient.ClientStreamListener put = flight.startPut(IngestProtocol.descriptor(), root, new Listener());
      put.putMetadata(buf(json.getBytes(StandardCharsets.UTF_8)));
      put.completed();
      return failureOf(put);
    }
  }

  /** Sends a valid header, then one batch (rows {@code id}, {@code id + 10000}) per metadata. */
  private String rawBatches(long id, String... metadata) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(EVENTS, allocator)) {
      FlightClient.ClientStreamListener put = flight.startPut(IngestProtocol.descriptor(), root, new Listener());
      put.putMetadata(buf(IngestProtocol.encodeHeader(header("events", WalOperation.UPSERT))));
      load(root, id);
      for (String m : metadata) {
        if (m == null) {
          put.putNext();
        } else {
          put.putNext(buf(m.getBytes(StandardCharsets.UTF_8)));
        }
      }
      put.completed();
      return failureOf(put);
    }
  }

  private static String failureOf(FlightClient.ClientStreamListener put) {
    try {
      put.getResult();
      return "OK";
    } catch (FlightRuntimeException e) {
      return e.status().code() + ": " + e.status().description();
    }
  }

  /** Records ack ids; the call's end is observed through {@code ClientStreamListener.getResult}. */
  static final class Listener implements FlightClient.PutListener {
    final List<Long> acks = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    @Override
    public void onNext(PutResult result) {
      ArrowBuf m = result.getApplicationMetadata();
      if (m != null) {
        byte[] bytes = new byte[(int) m.readableBytes()];
        m.getBytes(m.readerIndex(), bytes);
        acks.add(IngestProtocol.parseAck(bytes));
      }
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      done.complete(null);
    }

    @Override
    public void getResult() {
      try {
        done.join();
      } catch (java.util.concurrent.CompletionException e) {
        throw e.getCause() instanceof FlightRuntimeException f ? f
            : CallStatus.UNKNOWN.withCause(e.getCause()).toRuntimeException();
      }
    }

    @Override
    public boolean isCancelled() {
      return done.isDone();
    }
  }
}

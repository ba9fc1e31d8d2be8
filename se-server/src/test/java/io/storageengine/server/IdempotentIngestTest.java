package io.storageengine.server;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IdempotentIngestStream;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotent ingestion (ARCHITECTURE.md 6.1, 6.5) on real servers ({@code se start server}
 * over one data directory) with the real client: each (producer id, sequence) is stored once in
 * the table (Iceberg's reader) and in a query of the WAL tail, whether the resend follows a lost
 * ack, a server restart, a race of two servers, or WAL garbage collection; an idle producer
 * expires; every misuse of the protocol is INVALID_ARGUMENT naming the field.
 */
class IdempotentIngestTest {
  private static final String CATALOG_ID = "tenant1";
  private static final String KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
  private static final TableIdentifier ID = TableIdentifier.of("logs", "events");

  @TempDir Path dir;
  private final List<EngineServer> servers = new ArrayList<>();
  private BufferAllocator engineAllocator;
  private DuckRuntime engineDuckdb;
  private BufferAllocator clientAllocator;
  private Reconciler reconciler;
  private EngineServer server;
  private Catalog catalog;
  private TableWal wal;

  @BeforeEach
  void start() {
    server = startServer(0);
    server.registry().create(CATALOG_ID, CatalogConfig.embedded());
    catalog = server.registry().catalog(CATALOG_ID);
    ((SupportsNamespaces) catalog).createNamespace(ID.namespace());
    engineAllocator = new RootAllocator();
    engineDuckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    clientAllocator = new RootAllocator();
    reconciler = new Reconciler(server.registry(), new ObjectStoreWal(server.store(), "idem-test"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb,
        ReconcileOptions.defaults().withDuckdbThreads(1));
  }

  @AfterEach
  void stop() throws Exception {
    try {
      for (int i = servers.size() - 1; i >= 0; i--) {
        servers.get(i).close();
      }
    } finally {
      engineDuckdb.close();
      engineAllocator.close();
      clientAllocator.close();
    }
  }

  @Test
  void aResendAfterALostAckIsAcknowledgedAgainAndStoredOnce() throws Exception {
    Table table = createTable(null);
    try (IngestClient client = client(server)) {
      try (IngestStream stream = open(client, "orders-0")) {
        send(stream, 0, 0, 2);
        send(stream, 1, 2, 2);
        stream.finish();
        assertThat(stream.duplicates()).isZero();
      }
      // The client never saw the ack of sequence 1 (the connection broke): it resends it.
      try (IngestStream stream = open(client, "orders-0")) {
        send(stream, 1, 2, 2);
        send(stream, 2, 4, 2);
        stream.finish();
        assertThat(stream.duplicates()).isEqualTo(1);
      }
    }
    List<String> expected = rows(0, 6);
    assertThat(query(server)).as("WAL tail before reconcile").containsExactlyInAnyOrderElementsOf(expected);
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void aRestartedServerRecognisesAResendWithoutWritingAgain() throws Exception {
    Table table = createTable(null);
    try (IngestClient client = client(server); IngestStream stream = open(client, "p")) {
      send(stream, 7, 0, 1);
      stream.finish();
    }
    long segments = segmentCount(table);
    server = restart(server);
    try (IngestClient client = client(server); IngestStream stream = open(client, "p")) {
      send(stream, 7, 0, 1);
      stream.finish();
      assertThat(stream.duplicates()).isEqualTo(1);
    }
    assertThat(segmentCount(table)).as("nothing written again").isEqualTo(segments);
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(rows(0, 1));
  }

  @Test
  void twoServersRacingOneProducersSequencesStoreEachRowOnce() throws Exception {
    Table table = createTable(null);
    EngineServer second = startServer(0);
    try (IngestClient a = client(server); IngestClient b = client(second);
        IngestStream first = open(a, "racer"); IngestStream other = open(b, "racer")) {
      // Both servers caught up before either wrote, so neither knows the other's batches:
      // both write every sequence, and readers must skip the second copies.
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      for (int s = 0; s < 5; s++) {
        acks.add(sendAsync(first, (long) s, 10 * s, 3));
        acks.add(sendAsync(other, (long) s, 10 * s, 3));
      }
      for (CompletableFuture<Long> ack : acks) {
        ack.get();
      }
      first.finish();
      other.finish();
    }
    List<String> expected = new ArrayList<>();
    for (int s = 0; s < 5; s++) {
      expected.addAll(rows(10 * s, 3));
    }
    assertThat(query(server)).as("WAL tail of the first server").containsExactlyInAnyOrderElementsOf(expected);
    assertThat(query(second)).as("WAL tail of the second server").containsExactlyInAnyOrderElementsOf(expected);
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(query(server)).as("after reconcile").containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void aResendIsRecognisedAfterReconcileAndWalGarbageCollection() throws Exception {
    Table table = createTable(null);
    try (IngestClient client = client(server); IngestStream stream = open(client, "gc")) {
      for (int s = 0; s < 4; s++) {
        send(stream, s, 2 * s, 2);
      }
      stream.finish();
    }
    reconcile(table);
    ObjectStoreWal walLog = new ObjectStoreWal(server.store(), "gc-test");
    long published = walLog.state(wal).publishedSeq();
    assertThat(walLog.collectGarbage(wal, published, Duration.ofDays(7))).isPositive();
    assertThat(walLog.segmentsAfter(wal, 0)).isEmpty();

    server = restart(server); // no memory of the producer but what the WAL's storage holds
    try (IngestClient client = client(server); IngestStream stream = open(client, "gc")) {
      send(stream, 1, 2, 2);
      send(stream, 4, 8, 2);
      stream.finish();
      assertThat(stream.duplicates()).isEqualTo(1);
    }
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(rows(0, 10));
  }

  @Test
  void anIdleProducerExpiresAndItsResendIsWrittenAgain() throws Exception {
    Table table = createTable("1000");
    try (IngestClient client = client(server)) {
      try (IngestStream stream = open(client, "sleepy")) {
        send(stream, 0, 0, 1);
        stream.finish();
      }
      Thread.sleep(1_500);
      try (IngestStream stream = open(client, "sleepy")) {
        send(stream, 0, 0, 1);
        stream.finish();
        assertThat(stream.duplicates()).as("forgotten after se.producer-retention").isZero();
      }
    }
    reconcile(table);
    assertThat(icebergRows()).containsExactly("0|n0", "0|n0");
  }

  @Test
  void aReplayedUpsertNeverResurrectsADeletedEntity() throws Exception {
    Table table = catalog.buildTable(ID, new Schema(List.of(required(1, "id", Types.LongType.get()),
            optional(2, "name", Types.StringType.get())), java.util.Set.of(1)))
        .withProperty("format-version", "3").withProperty(TableProperties.MODE, "entity").create();
    wal = new TableWal(CATALOG_ID, table.uuid());
    try (IngestClient client = client(server)) {
      try (IngestStream stream = open(client, "cdc")) {
        send(stream, 0, 0, 2);
        stream.finish();
      }
      try (IngestStream deletes = client.open(new IngestProtocol.Header(CATALOG_ID, List.of("logs"), "events",
          WalOperation.DELETE, "cdc"), keyOnlySchema(), IngestClient.DEFAULT_MAX_IN_FLIGHT)) {
        try (VectorSchemaRoot root = VectorSchemaRoot.create(keyOnlySchema(), clientAllocator)) {
          root.allocateNew();
          ((BigIntVector) root.getVector("id")).setSafe(0, 0);
          root.setRowCount(1);
          deletes.send(root, 1L).get();
        }
        deletes.finish();
      }
      try (IngestStream stream = open(client, "cdc")) {
        send(stream, 0, 0, 2); // the upsert replayed after the delete
        stream.finish();
        assertThat(stream.duplicates()).isEqualTo(1);
      }
    }
    assertThat(query(server)).containsExactly("1|n1");
    reconcile(table);
    assertThat(icebergRows()).containsExactly("1|n1");
  }

  @Test
  void theIdempotentClientResendsWhatAServerRestartLeftUnacknowledged() throws Exception {
    Table table = createTable(null);
    int port = server.port();
    try (IngestClient client = client(server);
        VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), clientAllocator);
        IdempotentIngestStream stream = client.openIdempotent(new IngestProtocol.Header(CATALOG_ID,
            List.of("logs"), "events", WalOperation.UPSERT, "resender"), arrowSchema(),
            IngestClient.DEFAULT_MAX_IN_FLIGHT, 50, Duration.ofMillis(100))) {
      List<CompletableFuture<Long>> acks = new ArrayList<>();
      for (int s = 0; s < 40; s++) {
        if (s == 20) {
          server = restart(server, port); // acks of batches in flight are lost
        }
        fill(root, 3 * s, 3);
        acks.add(stream.send(root));
      }
      stream.finish();
      for (CompletableFuture<Long> ack : acks) {
        assertThat(ack).isDone();
        ack.get();
      }
      assertThat(stream.reconnects()).isPositive();
    }
    List<String> expected = rows(0, 120);
    assertThat(query(server)).containsExactlyInAnyOrderElementsOf(expected);
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void everyMisuseIsInvalidArgumentNamingTheField() throws Exception {
    createTable(null);
    try (IngestClient client = client(server)) {
      try (IngestStream plain = client.open(CATALOG_ID, List.of("logs"), "events", WalOperation.UPSERT,
          arrowSchema())) {
        assertRefused(() -> sendAsync(plain, 3L, 0, 1).get(), "field `sequence` needs a stream with a producer id");
      }
      try (IngestStream stream = open(client, "p")) {
        assertRefused(() -> sendAsync(stream, null, 0, 1).get(), "missing field `sequence`");
      }
      try (IngestStream stream = open(client, "p")) {
        assertRefused(() -> sendAsync(stream, -1L, 0, 1).get(), "field `sequence` must be >= 0");
      }
    }
    assertHeaderRefused("\"producer_id\":\"\"", "field `producer_id` must be a non-empty string");
    assertHeaderRefused("\"producer_id\":7", "field `producer_id` must be a string");
    assertHeaderRefused("\"producer_id\":\"has space\"", "field `producer_id` must start with a letter or digit");
    assertHeaderRefused("\"producer_id\":\"" + "x".repeat(129) + "\"", "field `producer_id` must be at most 128");
  }

  @Test
  void aResentBulkIngestStatementIsNotWrittenAgain() throws Exception {
    Table table = createTable(null);
    try (FlightClient flight = FlightClient.builder(clientAllocator, location(server)).build();
        FlightSqlClient sql = new FlightSqlClient(flight);
        VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), clientAllocator)) {
      fill(root, 0, 3);
      Map<String, String> idempotent = Map.of("se.producer-id", "loader", "se.sequence", "5");
      assertThat(sql.executeIngest(root, ingestOptions(idempotent))).isEqualTo(3);
      long segments = segmentCount(table);
      assertThat(sql.executeIngest(root, ingestOptions(idempotent))).as("counts the rows durable before").isEqualTo(3);
      assertThat(segmentCount(table)).isEqualTo(segments);

      for (Map.Entry<Map<String, String>, String> misuse : Map.of(
          Map.of("se.sequence", "1"), "option `se.sequence` needs option `se.producer-id`",
          Map.of("se.producer-id", "loader"), "option `se.sequence`: required",
          Map.of("se.producer-id", "loader", "se.sequence", "-2"), "option `se.sequence` must be >= 0",
          Map.of("se.producer-id", "loader", "se.sequence", "x"), "option `se.sequence` must be an integer",
          Map.of("se.producer-id", "no spaces", "se.sequence", "1"), "option `se.producer-id` must start with")
          .entrySet()) {
        assertThatThrownBy(() -> sql.executeIngest(root, ingestOptions(misuse.getKey())))
            .isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
            .hasMessageContaining(misuse.getValue());
      }
    }
    reconcile(table);
    assertThat(icebergRows()).containsExactlyInAnyOrderElementsOf(rows(0, 3));
  }

  private static FlightSqlClient.ExecuteIngestOptions ingestOptions(Map<String, String> options) {
    return new FlightSqlClient.ExecuteIngestOptions("events", TableDefinitionOptions.newBuilder()
        .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL)
        .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build(),
        CATALOG_ID, "logs", options);
  }

  private void assertHeaderRefused(String producerField, String message) throws Exception {
    String header = "{\"request_id\":0,\"catalog\":\"" + CATALOG_ID + "\",\"namespace\":[\"logs\"],"
        + "\"table_name\":\"events\"," + producerField + "}";
    try (FlightClient flight = FlightClient.builder(clientAllocator, location(server)).build();
        VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), clientAllocator)) {
      SyncPutListener listener = new SyncPutListener();
      FlightClient.ClientStreamListener put = flight.startPut(IngestProtocol.descriptor(), root, listener);
      byte[] bytes = header.getBytes(StandardCharsets.UTF_8);
      ArrowBuf buf = clientAllocator.buffer(bytes.length);
      buf.writeBytes(bytes);
      put.putMetadata(buf);
      put.completed();
      assertThatThrownBy(put::getResult).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining(message);
      listener.close();
    }
  }

  private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
    assertThatThrownBy(call).hasRootCauseInstanceOf(FlightRuntimeException.class)
        .rootCause().hasMessageContaining(message)
        .satisfies(e -> assertThat(((FlightRuntimeException) e).status().code())
            .isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
  }

  private EngineServer startServer(int port) {
    EngineServer started = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:" + port)
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "10ms")
        .with(ConfigKey.SECRET_STORE_KEY, KEY)
        .with(AuthConfig.MODE, "none"), Role.SERVER);
    servers.add(started);
    return started;
  }

  private EngineServer restart(EngineServer old) {
    return restart(old, 0);
  }

  /** Closes {@code old} and starts a server on the same data directory and {@code port} (0: any). */
  private EngineServer restart(EngineServer old, int port) {
    servers.remove(old);
    old.close();
    EngineServer fresh = startServer(port);
    catalog = fresh.registry().catalog(CATALOG_ID);
    reconciler = new Reconciler(fresh.registry(), new ObjectStoreWal(fresh.store(), "idem-test"),
        fresh.store(), fresh.context().tombstones(), engineAllocator, engineDuckdb,
        ReconcileOptions.defaults().withDuckdbThreads(1));
    return fresh;
  }

  private Table createTable(String producerRetention) {
    Catalog.TableBuilder builder = catalog.buildTable(ID, new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get())));
    if (producerRetention != null) {
      builder.withProperty(TableProperties.PRODUCER_RETENTION, producerRetention);
    }
    Table table = builder.create();
    wal = new TableWal(CATALOG_ID, table.uuid());
    return table;
  }

  private void reconcile(Table table) {
    assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
  }

  private long segmentCount(Table table) {
    return new ObjectStoreWal(server.store(), "count").segmentsAfter(wal, 0).size();
  }

  private IngestClient client(EngineServer target) {
    return IngestClient.connect(location(target), clientAllocator);
  }

  private static Location location(EngineServer target) {
    return Location.forGrpcInsecure("127.0.0.1", target.port());
  }

  private IngestStream open(IngestClient client, String producer) {
    return client.open(new IngestProtocol.Header(CATALOG_ID, List.of("logs"), "events", WalOperation.UPSERT,
        producer), arrowSchema(), IngestClient.DEFAULT_MAX_IN_FLIGHT);
  }

  private org.apache.arrow.vector.types.pojo.Schema arrowSchema() {
    return IcebergArrowSchemas.toArrow(catalog.loadTable(ID).schema());
  }

  private org.apache.arrow.vector.types.pojo.Schema keyOnlySchema() {
    return new org.apache.arrow.vector.types.pojo.Schema(
        List.of(IcebergArrowSchemas.toArrow(catalog.loadTable(ID).schema().findField("id"))));
  }

  /** Sends rows {@code firstId .. firstId + rows - 1} as the batch {@code sequence} and waits for its ack. */
  private void send(IngestStream stream, long sequence, long firstId, int rows) throws Exception {
    sendAsync(stream, sequence, firstId, rows).get();
  }

  private CompletableFuture<Long> sendAsync(IngestStream stream, Long sequence, long firstId, int rows)
      throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), clientAllocator)) {
      fill(root, firstId, rows);
      return stream.send(root, sequence);
    }
  }

  private static void fill(VectorSchemaRoot root, long firstId, int rows) {
    root.allocateNew();
    for (int i = 0; i < rows; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, firstId + i);
      ((VarCharVector) root.getVector("name")).setSafe(i, ("n" + (firstId + i)).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(rows);
  }

  private static List<String> rows(long firstId, int count) {
    List<String> out = new ArrayList<>();
    for (long id = firstId; id < firstId + count; id++) {
      out.add(id + "|n" + id);
    }
    return out;
  }

  private List<String> icebergRows() throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(ID)).build()) {
      for (Record r : records) {
        out.add(r.getField("id") + "|" + r.getField("name"));
      }
    }
    Collections.sort(out);
    return out;
  }

  /** Every row of the table through {@code target}'s Flight SQL, snapshot plus WAL tail. */
  private List<String> query(EngineServer target) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG_ID + "\"}");
    HeaderCallOption option = new HeaderCallOption(headers);
    List<String> out = new ArrayList<>();
    try (FlightClient flight = FlightClient.builder(clientAllocator, location(target)).build();
        FlightSqlClient sql = new FlightSqlClient(flight)) {
      FlightInfo info = sql.execute("SELECT id, name FROM logs.events", option);
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          for (int i = 0; i < root.getRowCount(); i++) {
            out.add(root.getVector(0).getObject(i) + "|" + root.getVector(1).getObject(i));
          }
        }
      }
    }
    return out;
  }
}

package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshot expiry racing Flight SQL reads of the snapshot being expired, through a real server,
 * a real Flight SQL client, real reconciliation and real maintenance passes.
 *
 * <p>The semantics pinned here: {@code GetFlightInfo} pins the snapshot a query reads and
 * {@code DoGet} reads exactly that snapshot, or fails; it never returns other rows.
 * <ul>
 *   <li>With the default policy (snapshots younger than an hour kept, and the ten newest) a
 *       planned query returns exactly its snapshot's rows whatever maintenance does meanwhile:
 *       compaction replaces the snapshot's files in a newer snapshot, but expiry keeps the pinned
 *       snapshot and so deletes none of its files, and orphan cleanup (even with age 0) deletes
 *       only files that no retained snapshot references.</li>
 *   <li>With an aggressive policy (retention 0, one snapshot kept) the pinned snapshot really is
 *       expired and its files deleted before {@code DoGet}. {@code DoGet} then fails with Flight
 *       {@code NOT_FOUND}, naming the table and the snapshot and telling the user to re-run the
 *       query; never partial or wrong rows, never a server path. The same holds for the ticket
 *       planned again from its pin (no hand-off from {@code GetFlightInfo}).</li>
 *   <li>A read already streaming when the files are deleted either completes with exactly the
 *       snapshot's rows or ends with that same clean error after some batches, never a short
 *       result without an error. Observed: it completes (DuckDB opens a query's files when
 *       execution starts, and an open local file survives its deletion).</li>
 * </ul>
 * The server runs as {@link Role#SERVER}, so nothing reconciles or maintains behind the test's
 * back: every commit is the test's own, which makes the races deterministic. The tests share the
 * server; each has its own table.
 */
class ExpiryRaceTest {
  private static final String CATALOG_ID = "warehouse";
  private static final AtomicInteger TABLES = new AtomicInteger();

  @TempDir static Path dir;
  private static EngineServer server;
  private static BufferAllocator engineAllocator;
  private static DuckRuntime engineDuckdb;
  private static BufferAllocator clientAllocator;
  private static Catalog catalog;
  private static Reconciler reconciler;
  private static FlightSqlClient sql;
  private static IngestClient ingest;

  /** This test's own table, so the tests share one server. */
  private TableIdentifier tableId;
  private TableWal tableWal;
  private String displayName;
  private String selectIds;

  @BeforeAll
  static void startServer() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "10ms")
        // se start roles write catalogs only with a secret-store key (se dev generates one).
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        // se start roles default to --auth.mode tokens; the test calls without credentials, on loopback.
        .with(AuthConfig.MODE, "none"), Role.SERVER);
    server.registry().create(CATALOG_ID, CatalogConfig.embedded());
    catalog = server.registry().catalog(CATALOG_ID);
    engineAllocator = new RootAllocator();
    engineDuckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    clientAllocator = new RootAllocator();
    reconciler = new Reconciler(server.registry(), new ObjectStoreWal(server.store(), "expiry-race-test"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb, options());
    Location location = Location.forGrpcInsecure("127.0.0.1", server.port());
    sql = new FlightSqlClient(FlightClient.builder(clientAllocator, location).build());
    ingest = IngestClient.connect(location, clientAllocator);
  }

  @AfterAll
  static void stopServer() throws Exception {
    try {
      if (ingest != null) {
        ingest.close();
      }
      if (sql != null) {
        sql.close();
      }
      if (server != null) {
        server.close();
      }
    } finally {
      if (engineDuckdb != null) {
        engineDuckdb.close();
      }
      // Allocators last: a leaked Arrow buffer fails the test here.
      if (engineAllocator != null) {
        engineAllocator.close();
      }
      if (clientAllocator != null) {
        clientAllocator.close();
      }
    }
  }

  @BeforeEach
  void createTable() {
    String name = "events_" + TABLES.incrementAndGet();
    tableId = TableIdentifier.of("race", name);
    Table table = Tables.create(catalog, tableId, TableDefinition.builder("id bigint not null, payload string").build());
    tableWal = new TableWal(CATALOG_ID, table.uuid());
    displayName = "default.\"race\".\"" + name + "\"";
    selectIds = "SELECT id FROM default.race." + name;
  }

  // ---------------------------------------------------------------- deterministic races

  @Test
  void defaultPolicyKeepsThePinnedSnapshotReadableThroughCompactionExpiryAndOrphanCleanup() throws Exception {
    for (int batch = 0; batch < MaintenancePolicy.DEFAULT_MIN_INPUT_FILES; batch++) {
      append(batch * 100L, 100, 10);
    }
    long pinned = currentSnapshotId();
    List<Path> pinnedFiles = dataFiles(pinned);
    FlightInfo planned = sql.execute(selectIds, tenant());

    append(500, 100, 10); // committed after planning: must not show up in the planned result
    MaintenanceResult result = maintainer(defaultPolicyWithOrphanAgeZero()).maintain(CATALOG_ID, tableId);

    assertThat(result.errors()).isEmpty();
    assertThat(result.compaction().dataFilesRemoved()).as("compaction rewrote the pinned files").isGreaterThanOrEqualTo(5);
    assertThat(result.snapshotsExpired()).as("the default retention keeps recent snapshots").isZero();
    assertThat(currentSnapshotId()).isNotEqualTo(pinned);
    assertThat(pinnedFiles).as("files of the retained snapshot stay").allMatch(Files::exists);

    Ticket ticket = planned.getEndpoints().get(0).getTicket();
    assertThat(fetchIds(ticket)).as("DoGet of the planned query").containsExactlyElementsOf(range(0, 500));
    // The same ticket again is planned afresh from the pin (no hand-off): still exactly the snapshot.
    assertThat(fetchIds(ticket)).as("DoGet re-planned from the ticket's pin").containsExactlyElementsOf(range(0, 500));
    assertThat(query(selectIds)).as("a new query sees the current snapshot").containsExactlyElementsOf(range(0, 600));
  }

  @Test
  void aggressiveExpiryBetweenPlanAndFetchReadsThePinnedSnapshotOrFailsWithACleanNotFound() throws Exception {
    append(0, 100, 10);
    append(100, 100, 10);
    long pinned = currentSnapshotId();
    List<Path> pinnedFiles = dataFiles(pinned);
    FlightInfo planned = sql.execute(selectIds, tenant());

    MaintenanceResult result = maintainer(aggressivePolicy()).maintain(CATALOG_ID, tableId);

    assertThat(result.errors()).isEmpty();
    assertThat(result.compaction().dataFilesRemoved()).isEqualTo(2);
    assertThat(result.snapshotsExpired()).isGreaterThanOrEqualTo(2);
    assertThat(snapshotExists(pinned)).isFalse();
    assertThat(pinnedFiles).as("expiry deleted the pinned snapshot's files").noneMatch(Files::exists);

    Ticket ticket = planned.getEndpoints().get(0).getTicket();
    // The query GetFlightInfo planned and started, handed to DoGet: it had read its files
    // before expiry deleted them, so it streams exactly the pinned snapshot.
    assertThat(fetchIds(ticket)).containsExactlyElementsOf(range(0, 200));
    // The ticket planned again from its pin: the snapshot is gone from the table metadata.
    assertThatThrownBy(() -> fetchIds(ticket)).satisfies(expiredError(pinned));
    // Re-running the query, as the message says, reads the compacted current snapshot.
    assertThat(query(selectIds)).containsExactlyElementsOf(range(0, 200));
  }

  @Test
  void expiryWhileTheResultIsStreamingEitherCompletesExactlyOrFailsCleanly() throws Exception {
    // Several files and many batches; no ORDER BY, which would read everything before the
    // first batch. Observed: DuckDB opens the files when execution starts and an open file
    // survives its deletion, so the read completes.
    int files = 4;
    int rowsPerFile = 10_000;
    for (int f = 0; f < files; f++) {
      append((long) f * rowsPerFile, rowsPerFile, 100);
    }
    long pinned = currentSnapshotId();
    long expected = (long) files * rowsPerFile;
    FlightInfo planned = sql.execute("SELECT id, payload FROM default.race." + tableId.name(), tenant());

    List<Long> ids = new ArrayList<>();
    FlightRuntimeException failure = null;
    try (FlightStream stream = sql.getStream(planned.getEndpoints().get(0).getTicket(), tenant())) {
      assertThat(stream.next()).isTrue();
      collect(stream.getRoot(), ids);
      assertThat((long) ids.size()).as("the read has started, not finished").isLessThan(expected);

      MaintenanceResult result = maintainer(aggressivePolicy()).maintain(CATALOG_ID, tableId);
      assertThat(result.errors()).isEmpty();
      assertThat(snapshotExists(pinned)).isFalse();

      while (stream.next()) {
        collect(stream.getRoot(), ids);
      }
    } catch (FlightRuntimeException e) {
      failure = e;
    }
    ids.sort(null);
    if (failure == null) {
      assertThat(ids).as("a completed stream is the whole snapshot").containsExactlyElementsOf(range(0, expected));
    } else {
      assertThat(failure).satisfies(expiredError(pinned));
      assertThat((long) ids.size()).as("an interrupted stream is reported, not short").isLessThan(expected);
    }
    assertThat(query("SELECT count(*) FROM default.race." + tableId.name())).containsExactly(expected);
  }

  // ---------------------------------------------------------------- randomized race

  @Test
  void readersRacingIngestReconcileCompactionAndAggressiveExpiryGetExactSnapshotsOrTheCleanError() throws Exception {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    Maintainer aggressive = maintainer(aggressivePolicy());
    // Row counts of every snapshot that may exist (announced before the reconcile that commits
    // it): a correct read returns ids 0..n-1 for one of them, each exactly once.
    Set<Long> snapshotSizes = ConcurrentHashMap.newKeySet();
    snapshotSizes.add(0L);
    AtomicLong committedRows = new AtomicLong();
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger exact = new AtomicInteger();
    AtomicInteger expired = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "expiry-race");
      t.setDaemon(true);
      return t;
    });
    try {
      Future<?> reader = threads.submit(() -> {
        Random readerRandom = new Random(seed + 1);
        while (!done.get()) {
          long atLeast = committedRows.get();
          List<Long> ids;
          try {
            FlightInfo planned = sql.execute(selectIds, tenant());
            // Mostly prompt fetches; some wait long enough for a maintenance pass to run between
            // GetFlightInfo and DoGet.
            Thread.sleep(readerRandom.nextInt(10) < 7 ? readerRandom.nextInt(50) : 300 + readerRandom.nextInt(700));
            ids = fetchIds(planned.getEndpoints().get(0).getTicket());
          } catch (FlightRuntimeException e) {
            assertThat(e).satisfies(expiredError(null));
            expired.incrementAndGet();
            continue;
          }
          assertThat((long) ids.size()).as("seed %d: rows of a snapshot", seed).isIn(snapshotSizes)
              .isGreaterThanOrEqualTo(atLeast);
          assertThat(ids).as("seed %d: each row of the snapshot once", seed).containsExactlyElementsOf(range(0, ids.size()));
          exact.incrementAndGet();
        }
        return null;
      });
      Future<?> writer = threads.submit(() -> {
        try {
          long rows = 0;
          for (int i = 0; i < 20; i++) {
            int n = 1 + random.nextInt(300);
            snapshotSizes.add(rows + n);
            append(rows, n, 10);
            rows += n;
            committedRows.set(rows);
            if (random.nextInt(3) > 0) {
              MaintenanceResult result = aggressive.maintain(CATALOG_ID, tableId);
              assertThat(result.errors()).as("seed %d", seed).isEmpty();
            }
          }
        } finally {
          done.set(true);
        }
        return null;
      });
      writer.get(60, TimeUnit.SECONDS);
      reader.get(60, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
    assertThat(exact.get()).as("seed %d: reads that returned a whole snapshot", seed).isPositive();
    assertThat(query("SELECT count(*) FROM default.race." + tableId.name())).containsExactly(committedRows.get());
    System.out.printf("ExpiryRaceTest seed %d: %d exact reads, %d clean expired errors%n", seed, exact.get(), expired.get());
  }

  // ---------------------------------------------------------------- helpers

  /** The clean error of a query whose snapshot was expired: NOT_FOUND, table, snapshot, re-run, no path. */
  private Consumer<Throwable> expiredError(Long snapshotId) {
    return error -> {
      assertThat(error).isInstanceOf(FlightRuntimeException.class);
      FlightRuntimeException flightError = (FlightRuntimeException) error;
      String message = flightError.status().description();
      assertThat(flightError.status().code()).as("status of: %s", message).isEqualTo(FlightStatusCode.NOT_FOUND);
      assertThat(message).contains("table " + displayName).contains("re-run the query")
          .doesNotContain(dir.toString()).doesNotContain(".parquet").doesNotContain("Exception");
      if (snapshotId != null) {
        assertThat(message).contains("snapshot " + snapshotId);
      }
    };
  }

  private static ReconcileOptions options() {
    return ReconcileOptions.defaults().withDuckdbThreads(1);
  }

  private Maintainer maintainer(MaintenancePolicy policy) {
    return new Maintainer(server.registry(), new ObjectStoreWal(server.store(), "expiry-race-maintainer"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb, options(), policy);
  }

  /** The shipped defaults, but orphan cleanup deletes any unreferenced file at once. */
  private static MaintenancePolicy defaultPolicyWithOrphanAgeZero() {
    MaintenancePolicy d = MaintenancePolicy.defaults();
    return new MaintenancePolicy(true, d.targetFileSizeBytes(), d.minInputFiles(), d.deleteRatio(),
        d.snapshotRetention(), d.minSnapshots(), Duration.ZERO, d.walGcAge(), d.maxManifests());
  }

  /** Expires every snapshot but the current one and deletes unreferenced files at once. */
  private static MaintenancePolicy aggressivePolicy() {
    MaintenancePolicy d = MaintenancePolicy.defaults();
    return new MaintenancePolicy(true, d.targetFileSizeBytes(), 2, d.deleteRatio(),
        Duration.ZERO, 1, Duration.ZERO, d.walGcAge(), d.maxManifests());
  }

  /** Ingests ids {@code first..first+rows-1} over Flight and reconciles them into one snapshot. */
  private void append(long first, int rows, int payloadChars) throws Exception {
    Table table = catalog.loadTable(tableId);
    String payload = "x".repeat(payloadChars);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("race"), tableId.name(), WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      BigIntVector id = (BigIntVector) root.getVector(0);
      VarCharVector text = (VarCharVector) root.getVector(1);
      for (int i = 0; i < rows; i++) {
        id.setSafe(i, first + i);
        text.setSafe(i, payload.getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      stream.send(root).get();
      stream.finish();
    }
    ReconcileResult result = reconciler.reconcile(tableWal);
    assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
  }

  private long currentSnapshotId() {
    return catalog.loadTable(tableId).currentSnapshot().snapshotId();
  }

  private boolean snapshotExists(long snapshotId) {
    return catalog.loadTable(tableId).snapshot(snapshotId) != null;
  }

  /** Local paths of the data files {@code snapshotId} reads. */
  private List<Path> dataFiles(long snapshotId) throws Exception {
    List<Path> paths = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = catalog.loadTable(tableId).newScan().useSnapshot(snapshotId).planFiles()) {
      tasks.forEach(task -> paths.add(Path.of(URI.create(task.file().location()).getPath())));
    }
    assertThat(paths).isNotEmpty();
    return paths;
  }

  private List<Long> query(String query) throws Exception {
    return fetchIds(sql.execute(query, tenant()).getEndpoints().get(0).getTicket());
  }

  /** All values of the first (bigint) column, read to the end of the stream, sorted. */
  private List<Long> fetchIds(Ticket ticket) throws Exception {
    List<Long> values = new ArrayList<>();
    try (FlightStream stream = sql.getStream(ticket, tenant())) {
      while (stream.next()) {
        collect(stream.getRoot(), values);
      }
    }
    values.sort(null);
    return values;
  }

  private static void collect(VectorSchemaRoot root, List<Long> into) {
    BigIntVector column = (BigIntVector) root.getVector(0);
    for (int i = 0; i < root.getRowCount(); i++) {
      into.add(column.get(i));
    }
  }

  private static List<Long> range(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  private static HeaderCallOption tenant() {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG_ID + "\"}");
    return new HeaderCallOption(headers);
  }
}

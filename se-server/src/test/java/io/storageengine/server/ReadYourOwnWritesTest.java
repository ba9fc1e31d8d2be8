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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.GetSessionOptionsRequest;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.SetSessionOptionsResult;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.client.ClientCookieMiddleware;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
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
 * Queries read their own writes: on {@code se start server}, which runs no reconciler, a query
 * reads the table's snapshot plus the acknowledged WAL segments after its {@code se.wal.seq}, and
 * the result equals what the snapshot holds once a reconcile pass committed them (checked against
 * a model and against Iceberg's own reader); a session that asks for snapshot reads sees the
 * snapshot only.
 */
class ReadYourOwnWritesTest {
  static final String CATALOG_ID = "tenant1";
  static final String LATEST = "{\"catalog_id\":\"" + CATALOG_ID + "\"}";
  static final String SNAPSHOT = "{\"catalog_id\":\"" + CATALOG_ID + "\",\"read\":\"snapshot\"}";

  @TempDir Path dir;
  private EngineServer server;
  private BufferAllocator engineAllocator;
  private DuckRuntime engineDuckdb;
  private BufferAllocator clientAllocator;
  private Catalog catalog;
  private Reconciler reconciler;
  private IngestClient ingest;

  @BeforeEach
  void start() {
    start(ServerConfig.defaults(), dir);
  }

  private void start(ServerConfig base, Path dataDir) {
    server = EngineServer.start(base
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dataDir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "10ms")
        // The tests check which path each read takes (a point query's own fold, the kept fold):
        // no fold grows between them but by the reads themselves.
        .with(io.storageengine.query.QueryConfig.TAIL_WARM_INTERVAL, "0ms")
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.MODE, "none"), Role.SERVER);
    server.registry().create(CATALOG_ID, CatalogConfig.embedded());
    catalog = server.registry().catalog(CATALOG_ID);
    engineAllocator = new RootAllocator();
    engineDuckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    clientAllocator = new RootAllocator();
    reconciler = new Reconciler(server.registry(), new ObjectStoreWal(server.store(), "union-test"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb,
        ReconcileOptions.defaults().withDuckdbThreads(1));
    ingest = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()), clientAllocator);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      ingest.close();
      server.close();
    } finally {
      engineDuckdb.close();
      engineAllocator.close();
      clientAllocator.close();
    }
  }

  @Test
  void appendTableReadsTheWalTailAndEqualsTheReconciledSnapshotThroughASchemaChange() throws Exception {
    TableIdentifier id = TableIdentifier.of("logs", "events");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get()))).withProperty("format-version", "3").create();
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    Random random = new Random(19);
    List<String> model = new ArrayList<>();
    List<String> reconciled = new ArrayList<>();
    boolean evolved = false;
    long nextId = 0;
    for (int round = 0; round < 6; round++) {
      // One to three segments per round, some rows with null names.
      int segments = 1 + random.nextInt(3);
      for (int s = 0; s < segments; s++) {
        int rows = 1 + random.nextInt(50);
        List<Object[]> batch = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
          long key = nextId++;
          String text = random.nextInt(5) == 0 ? null : "r" + round + "-" + key;
          Integer extra = evolved && random.nextBoolean() ? random.nextInt(1000) : null;
          batch.add(new Object[] {key, text, extra});
          model.add(evolved ? key + "|" + text + "|" + extra : key + "|" + text);
        }
        send(id, batch, evolved);
      }
      if (round == 2) {
        // Not reconciled yet: the WAL rows were validated against the old schema. Renamed and
        // added columns map by field id, exactly as reconcile maps them.
        table.refresh();
        table.updateSchema().renameColumn("name", "label").addColumn("extra", Types.IntegerType.get()).commit();
        model.replaceAll(row -> row + "|null");
        reconciled.replaceAll(row -> row + "|null");
        evolved = true;
      }
      String sql = evolved ? "SELECT id, label, extra FROM logs.events" : "SELECT id, name FROM logs.events";
      assertThat(rows(sql, LATEST)).as("round %d: snapshot plus WAL tail, before reconcile", round)
          .containsExactlyInAnyOrderElementsOf(model);
      assertThat(rows(sql, SNAPSHOT)).as("round %d: snapshot only", round)
          .containsExactlyInAnyOrderElementsOf(reconciled);
      assertThat(rows("SELECT count(*) FROM logs.events", LATEST)).containsExactly(String.valueOf(model.size()));
      table.refresh();
      if (table.currentSnapshot() != null) {
        assertThat(rows("SELECT count(*) FROM logs.events FOR VERSION AS OF " + table.currentSnapshot().snapshotId(),
            LATEST)).as("round %d: time travel reads its snapshot only", round)
            .containsExactly(String.valueOf(reconciled.size()));
      }

      if (round % 2 == 1 || round == 5) {
        assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        reconciled = new ArrayList<>(model);
        assertThat(rows(sql, LATEST)).as("round %d: after reconcile", round).containsExactlyInAnyOrderElementsOf(model);
        assertThat(rows(sql, SNAPSHOT)).as("round %d: snapshot after reconcile", round)
            .containsExactlyInAnyOrderElementsOf(model);
        assertThat(icebergRows(id, evolved)).as("Iceberg's reader").containsExactlyInAnyOrderElementsOf(model);
      }
    }
  }

  @Test
  void aSessionOptionChoosesSnapshotReadsAndBadValuesAreRefused() throws Exception {
    TableIdentifier id = TableIdentifier.of("logs", "clicks");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    catalog.buildTable(id, new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get()))).create();
    send(id, List.<Object[]>of(new Object[] {1L, "a", null}, new Object[] {2L, "b", null}), false);

    try (FlightClient client = FlightClient.builder(clientAllocator, Location.forGrpcInsecure("127.0.0.1", server.port()))
            .intercept(new ClientCookieMiddleware.Factory()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      SetSessionOptionsResult set = sql.setSessionOptions(new SetSessionOptionsRequest(Map.of(
          "catalog", SessionOptionValueFactory.makeSessionOptionValue(CATALOG_ID))));
      assertThat(set.hasErrors()).isFalse();
      assertThat(rows(sql, "SELECT count(*) FROM logs.clicks")).containsExactly("2");
      set = sql.setSessionOptions(new SetSessionOptionsRequest(Map.of(
          "read", SessionOptionValueFactory.makeSessionOptionValue("snapshot"))));
      assertThat(set.hasErrors()).isFalse();
      assertThat(sql.getSessionOptions(new GetSessionOptionsRequest()).getSessionOptions()).containsOnlyKeys("catalog", "read");
      assertThat(rows(sql, "SELECT count(*) FROM logs.clicks")).as("nothing reconciled yet").containsExactly("0");
      set = sql.setSessionOptions(new SetSessionOptionsRequest(Map.of(
          "read", SessionOptionValueFactory.makeSessionOptionValue("sometimes"))));
      assertThat(set.getErrors()).containsOnlyKeys("read");
      set = sql.setSessionOptions(new SetSessionOptionsRequest(Map.of(
          "read", SessionOptionValueFactory.makeSessionOptionValue("latest"))));
      assertThat(set.hasErrors()).isFalse();
      assertThat(rows(sql, "SELECT count(*) FROM logs.clicks")).containsExactly("2");
    }
    assertThatThrownBy(() -> rows("SELECT 1", "{\"catalog_id\":\"" + CATALOG_ID + "\",\"read\":\"old\"}"))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("read must be \"latest\" or \"snapshot\", got \"old\"");
  }

  @Test
  void explainOfATableWithAnEmptyWalTailCountsNoTailRows() throws Exception {
    TableIdentifier id = TableIdentifier.of("logs", "quiet");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    catalog.buildTable(id, new Schema(required(1, "id", Types.LongType.get()))).create();
    // Its EXPLAIN used to carry a NUL placeholder for the tail's rows into the result statement,
    // which DuckDB refused ("unterminated string literal") for every table without tail files.
    List<String> plan = rows("EXPLAIN SELECT count(*) FROM logs.quiet", LATEST);
    assertThat(String.join("\n", plan)).contains("wal tail files: 0", "wal tail rows: 0").doesNotContain("\u0000");
  }

  @Test
  void aDroppedAndRecreatedTableNeverReadsTheOldWal() throws Exception {
    TableIdentifier id = TableIdentifier.of("logs", "again");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    Schema schema = new Schema(required(1, "id", Types.LongType.get()), optional(2, "name", Types.StringType.get()));
    catalog.buildTable(id, schema).create();
    send(id, List.<Object[]>of(new Object[] {1L, "old", null}), false);
    assertThat(rows("SELECT id, name FROM logs.again", LATEST)).containsExactly("1|old");
    catalog.dropTable(id);
    catalog.buildTable(id, schema).create();
    assertThat(rows("SELECT id, name FROM logs.again", LATEST)).isEmpty();
    send(id, List.<Object[]>of(new Object[] {2L, "new", null}), false);
    assertThat(rows("SELECT id, name FROM logs.again", LATEST)).containsExactly("2|new");
  }

  @Test
  void aCorruptSegmentEndsTheTailWhereReconcileStopsAndTheTableStaysQueryable() throws Exception {
    TableIdentifier id = TableIdentifier.of("logs", "broken");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get()))).create();
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    send(id, List.<Object[]>of(new Object[] {1L, "a", null}), false);
    server.store().putIfAbsent(wal.segmentKey(2), "not a segment".getBytes(StandardCharsets.UTF_8));
    send(id, List.<Object[]>of(new Object[] {3L, "c", null}), false);
    for (int i = 0; i < 2; i++) {
      assertThat(rows("SELECT id, name FROM logs.broken", LATEST)).as("query %d", i).containsExactly("1|a");
    }
    assertThatThrownBy(() -> reconciler.reconcile(wal)).hasMessageContaining("corrupt WAL segment");
    assertThat(rows("SELECT id, name FROM logs.broken", SNAPSHOT)).isEmpty();
  }

  /** One entity operation of the model test: a full or partial upsert, or a delete. */
  private record Op(long key, long version, boolean delete, boolean hasName, String name, boolean hasScore,
      Integer score) {}

  /** A key's row in the model; {@code deleted} rows are tombstones. */
  private record Row(long version, String name, Integer score, boolean deleted) {}

  @Test
  void entityTableFoldsTheWalTailAsReconcileWillWithPartialUpdatesDeletesAndOutOfOrderVersions() throws Exception {
    entityTail(0);
  }

  /**
   * A sliced table whose slices are reconciled one at a time, so that the tail is read while
   * they are at different progress: it still folds to exactly what reconciling all of them
   * yields.
   */
  @Test
  void slicedEntityTableWithSlicesAtDifferentProgressReadsExactlyTheReconciledResult() throws Exception {
    entityTail(3);
  }

  private void entityTail(int slices) throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "people");
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    Map<String, String> properties = new java.util.HashMap<>(Map.of("format-version", "3", TableProperties.MODE,
        "entity", TableProperties.VERSION_COLUMN, "v"));
    if (slices > 0) {
      properties.put(TableProperties.SLICE_COUNT, Integer.toString(slices));
    }
    Table table = catalog.buildTable(id, new Schema(List.of(required(1, "id", Types.LongType.get()),
            required(2, "v", Types.LongType.get()), optional(3, "name", Types.StringType.get()),
            optional(4, "score", Types.IntegerType.get())), Set.of(1)))
        .withProperties(properties).create();
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    Random random = new Random(1919);
    Map<Long, Row> reconciled = new java.util.TreeMap<>();
    List<Op> pending = new ArrayList<>();
    int counter = 0;
    for (int round = 0; round < 8; round++) {
      int batches = 1 + random.nextInt(3);
      for (int b = 0; b < batches; b++) {
        int kind = random.nextInt(4); // 0, 1 full; 2 partial; 3 delete
        boolean withName = kind != 2 || random.nextBoolean();
        boolean withScore = kind != 2 || !withName;
        List<Op> batch = new ArrayList<>();
        int rows = 1 + random.nextInt(8);
        for (int r = 0; r < rows; r++) {
          long key = random.nextInt(15);
          long version = 1 + random.nextInt(10);
          counter++;
          String name = random.nextInt(6) == 0 ? null : "n" + counter;
          Integer score = random.nextInt(6) == 0 ? null : counter;
          batch.add(kind == 3 ? new Op(key, version, true, false, null, false, null)
              : new Op(key, version, false, withName, name, withScore, score));
        }
        sendEntity(id, batch, kind == 3, withName, withScore);
        pending.addAll(batch);
      }
      List<String> expected = render(fold(reconciled, pending));
      String sql = "SELECT id, v, name, score FROM crm.people";
      // Before the whole table is read (which keeps its fold): each key as a point query reads
      // it, the tail folded for that key alone.
      assertPointReads(sql, expected, 16, "round " + round);
      assertThat(rows(sql, LATEST)).as("round %d: snapshot folded with the WAL tail", round)
          .containsExactlyInAnyOrderElementsOf(expected);
      assertThat(rows(sql, SNAPSHOT)).as("round %d: snapshot only", round)
          .containsExactlyInAnyOrderElementsOf(render(reconciled));
      boolean partial = slices > 0 && round % 2 == 1 && round != 7;
      if (partial) {
        // One slice only: the slices are at different progress from here on. Its keys' pending
        // operations are applied in this pass, the others' in a later one (with out-of-order
        // partial upserts, where a pass ends changes the result, so the model follows it).
        int slice = round % slices;
        assertThat(reconciler.reconcileSlice(wal, slice).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        List<Op> applied = pending.stream().filter(op -> sliceOf(op.key(), slices) == slice).toList();
        reconciled = fold(reconciled, applied);
        pending.removeIf(op -> sliceOf(op.key(), slices) == slice);
        assertThat(rows(sql, LATEST)).as("round %d: after slice %d reconciled", round, slice)
            .containsExactlyInAnyOrderElementsOf(render(fold(reconciled, pending)));
        assertThat(rows(sql, SNAPSHOT)).as("round %d: snapshot after slice %d reconciled", round, slice)
            .containsExactlyInAnyOrderElementsOf(render(reconciled));
      }
      if (!partial && (round % 3 == 2 || round == 7)) {
        assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        reconciled = fold(reconciled, pending);
        pending.clear();
        assertThat(rows(sql, LATEST)).as("round %d: after reconcile", round).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(rows(sql, SNAPSHOT)).as("round %d: snapshot after reconcile", round)
            .containsExactlyInAnyOrderElementsOf(expected);
        List<String> iceberg = new ArrayList<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
          for (Record r : records) {
            iceberg.add(r.getField("id") + "|" + r.getField("v") + "|" + r.getField("name") + "|" + r.getField("score"));
          }
        }
        assertThat(iceberg).as("Iceberg's reader").containsExactlyInAnyOrderElementsOf(expected);
      }
    }
  }

  /**
   * Many small segments with a query after each: the tail is folded a segment at a time onto the
   * layers before (EXPLAIN counts them), and folded whole again when a segment brings a version
   * that sorts between earlier ones; every answer equals the model's, before and after reconcile.
   */
  @Test
  void manySmallEntitySegmentsBetweenQueriesFoldIncrementallyAsReconcileWill() throws Exception {
    assertThat(manySmallEntitySegments(48)).as("fold layers of one tail").isGreaterThan(3);
  }

  /**
   * Random upserts, partial upserts, deletes and late versions over keys that are in the
   * snapshot, in its tombstones and new, one to four operations per segment, reconciled after a
   * random number of segments (the first tail of 20 segments
   * outgrows the 16 fold layers a table keeps): after every segment the answer equals the model's, and the answer just before
   * each reconcile is exactly what the reconcile then publishes.
   */
  @Test
  void randomSmallEntitySegmentsReadExactlyWhatReconcilePublishes() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "members");
    Table table = createVersionedEntityTable(id);
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    Random random = new Random(19);
    Map<Long, Row> reconciled = new java.util.TreeMap<>();
    List<Op> pending = new ArrayList<>();
    String sql = "SELECT id, v, name, score FROM crm.members";
    int counter = 0;
    int mostLayers = 0;
    int untilReconcile = 20;
    for (int segment = 0; segment < 70; segment++) {
      int kind = random.nextInt(6); // 0 full; 1-3 partial; 4, 5 delete
      boolean delete = kind >= 4;
      boolean withName = kind == 0 || random.nextBoolean();
      boolean withScore = kind == 0 || !withName;
      List<Op> batch = new ArrayList<>();
      int rows = 1 + random.nextInt(4);
      for (int r = 0; r < rows; r++) {
        // Few keys, so that late versions meet the operations they sort between; some keys
        // only ever arrive after a reconcile (new to the snapshot).
        long key = random.nextInt(segment < 20 ? 10 : 14);
        long version = random.nextInt(4) == 0 ? random.nextInt(10 * segment + 3) : 10L * segment + random.nextInt(4);
        counter++;
        batch.add(delete ? new Op(key, version, true, false, null, false, null)
            : new Op(key, version, false, withName, random.nextInt(5) == 0 ? null : "m" + counter, withScore,
                random.nextInt(5) == 0 ? null : counter));
      }
      sendEntity(id, batch, delete, withName, withScore);
      pending.addAll(batch);
      List<String> expected = render(fold(reconciled, pending));
      long pointKey = segment % 15;
      assertThat(rows(sql + " WHERE id = " + pointKey, LATEST)).as("segment %d: key %d alone", segment, pointKey)
          .containsExactlyInAnyOrderElementsOf(expected.stream().filter(r -> r.startsWith(pointKey + "|")).toList());
      List<String> read = rows(sql, LATEST);
      assertThat(read).as("segment %d: snapshot folded with the WAL tail", segment)
          .containsExactlyInAnyOrderElementsOf(expected);
      mostLayers = Math.max(mostLayers, foldLayers("EXPLAIN " + sql));
      if (--untilReconcile == 0) {
        assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        reconciled = fold(reconciled, pending);
        pending.clear();
        assertThat(rows(sql, SNAPSHOT)).as("segment %d: what reconcile published", segment)
            .containsExactlyInAnyOrderElementsOf(read);
        untilReconcile = 1 + random.nextInt(12);
      }
    }
    assertThat(mostLayers).as("fold layers of one tail").isGreaterThan(3);
  }

  /**
   * After a reconcile commits what a query's fold already held, the next query reads the older
   * snapshot with the kept fold extended by the new segment (no fold starts over), and the rows
   * equal the model's and what the next reconcile publishes; a commit that did not come from the
   * WAL (no {@code se.wal.seq}) between the two snapshots makes queries read the current one.
   */
  @Test
  void aReconcileOfWhatTheFoldHeldKeepsTheFoldOnTheOlderSnapshot() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "carried");
    Table table = createVersionedEntityTable(id);
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    String sql = "SELECT id, v, name, score FROM crm.carried";
    Map<Long, Row> reconciled = new java.util.TreeMap<>();
    List<Op> first = List.of(new Op(1, 1, false, true, "a", true, 1), new Op(2, 1, false, true, "b", true, 2));
    sendEntity(id, first, false, true, true);
    assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    reconciled = fold(reconciled, first);
    long older = snapshotId(id);

    List<Op> pending = new ArrayList<>(List.of(new Op(1, 2, false, false, null, true, 10)));
    sendEntity(id, pending, false, false, true);
    List<Op> added = List.of(new Op(3, 1, false, true, "c", true, 3));
    sendEntity(id, added, false, true, true);
    pending.addAll(added);
    assertThat(rows(sql, LATEST)).containsExactlyInAnyOrderElementsOf(render(fold(reconciled, pending)));
    assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    reconciled = fold(reconciled, pending);
    pending.clear();
    long current = snapshotId(id);

    List<Op> partial = List.of(new Op(2, 5, false, true, "b2", false, null));
    sendEntity(id, partial, false, true, false);
    pending.addAll(partial);
    List<Op> delete = List.of(new Op(3, 9, true, false, null, false, null));
    sendEntity(id, delete, true, false, false);
    pending.addAll(delete);
    List<String> expected = render(fold(reconciled, pending));
    List<String> read = rows(sql, LATEST);
    assertThat(read).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(String.join("\n", rows("EXPLAIN " + sql, LATEST)))
        .contains("snapshot: " + older + " (older than the current " + current);
    assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    reconciled = fold(reconciled, pending);
    pending.clear();
    assertThat(rows(sql, SNAPSHOT)).as("what reconcile published").containsExactlyInAnyOrderElementsOf(read);

    // A commit of another writer (an empty append, no se.wal.seq): the older snapshot's rows may
    // differ from what the WAL made of them, so the fold is not carried past it.
    List<Op> more = List.of(new Op(4, 1, false, true, "d", true, 4));
    sendEntity(id, more, false, true, true);
    pending.addAll(more);
    assertThat(rows(sql, LATEST)).containsExactlyInAnyOrderElementsOf(render(fold(reconciled, pending)));
    catalog.loadTable(id).newAppend().commit();
    List<Op> last = List.of(new Op(1, 7, false, true, "a7", true, 70));
    sendEntity(id, last, false, true, true);
    pending.addAll(last);
    assertThat(rows(sql, LATEST)).containsExactlyInAnyOrderElementsOf(render(fold(reconciled, pending)));
    assertThat(String.join("\n", rows("EXPLAIN " + sql, LATEST)))
        .contains("snapshot: " + snapshotId(id) + " (current)");
  }

  private long snapshotId(TableIdentifier id) {
    return catalog.loadTable(id).currentSnapshot().snapshotId();
  }

  /** With a file cache too small to keep any file between queries, every fold is whole again. */
  @Test
  void evictedFoldLayersAreFoldedWholeAgain() throws Exception {
    stop();
    start(ServerConfig.defaults().with(DuckRuntime.FILE_CACHE_SIZE, "1KiB"), dir.resolve("small-cache"));
    assertThat(manySmallEntitySegments(12)).as("fold layers of one tail").isEqualTo(1);
  }

  /** A new entity table {@code id} (its namespace created): key {@code id}, version {@code v}, name, score. */
  private Table createVersionedEntityTable(TableIdentifier id) {
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    return catalog.buildTable(id, new Schema(List.of(required(1, "id", Types.LongType.get()),
            required(2, "v", Types.LongType.get()), optional(3, "name", Types.StringType.get()),
            optional(4, "score", Types.IntegerType.get())), Set.of(1)))
        .withProperties(Map.of("format-version", "3", TableProperties.MODE, "entity",
            TableProperties.VERSION_COLUMN, "v")).create();
  }

  /**
   * Ingests {@code segments} small entity segments with a query after each and reconciles now
   * and then, comparing every answer with the model; returns the most fold layers seen.
   */
  private int manySmallEntitySegments(int segments) throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "accounts");
    Table table = createVersionedEntityTable(id);
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());
    Random random = new Random(2024);
    Map<Long, Row> reconciled = new java.util.TreeMap<>();
    List<Op> pending = new ArrayList<>();
    String sql = "SELECT id, v, name, score FROM crm.accounts";
    // A late partial upsert of a column no later operation carries sorts first in a whole fold,
    // so its value survives: the layers cannot stand for the operations before it.
    List<Op> early = List.of(new Op(100, 1000, false, true, "late-test", false, null));
    sendEntity(id, early, false, true, false);
    pending.addAll(early);
    assertThat(rows(sql, LATEST)).containsExactlyInAnyOrderElementsOf(render(fold(reconciled, pending)));
    List<Op> late = List.of(new Op(100, 7, false, false, null, true, 77));
    sendEntity(id, late, false, false, true);
    pending.addAll(late);
    assertThat(rows(sql, LATEST)).as("a late partial upsert").containsExactly("100|1000|late-test|77");
    int counter = 0;
    int mostLayers = 0;
    for (int segment = 0; segment < segments; segment++) {
      int kind = random.nextInt(5); // 0, 1 full; 2, 3 partial; 4 delete
      boolean delete = kind == 4;
      boolean withName = kind < 2 || random.nextBoolean();
      boolean withScore = kind < 2 || !withName;
      List<Op> batch = new ArrayList<>();
      int rows = 1 + random.nextInt(3);
      for (int r = 0; r < rows; r++) {
        long key = random.nextInt(12);
        // Mostly rising versions (the incremental path); now and then a late one.
        long version = random.nextInt(8) == 0 ? 1 + random.nextInt(segment + 1) : 10L * segment + random.nextInt(3);
        counter++;
        String name = random.nextInt(6) == 0 ? null : "n" + counter;
        Integer score = random.nextInt(6) == 0 ? null : counter;
        batch.add(delete ? new Op(key, version, true, false, null, false, null)
            : new Op(key, version, false, withName, name, withScore, score));
      }
      sendEntity(id, batch, delete, withName, withScore);
      pending.addAll(batch);
      List<String> expected = render(fold(reconciled, pending));
      assertThat(rows(sql, LATEST)).as("segment %d: snapshot folded with the WAL tail", segment)
          .containsExactlyInAnyOrderElementsOf(expected);
      mostLayers = Math.max(mostLayers, foldLayers("EXPLAIN " + sql));
      if (segment % 16 == 15) {
        assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
        reconciled = fold(reconciled, pending);
        pending.clear();
        assertThat(rows(sql, SNAPSHOT)).as("segment %d: snapshot after reconcile", segment)
            .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(rows(sql, LATEST)).as("segment %d: after reconcile", segment)
            .containsExactlyInAnyOrderElementsOf(expected);
      }
    }
    return mostLayers;
  }

  /**
   * Each key below {@code keys} read alone ({@code sql} plus {@code WHERE id = key}, through a
   * key comparison that is not alone in the WHERE, and with another key in an {@code IN} list)
   * gives exactly its row of {@code expected}.
   */
  private void assertPointReads(String sql, List<String> expected, int keys, String when) throws Exception {
    for (long key = 0; key < keys; key++) {
      String prefix = key + "|";
      List<String> row = expected.stream().filter(r -> r.startsWith(prefix)).toList();
      assertThat(rows(sql + " WHERE id = " + key, LATEST)).as("%s: key %d alone", when, key)
          .containsExactlyInAnyOrderElementsOf(row);
      if (key % 5 == 0) {
        assertThat(rows(sql + " WHERE " + key + " = id AND v >= 0", LATEST)).as("%s: key %d, flipped", when, key)
            .containsExactlyInAnyOrderElementsOf(row);
      }
      if (key % 4 == 1) {
        long other = key + 7;
        assertThat(rows(sql + " WHERE id IN (" + key + ", " + other + ")", LATEST)).as("%s: keys %d, %d", when, key, other)
            .containsExactlyInAnyOrderElementsOf(expected.stream()
                .filter(r -> r.startsWith(prefix) || r.startsWith(other + "|")).toList());
      }
      if (key == 3) {
        assertThat(rows("EXPLAIN " + sql + " WHERE id = 3", LATEST)).as("%s: EXPLAIN", when)
            .anyMatch(line -> line.contains("wal tail folded for: the keys where \"id\" = 3 only (not kept)"));
      }
    }
  }

  /** The fold layers EXPLAIN reports for the WAL tail of the one table {@code explain} reads. */
  private int foldLayers(String explain) throws Exception {
    for (String row : rows(explain, LATEST)) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("wal tail files: (\\d+)").matcher(row);
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
    }
    return 0;
  }

  /**
   * The model of one reconcile pass (ARCHITECTURE.md 5): per key, the operations whose version is
   * at least the key's current or tombstone version, in (version, arrival) order; a partial
   * upsert keeps the omitted columns of a live row and leaves them NULL after a delete.
   */
  private static Map<Long, Row> fold(Map<Long, Row> state, List<Op> ops) {
    Map<Long, Row> out = new java.util.TreeMap<>(state);
    Map<Long, List<Op>> byKey = new java.util.TreeMap<>();
    for (Op op : ops) {
      byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
    }
    byKey.forEach((key, keyOps) -> {
      Row current = out.get(key);
      long initial = current == null ? Long.MIN_VALUE : current.version();
      List<Op> live = new ArrayList<>();
      for (Op op : keyOps) {
        if (op.version() >= initial) {
          live.add(op);
        }
      }
      live.sort(java.util.Comparator.comparingLong(Op::version)); // stable: arrival order among equals
      Row row = current;
      for (Op op : live) {
        if (op.delete()) {
          row = new Row(op.version(), null, null, true);
        } else {
          boolean alive = row != null && !row.deleted();
          row = new Row(op.version(), op.hasName() ? op.name() : alive ? row.name() : null,
              op.hasScore() ? op.score() : alive ? row.score() : null, false);
        }
      }
      if (row != null) {
        out.put(key, row);
      }
    });
    return out;
  }

  /** The slice of {@code key} in a table of {@code slices} uniform slices. */
  private static int sliceOf(long key, int slices) {
    return io.storageengine.catalog.TableSlices.owner(io.storageengine.catalog.TableSlices.uniform(slices),
        io.storageengine.catalog.TableSlices.hash(Long.toString(key))).id();
  }

  private static List<String> render(Map<Long, Row> state) {
    List<String> out = new ArrayList<>();
    state.forEach((key, row) -> {
      if (!row.deleted()) {
        out.add(key + "|" + row.version() + "|" + row.name() + "|" + row.score());
      }
    });
    return out;
  }

  /** Ingests one batch of entity operations (a delete batch carries the key and version only). */
  private void sendEntity(TableIdentifier id, List<Op> batch, boolean delete, boolean withName, boolean withScore)
      throws Exception {
    Table table = catalog.loadTable(id);
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField f : table.schema().columns()) {
      boolean carried = f.name().equals("id") || f.name().equals("v")
          || (!delete && (f.name().equals("name") ? withName : withScore));
      if (carried) {
        fields.add(IcebergArrowSchemas.toArrow(f));
      }
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields),
            clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of(id.namespace().levels()), id.name(),
            delete ? WalOperation.DELETE : WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < batch.size(); i++) {
        Op op = batch.get(i);
        ((BigIntVector) root.getVector("id")).setSafe(i, op.key());
        ((BigIntVector) root.getVector("v")).setSafe(i, op.version());
        if (root.getVector("name") != null) {
          VarCharVector names = (VarCharVector) root.getVector("name");
          if (op.name() == null) {
            names.setNull(i);
          } else {
            names.setSafe(i, op.name().getBytes(StandardCharsets.UTF_8));
          }
        }
        if (root.getVector("score") != null) {
          IntVector scores = (IntVector) root.getVector("score");
          if (op.score() == null) {
            scores.setNull(i);
          } else {
            scores.setSafe(i, op.score());
          }
        }
      }
      root.setRowCount(batch.size());
      stream.send(root).get();
      stream.finish();
    }
  }

  /** Ingests {@code batch} (id, name or label, extra) as one acknowledged WAL segment. */
  private void send(TableIdentifier id, List<Object[]> batch, boolean evolved) throws Exception {
    Table table = catalog.loadTable(id);
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField f : table.schema().columns()) {
      fields.add(IcebergArrowSchemas.toArrow(f));
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields),
            clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of(id.namespace().levels()), id.name(),
            WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      BigIntVector ids = (BigIntVector) root.getVector("id");
      VarCharVector names = (VarCharVector) root.getVector(evolved ? "label" : "name");
      IntVector extras = evolved ? (IntVector) root.getVector("extra") : null;
      for (int i = 0; i < batch.size(); i++) {
        ids.setSafe(i, (Long) batch.get(i)[0]);
        if (batch.get(i)[1] == null) {
          names.setNull(i);
        } else {
          names.setSafe(i, ((String) batch.get(i)[1]).getBytes(StandardCharsets.UTF_8));
        }
        if (extras != null) {
          if (batch.get(i)[2] == null) {
            extras.setNull(i);
          } else {
            extras.setSafe(i, (Integer) batch.get(i)[2]);
          }
        }
      }
      root.setRowCount(batch.size());
      stream.send(root).get();
      stream.finish();
    }
  }

  private List<String> icebergRows(TableIdentifier id, boolean evolved) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record r : records) {
        out.add(evolved ? r.getField("id") + "|" + r.getField("label") + "|" + r.getField("extra")
            : r.getField("id") + "|" + r.getField("name"));
      }
    }
    return out;
  }

  /** Every row of {@code sql}, columns joined by {@code |}, with {@code header} as se-query-metadata. */
  private List<String> rows(String sql, String header) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", header);
    try (FlightClient client = FlightClient.builder(clientAllocator, Location.forGrpcInsecure("127.0.0.1", server.port()))
            .build();
        FlightSqlClient flightSql = new FlightSqlClient(client)) {
      return rows(flightSql, sql, new HeaderCallOption(headers));
    }
  }

  private static List<String> rows(FlightSqlClient sql, String query, CallOption... options) throws Exception {
    List<String> out = new ArrayList<>();
    FlightInfo info = sql.execute(query, options);
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), options)) {
      while (stream.next()) {
        VectorSchemaRoot root = stream.getRoot();
        for (int i = 0; i < root.getRowCount(); i++) {
          List<String> values = new ArrayList<>();
          for (FieldVector vector : root.getFieldVectors()) {
            values.add(String.valueOf(vector.getObject(i)));
          }
          out.add(String.join("|", values));
        }
      }
    }
    return out;
  }
}

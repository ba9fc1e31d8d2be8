package io.storageengine.server;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableProperties;
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
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One table, one meaning: ingestion, reconciliation and compaction read a table's settings the
 * same way (an {@code se.mode=Entity} table is an entity table to all of them), and every column
 * type ingestion accepts is reconciled and queried.
 */
class TableSettingsAgreementTest {
  static final String CATALOG_ID = "tenant1";

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
    reconciler = new Reconciler(server.registry(), new ObjectStoreWal(server.store(), "settings-test"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb, options());
    ingest = IngestClient.connect(location(), clientAllocator);
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

  private Location location() {
    return Location.forGrpcInsecure("127.0.0.1", server.port());
  }

  private static ReconcileOptions options() {
    return ReconcileOptions.defaults().withDuckdbThreads(1);
  }

  @Test
  void mixedCaseEntityModeIngestsReconcilesAndCompactsAsEntity() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "people");
    Schema schema = new Schema(List.of(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get()), required(3, "v", Types.LongType.get())), Set.of(1));
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, schema)
        .withProperties(Map.of("format-version", "3", TableProperties.MODE, "Entity",
            TableProperties.VERSION_COLUMN, "v"))
        .create();
    assertThat(Tables.describe(table).mode()).isEqualTo(TableDefinition.Mode.ENTITY);
    TableWal wal = new TableWal(CATALOG_ID, table.uuid());

    // Every pass upserts the same ten keys with a higher version; pass 2 also carries a stale
    // version of key 0 that must lose.
    int passes = MaintenancePolicy.DEFAULT_MIN_INPUT_FILES;
    for (int pass = 0; pass < passes; pass++) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), clientAllocator);
          IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), "people", WalOperation.UPSERT,
              root.getSchema())) {
        root.allocateNew();
        int rows = 0;
        for (long key = 0; key < 10; key++) {
          ((BigIntVector) root.getVector("id")).setSafe(rows, key);
          ((VarCharVector) root.getVector("name")).setSafe(rows, ("p" + pass + "k" + key).getBytes(StandardCharsets.UTF_8));
          ((BigIntVector) root.getVector("v")).setSafe(rows, pass + 1);
          rows++;
        }
        if (pass == 2) {
          ((BigIntVector) root.getVector("id")).setSafe(rows, 0);
          ((VarCharVector) root.getVector("name")).setSafe(rows, "stale".getBytes(StandardCharsets.UTF_8));
          ((BigIntVector) root.getVector("v")).setSafe(rows, 0);
          rows++;
        }
        root.setRowCount(rows);
        stream.send(root).get();
        stream.finish();
      }
      assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    }
    Map<Long, String> expected = new TreeMap<>();
    for (long key = 0; key < 10; key++) {
      expected.put(key, "p" + (passes - 1) + "k" + key);
    }
    assertThat(rows(id)).as("reconciled as an entity table: one row per key").isEqualTo(expected);
    assertThat(rowCount(id)).isEqualTo(10);

    MaintenancePolicy d = MaintenancePolicy.defaults();
    MaintenancePolicy compactEverything = new MaintenancePolicy(true, d.targetFileSizeBytes(), 2, d.deleteRatio(),
        d.snapshotRetention(), d.minSnapshots(), d.orphanAge(), d.walGcAge(), d.maxManifests());
    MaintenanceResult result = new Maintainer(server.registry(), new ObjectStoreWal(server.store(), "settings-maint"),
        server.store(), server.context().tombstones(), engineAllocator, engineDuckdb, options(), compactEverything).maintain(CATALOG_ID, id);
    assertThat(result.errors()).isEmpty();
    assertThat(result.compaction().dataFilesRemoved()).as("compaction ran").isGreaterThanOrEqualTo(2);
    assertThat(rows(id)).as("compacted as an entity table: still one row per key").isEqualTo(expected);
    assertThat(rowCount(id)).isEqualTo(10);

    // A stale write after compaction still loses: the version column is read the same way.
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), "people", WalOperation.UPSERT,
            root.getSchema())) {
      root.allocateNew();
      ((BigIntVector) root.getVector("id")).setSafe(0, 1);
      ((VarCharVector) root.getVector("name")).setSafe(0, "late".getBytes(StandardCharsets.UTF_8));
      ((BigIntVector) root.getVector("v")).setSafe(0, 1);
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }
    assertThat(reconciler.reconcile(wal).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(rows(id)).isEqualTo(expected);
  }

  @Test
  void aVariantTableFromAnotherClientIngestsJsonAndIsQueriedByPath() throws Exception {
    RESTCatalog rest = new RESTCatalog();
    rest.initialize("se", Map.of("uri", "http://127.0.0.1:" + server.port() + "/catalogs/" + CATALOG_ID));
    try {
      rest.createNamespace(org.apache.iceberg.catalog.Namespace.of("docs"));
      Table table = rest.buildTable(TableIdentifier.of("docs", "raw"), new Schema(
              required(1, "id", Types.LongType.get()), optional(2, "doc", Types.VariantType.get())))
          .withProperty("format-version", "3").create();
      // JSON text in a utf8 column: the server encodes each value as a variant.
      org.apache.arrow.vector.types.pojo.Schema json = new org.apache.arrow.vector.types.pojo.Schema(List.of(
          IcebergArrowSchemas.toArrow(table.schema().findField("id")),
          org.apache.arrow.vector.types.pojo.Field.nullable("doc", ArrowType.Utf8.INSTANCE)));
      List<String> docs = List.of("{\"a\": {\"b\": 1}, \"s\": \"x\"}", "{\"a\": {\"b\": 5}, \"s\": \"y\"}",
          "[1, \"two\", 3.5]");
      try (VectorSchemaRoot root = VectorSchemaRoot.create(json, clientAllocator);
          IngestStream stream = ingest.open(CATALOG_ID, List.of("docs"), "raw", WalOperation.UPSERT, json)) {
        root.allocateNew();
        for (int i = 0; i < docs.size(); i++) {
          ((BigIntVector) root.getVector("id")).setSafe(i, i + 1);
          ((VarCharVector) root.getVector("doc")).setSafe(i, docs.get(i).getBytes(StandardCharsets.UTF_8));
        }
        root.setRowCount(docs.size());
        stream.send(root).get();
        stream.finish();
      }
      String from = " FROM default.docs.raw";
      // The WAL tail answers before reconciliation, with the same values.
      assertThat(query("SELECT doc" + from + " WHERE id = 1")).containsExactly("{\"a\":{\"b\":1},\"s\":\"x\"}");
      assertThat(query("SELECT sum(doc.a.b::BIGINT), count(*)" + from)).containsExactly("6", "3");
      assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
          .isEqualTo(ReconcileResult.Outcome.COMMITTED);

      // Iceberg's reader sees variants; Flight SQL sends them as JSON text, and paths extract.
      try (CloseableIterable<Record> records = IcebergGenerics.read(rest.loadTable(TableIdentifier.of("docs", "raw"))).build()) {
        Map<Long, String> read = new TreeMap<>();
        records.forEach(r -> read.put((Long) r.getField("id"), String.valueOf(r.getField("doc"))));
        assertThat(read.get(1L)).contains("s: Variant(type=STRING, value=x)");
        assertThat(read.get(3L)).contains("VariantArray([");
      }
      assertThat(query("SELECT doc" + from + " WHERE id = 1")).containsExactly("{\"a\":{\"b\":1},\"s\":\"x\"}");
      assertThat(query("SELECT doc" + from + " WHERE id = 3")).containsExactly("[1,\"two\",3.5]");
      assertThat(query("SELECT doc.a.b, doc.s::VARCHAR, doc.a.b::BIGINT + 1, doc::JSON ->> '$.s'" + from
          + " WHERE id = 2")).containsExactly("5", "y", "6", "y");
      assertThat(query("SELECT count(*), max(doc.a.b::BIGINT)" + from + " WHERE doc.s::VARCHAR IN ('x', 'y')"))
          .containsExactly("2", "5");
      assertThat(query("SELECT json_extract_string(doc::JSON, '$[1]')" + from + " WHERE id = 3"))
          .containsExactly("two");
      // Metadata tables leave variant-typed metrics out rather than fail.
      assertThat(query("SELECT count(*), sum(record_count) FROM default.docs.\"raw$files\"")).containsExactly("1", "3");
    } finally {
      rest.close();
    }
  }

  @Test
  void aGeometryTableIngestsWktAndWkbAndIsQueriedBeforeAndAfterReconciliation() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "places");
    Schema schema = new Schema(List.of(required(1, "id", Types.LongType.get()),
        optional(2, "g", Types.GeometryType.crs84())), Set.of(1));
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, schema)
        .withProperties(Map.of("format-version", "3", TableProperties.MODE, "entity")).create();
    org.apache.arrow.vector.types.pojo.Schema wkt = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        IcebergArrowSchemas.toArrow(table.schema().findField("id")),
        org.apache.arrow.vector.types.pojo.Field.nullable("g", ArrowType.Utf8.INSTANCE)));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(wkt, clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), "places", WalOperation.UPSERT, wkt)) {
      root.allocateNew();
      String[] values = {"POINT (1 2)", "LINESTRING (0 0, 5 7)", "POLYGON ((0 0, 4 0, 4 4, 0 0))"};
      for (int i = 0; i < values.length; i++) {
        ((BigIntVector) root.getVector("id")).setSafe(i, i + 1);
        ((VarCharVector) root.getVector("g")).setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(values.length);
      stream.send(root).get();
      stream.finish();
    }
    String from = " FROM default.crm.places";
    // The WAL tail answers before reconciliation: WKB by default, WKT through ST_AsText.
    assertThat(query("SELECT hex(ST_AsWKB(g)), ST_AsText(g)" + from + " WHERE id = 1"))
        .containsExactly("0101000000000000000000F03F0000000000000040", "POINT (1 2)");
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    // An upsert replaces a geometry (the WAL tail over the snapshot, then reconciled again).
    try (VectorSchemaRoot root = VectorSchemaRoot.create(wkt, clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), "places", WalOperation.UPSERT, wkt)) {
      root.allocateNew();
      ((BigIntVector) root.getVector("id")).setSafe(0, 2);
      ((VarCharVector) root.getVector("g")).setSafe(0, "POINT Z (3 4 5)".getBytes(StandardCharsets.UTF_8));
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }
    String select = "SELECT string_agg(id || '=' || ST_AsText(g), '; ' ORDER BY id)" + from;
    List<String> expected = List.of("1=POINT (1 2); 2=POINT Z (3 4 5); 3=POLYGON ((0 0, 4 0, 4 4, 0 0))");
    assertThat(query(select)).as("WAL tail").containsExactlyElementsOf(expected);
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(query(select)).as("snapshot").containsExactlyElementsOf(expected);
    assertThat(rowCount(id)).isEqualTo(3);
    // Selected as is, a geometry is its WKB (Arrow binary).
    assertThat(query("SELECT g" + from + " WHERE id = 1")).containsExactly(java.util.Arrays.toString(
        java.util.HexFormat.of().parseHex("0101000000000000000000f03f0000000000000040")));
    assertThat(query("SELECT count(*) > 0 FROM default.crm.\"places$files\"")).containsExactly("true");
  }

  @Test
  void geographyAndGeometryOfAnotherCrsAreUpsertedAndQueriedAsWkbBeforeAndAfterReconciliation() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "routes");
    Schema schema = new Schema(List.of(required(1, "id", Types.LongType.get()),
        optional(2, "geog", Types.GeographyType.of("OGC:CRS84", org.apache.iceberg.types.EdgeAlgorithm.KARNEY)),
        optional(3, "m", Types.GeometryType.of("srid:3857"))), Set.of(1));
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, schema)
        .withProperties(Map.of("format-version", "3", TableProperties.MODE, "entity")).create();
    org.apache.arrow.vector.types.pojo.Schema wkt = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        IcebergArrowSchemas.toArrow(table.schema().findField("id")),
        org.apache.arrow.vector.types.pojo.Field.nullable("geog", ArrowType.Utf8.INSTANCE),
        org.apache.arrow.vector.types.pojo.Field.nullable("m", ArrowType.Utf8.INSTANCE)));
    upsertWkt(wkt, "routes", "POINT (1 2)", "POINT (9 9)");
    // An upsert replaces row 2 over the WAL tail before reconciliation, and again over the snapshot after.
    upsertWkt(wkt, "routes", null, "LINESTRING (179 0, -179 1)");
    // Inside SQL a geography is the BLOB of its WKB (DuckDB has no GEOGRAPHY type): WKT through
    // a cast to GEOMETRY. A geometry of another CRS is DuckDB's GEOMETRY.
    String select = "SELECT string_agg(id || '=' || hex(geog) || ' ' || ST_AsText(geog::GEOMETRY) || ' ' || ST_AsText(m), "
        + "'; ' ORDER BY id) FROM default.crm.routes";
    List<String> expected = List.of("1=0101000000000000000000F03F0000000000000040 POINT (1 2) POINT (1 2); "
        + "2=0102000000020000000000000000606640000000000000000000000000006066C0000000000000F03F "
        + "LINESTRING (179 0, -179 1) LINESTRING (179 0, -179 1)");
    assertThat(query(select)).as("WAL tail").containsExactlyElementsOf(expected);
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(query(select)).as("snapshot").containsExactlyElementsOf(expected);
    upsertWkt(wkt, "routes", null, "POINT (3 4)");
    List<String> updated = List.of("1=0101000000000000000000F03F0000000000000040 POINT (1 2) POINT (1 2); "
        + "2=010100000000000000000008400000000000001040 POINT (3 4) POINT (3 4)");
    assertThat(query(select)).as("WAL tail over the snapshot").containsExactlyElementsOf(updated);
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(query(select)).as("snapshot after the update").containsExactlyElementsOf(updated);
    assertThat(rowCount(id)).isEqualTo(2);
    // Selected as is, both are WKB (Arrow binary).
    String point = java.util.Arrays.toString(java.util.HexFormat.of().parseHex("0101000000000000000000f03f0000000000000040"));
    assertThat(query("SELECT geog, m FROM default.crm.routes WHERE id = 1")).containsExactly(point, point);
    assertThat(query("SELECT count(*) > 0 FROM default.crm.\"routes$files\"")).containsExactly("true");
  }

  /** Upserts rows 1, 2, ... of the {@code geog} and {@code m} columns from WKT (null: skip that id). */
  private void upsertWkt(org.apache.arrow.vector.types.pojo.Schema wkt, String table, String... values) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(wkt, clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), table, WalOperation.UPSERT, wkt)) {
      root.allocateNew();
      int rows = 0;
      for (int i = 0; i < values.length; i++) {
        if (values[i] != null) {
          ((BigIntVector) root.getVector("id")).setSafe(rows, i + 1);
          ((VarCharVector) root.getVector("geog")).setSafe(rows, values[i].getBytes(StandardCharsets.UTF_8));
          ((VarCharVector) root.getVector("m")).setSafe(rows, values[i].getBytes(StandardCharsets.UTF_8));
          rows++;
        }
      }
      root.setRowCount(rows);
      stream.send(root).get();
      stream.finish();
    }
  }

  @Test
  void aPartialUpsertOfAnEntityTableReplacesTheWholeVariant() throws Exception {
    TableIdentifier id = TableIdentifier.of("crm", "profiles");
    Schema schema = new Schema(List.of(required(1, "id", Types.LongType.get()),
        optional(2, "name", Types.StringType.get()), optional(3, "doc", Types.VariantType.get())), Set.of(1));
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, schema)
        .withProperties(Map.of("format-version", "3", TableProperties.MODE, "entity")).create();
    org.apache.arrow.vector.types.pojo.Schema full = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        IcebergArrowSchemas.toArrow(table.schema().findField("id")),
        IcebergArrowSchemas.toArrow(table.schema().findField("name")),
        org.apache.arrow.vector.types.pojo.Field.nullable("doc", ArrowType.Utf8.INSTANCE)));
    org.apache.arrow.vector.types.pojo.Schema docOnly = new org.apache.arrow.vector.types.pojo.Schema(List.of(
        full.getFields().get(0), full.getFields().get(2)));
    upsert(full, "profiles", 1, "ann", "{\"a\": 1, \"b\": {\"c\": 2}}");
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    upsert(docOnly, "profiles", 1, null, "{\"z\": true}");
    String select = "SELECT name, doc FROM default.crm.profiles WHERE id = 1";
    assertThat(query(select)).as("WAL tail").containsExactly("ann", "{\"z\":true}");
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(query(select)).as("snapshot").containsExactly("ann", "{\"z\":true}");
    assertThat(rowCount(id)).isEqualTo(1);
  }

  private void upsert(org.apache.arrow.vector.types.pojo.Schema schema, String table, long key, String name, String doc)
      throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("crm"), table, WalOperation.UPSERT, schema)) {
      root.allocateNew();
      ((BigIntVector) root.getVector("id")).setSafe(0, key);
      if (name != null) {
        ((VarCharVector) root.getVector("name")).setSafe(0, name.getBytes(StandardCharsets.UTF_8));
      }
      ((VarCharVector) root.getVector("doc")).setSafe(0, doc.getBytes(StandardCharsets.UTF_8));
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }
  }

  @Test
  void everySupportedPrimitiveTypeIsIngestedReconciledAndQueried() throws Exception {
    TableIdentifier id = TableIdentifier.of("types", "all");
    Schema schema = new Schema(
        required(1, "id", Types.LongType.get()),
        optional(2, "b", Types.BooleanType.get()),
        optional(3, "i", Types.IntegerType.get()),
        optional(4, "f", Types.FloatType.get()),
        optional(5, "d", Types.DoubleType.get()),
        optional(6, "dec", Types.DecimalType.of(12, 3)),
        optional(7, "dt", Types.DateType.get()),
        optional(8, "t", Types.TimeType.get()),
        optional(9, "ts", Types.TimestampType.withoutZone()),
        optional(10, "tstz", Types.TimestampType.withZone()),
        optional(11, "tsn", Types.TimestampNanoType.withoutZone()),
        optional(13, "s", Types.StringType.get()),
        optional(14, "u", Types.UUIDType.get()),
        optional(15, "fx", Types.FixedType.ofLength(3)),
        optional(16, "bin", Types.BinaryType.get()));
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.buildTable(id, schema).withProperty("format-version", "3").create();
    UUID uuid = UUID.fromString("0b0e5e2c-7a5d-4a8e-9c39-2f3a1f6e9d10");
    long micros = 1_767_225_600_123_456L; // 2026-01-01T00:00:00.123456Z
    long nanos = micros * 1000 + 789;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), clientAllocator);
        IngestStream stream = ingest.open(CATALOG_ID, List.of("types"), "all", WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      ((BigIntVector) root.getVector("id")).setSafe(0, 1);
      ((BitVector) root.getVector("b")).setSafe(0, 1);
      ((IntVector) root.getVector("i")).setSafe(0, -42);
      ((Float4Vector) root.getVector("f")).setSafe(0, 1.5f);
      ((Float8Vector) root.getVector("d")).setSafe(0, 2.25);
      ((DecimalVector) root.getVector("dec")).setSafe(0, new BigDecimal("123456789.123"));
      ((DateDayVector) root.getVector("dt")).setSafe(0, 20454); // 2026-01-01
      ((TimeMicroVector) root.getVector("t")).setSafe(0, 3_723_000_004L); // 01:02:03.000004
      ((TimeStampMicroVector) root.getVector("ts")).setSafe(0, micros);
      ((TimeStampMicroTZVector) root.getVector("tstz")).setSafe(0, micros);
      ((TimeStampNanoVector) root.getVector("tsn")).setSafe(0, nanos);
      ((VarCharVector) root.getVector("s")).setSafe(0, "héllo".getBytes(StandardCharsets.UTF_8));
      ByteBuffer u = ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
      ((FixedSizeBinaryVector) root.getVector("u")).setSafe(0, u.array());
      ((FixedSizeBinaryVector) root.getVector("fx")).setSafe(0, new byte[] {1, 2, 3});
      ((VarBinaryVector) root.getVector("bin")).setSafe(0, new byte[] {9, 8});
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }
    assertThat(reconciler.reconcile(new TableWal(CATALOG_ID, table.uuid())).outcome())
        .isEqualTo(ReconcileResult.Outcome.COMMITTED);

    // Iceberg's own reader: the values as written.
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      List<Record> all = new ArrayList<>();
      records.forEach(all::add);
      assertThat(all).hasSize(1);
      Record r = all.get(0);
      assertThat(r.getField("b")).isEqualTo(true);
      assertThat(r.getField("i")).isEqualTo(-42);
      assertThat(r.getField("f")).isEqualTo(1.5f);
      assertThat(r.getField("d")).isEqualTo(2.25);
      assertThat(r.getField("dec")).isEqualTo(new BigDecimal("123456789.123"));
      assertThat(r.getField("dt").toString()).isEqualTo("2026-01-01");
      assertThat(r.getField("t").toString()).isEqualTo("01:02:03.000004");
      assertThat(r.getField("ts").toString()).isEqualTo("2026-01-01T00:00:00.123456");
      assertThat(r.getField("tstz").toString()).isEqualTo("2026-01-01T00:00:00.123456Z");
      assertThat(r.getField("tsn").toString()).isEqualTo("2026-01-01T00:00:00.123456789");
      assertThat(r.getField("s")).isEqualTo("héllo");
      assertThat(r.getField("u")).isEqualTo(uuid);
      assertThat(((ByteBuffer) r.getField("bin")).remaining()).isEqualTo(2);
    }

    // And through Flight SQL, every column.
    List<String> row = query("SELECT b, i, f, d, dec, dt, t, ts, tstz, tsn, s, u, fx, bin FROM default.types.\"all\"");
    assertThat(row).containsExactly("true", "-42", "1.5", "2.25", "123456789.123", "20454",
        "3723000004", "2026-01-01T00:00:00.123456", String.valueOf(micros), "2026-01-01T00:00:00.123456789",
        "héllo", uuid.toString(), "[1, 2, 3]", "[9, 8]");
  }

  private Map<Long, String> rows(TableIdentifier id) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record r : records) {
        String previous = rows.put((Long) r.getField("id"), (String) r.getField("name"));
        assertThat(previous).as("duplicate key %s", r.getField("id")).isNull();
      }
    }
    return rows;
  }

  private long rowCount(TableIdentifier id) throws Exception {
    long n = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record ignored : records) {
        n++;
      }
    }
    return n;
  }

  /** The first row of {@code sql}, each column as text ({@code getObject} of the Arrow vector). */
  private List<String> query(String sql) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG_ID + "\"}");
    HeaderCallOption tenant = new HeaderCallOption(headers);
    List<String> row = new ArrayList<>();
    try (FlightClient client = FlightClient.builder(clientAllocator, location()).build();
        FlightSqlClient flightSql = new FlightSqlClient(client)) {
      FlightInfo info = flightSql.execute(sql, tenant);
      try (FlightStream stream = flightSql.getStream(info.getEndpoints().get(0).getTicket(), tenant)) {
        while (stream.next() && row.isEmpty()) {
          VectorSchemaRoot root = stream.getRoot();
          if (root.getRowCount() > 0) {
            for (var vector : root.getFieldVectors()) {
              Object value = vector.getObject(0);
              row.add(value instanceof byte[] bytes ? java.util.Arrays.toString(bytes) : String.valueOf(value));
            }
          }
        }
      }
    }
    return row;
  }
}

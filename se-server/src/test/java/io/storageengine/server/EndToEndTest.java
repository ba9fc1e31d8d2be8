package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
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
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import io.storageengine.catalog.IcebergArrowSchemas;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path in one process, through real clients on one port: create a table through the
 * Iceberg REST facade, ingest over Arrow Flight, reconcile into Iceberg, query through Flight SQL
 * and the Flight SQL JDBC driver, and read back with Iceberg's own reader.
 */
class EndToEndTest {
  @TempDir Path dir;
  private EngineServer server;
  private BufferAllocator allocator;

  @BeforeEach
  void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms"), Role.DEV);
    allocator = new RootAllocator();
  }

  @AfterEach
  void stop() {
    server.close();
    allocator.close();
  }

  private Location location() {
    return Location.forGrpcInsecure("127.0.0.1", server.port());
  }

  private static HeaderCallOption tenant(String catalogId) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\"}");
    return new HeaderCallOption(headers);
  }

  @Test
  void appendAndEntityTablesFromIngestToQuery() throws Exception {
    // Tables are created over HTTP (the Iceberg REST facade) on the same port that then
    // carries Flight ingestion and Flight SQL.
    org.apache.iceberg.rest.RESTCatalog rest = new org.apache.iceberg.rest.RESTCatalog();
    rest.initialize("se", Map.of("uri", "http://127.0.0.1:" + server.port() + "/catalogs/warehouse"));
    Catalog catalog = server.registry().catalog("warehouse");
    TableIdentifier events = TableIdentifier.parse("analytics.events.page_views");
    Tables.create(rest, events, TableDefinition.builder("id bigint not null, url string").build());
    TableIdentifier customers = TableIdentifier.parse("crm.customers");
    Tables.create(rest, customers, TableDefinition.builder("id bigint not null, name string, v bigint not null")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("id").versionColumn("v").build());

    rest.close();
    try (IngestClient client = IngestClient.connect(location(), allocator)) {
      Table appendTable = catalog.loadTable(events);
      try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(appendTable.schema()), allocator);
          IngestStream stream = client.open("warehouse", List.of("analytics", "events"), "page_views",
              WalOperation.UPSERT, root.getSchema())) {
        fill(root, new long[] {1, 2, 3}, new String[] {"/a", "/b", "/c"}, null);
        stream.send(root).get();
        stream.finish();
      }
      Table entityTable = catalog.loadTable(customers);
      try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(entityTable.schema()), allocator);
          IngestStream stream = client.open("warehouse", List.of("crm"), "customers",
              WalOperation.UPSERT, root.getSchema())) {
        fill(root, new long[] {1, 2, 1}, new String[] {"ann", "bob", "ann2"}, new long[] {1, 1, 2});
        stream.send(root).get();
        fill(root, new long[] {2}, new String[] {"bob-old"}, new long[] {0});
        stream.send(root).get();
        stream.finish();
      }
    }

    List<String> views = awaitRows("SELECT id, url FROM default.\"analytics.events\".page_views ORDER BY id", 3);
    assertThat(views).containsExactly("1|/a", "2|/b", "3|/c");
    List<String> people = awaitRows("SELECT id, name FROM default.crm.customers ORDER BY id", 2);
    assertThat(people).containsExactly("1|ann2", "2|bob");

    // Iceberg's own reader agrees (deletion vectors applied).
    List<String> viaIceberg = new ArrayList<>();
    Table t = catalog.loadTable(customers);
    try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
      for (Record r : records) {
        viaIceberg.add(r.getField("id") + "|" + r.getField("name"));
      }
    }
    assertThat(viaIceberg).containsExactlyInAnyOrder("1|ann2", "2|bob");

    // The Flight SQL JDBC driver, as DBeaver uses it, on the same port.
    Properties props = new Properties();
    props.setProperty("useEncryption", "false");
    props.setProperty("se-query-metadata", "{\"catalog_id\":\"warehouse\"}");
    try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.port(), props);
        Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) AS n FROM default.\"analytics.events\".page_views")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong("n")).isEqualTo(3);
    }
  }

  @Test
  void mutationsAreRefusedAndUnknownTablesAreNotFound() throws Exception {
    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      // What the ADBC Flight SQL driver sends on connect: answered, no authentication yet.
      client.handshake();
      assertThatThrownBy(() -> sql.execute("DELETE FROM default.crm.customers", tenant("warehouse")))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
      assertThatThrownBy(() -> sql.execute("SELECT * FROM default.nope.nothing", tenant("warehouse")))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
      assertThatThrownBy(() -> sql.execute("SELECT 1", tenant("nobody")))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
    }
  }

  private List<String> awaitRows(String query, int expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<String> rows = List.of();
    while (System.nanoTime() < deadline) {
      rows = query(query);
      if (rows.size() >= expected) {
        return rows;
      }
      Thread.sleep(100);
    }
    return rows;
  }

  private List<String> query(String query) throws Exception {
    List<String> rows = new ArrayList<>();
    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      FlightInfo info = sql.execute(query, tenant("warehouse"));
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), tenant("warehouse"))) {
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

  private static void fill(VectorSchemaRoot root, long[] ids, String[] names, long[] versions) {
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector name = (VarCharVector) root.getVector(1);
    for (int i = 0; i < ids.length; i++) {
      id.setSafe(i, ids[i]);
      name.setSafe(i, names[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
      if (versions != null) {
        ((BigIntVector) root.getVector(2)).setSafe(i, versions[i]);
      }
    }
    root.setRowCount(ids.length);
  }
}

package io.storageengine.server.lb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.ReconcileRunner;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import io.storageengine.wal.WalOperation;
import java.net.InetSocketAddress;
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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real servers on one cluster storage behind a real load balancer: ingestion streams of a
 * table land on the table's rendezvous owner, queries and HTTP pass through, a dead server's
 * tables fail over to the live one, and with no live server the error says so.
 */
class LoadBalancerTest {
  private static final String CATALOG = "lake";
  private static final String NAMESPACE = "lb";

  @TempDir Path dir;
  private FsObjectStore shared;
  private final EngineServer[] servers = new EngineServer[2];
  private final FaultInjectingObjectStore[] stores = new FaultInjectingObjectStore[2];
  private LoadBalancer lb;
  private BufferAllocator allocator;
  /** Table name -> indexes of the servers that wrote a WAL segment of it. */
  private final Map<String, Set<Integer>> writers = new ConcurrentHashMap<>();
  private final Map<String, String> tableByUuid = new ConcurrentHashMap<>();
  private final Map<String, org.apache.arrow.vector.types.pojo.Schema> schemas = new ConcurrentHashMap<>();

  @BeforeEach
  void start() throws Exception {
    allocator = new RootAllocator();
    shared = new FsObjectStore(dir.resolve("store"));
    for (int i = 0; i < 2; i++) {
      startServer(i);
    }
    lb = LoadBalancer.start(new InetSocketAddress("127.0.0.1", 0), List.of(), shared, Duration.ofMillis(100));
    await("both servers live", () -> lb.liveServers().size() == 2);
    servers[0].registry().create(CATALOG, CatalogConfig.sql("jdbc:sqlite:" + dir.resolve("lake.db"),
        dir.resolve("warehouse").toUri().toString()));
  }

  private void startServer(int i) {
    int index = i;
    stores[i] = new FaultInjectingObjectStore(shared);
    stores[i].after(Operation.PUT_IF_ABSENT, key -> key.contains("/wal/"), (op, key) -> {
      String uuid = key.split("/")[3];
      writers.computeIfAbsent(tableByUuid.getOrDefault(uuid, uuid), t -> ConcurrentHashMap.newKeySet()).add(index);
    });
    servers[i] = EngineServer.start(config(), Role.SERVER, stores[i]);
  }

  private ServerConfig config() {
    return ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        // se start roles default to --auth.mode tokens; the test calls without credentials, on loopback.
        .with(AuthConfig.MODE, "none")
        .with(ConfigKey.OBJECT_STORE_ROOT, dir.resolve("store").toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms");
  }

  @AfterEach
  void stop() {
    if (lb != null) {
      lb.close();
    }
    for (EngineServer server : servers) {
      if (server != null) {
        server.close();
      }
    }
    shared.close();
    allocator.close();
  }

  @Test
  void eachTablesStreamsGoToItsOwnerAndBothServersTakeTables() throws Exception {
    List<String> live = lb.liveServers();
    // Table names chosen so that each server owns three: the test does not depend on the ports.
    List<String> names = new ArrayList<>();
    int[] owned = new int[2];
    for (int n = 0; owned[0] < 3 || owned[1] < 3; n++) {
      String name = "t" + n;
      int owner = serverIndex(owner(name, live));
      if (owned[owner] < 3) {
        owned[owner]++;
        names.add(name);
      }
    }
    for (String name : names) {
      createTable(name);
    }
    try (IngestClient client = IngestClient.connect(lbLocation(), allocator)) {
      for (int round = 0; round < 2; round++) {
        for (String name : names) {
          assertThat(ingest(client, name, round * 10, 3)).isEqualTo(1L);
        }
      }
    }
    for (String name : names) {
      assertThat(writers.get(name)).as("servers that wrote the WAL of %s", name)
          .containsExactly(serverIndex(owner(name, live)));
    }
    assertThat(writers.values().stream().flatMap(Set::stream).distinct()).containsExactlyInAnyOrder(0, 1);
  }

  @Test
  void queriesAndHttpPassThroughAndBadInputKeepsItsError() throws Exception {
    createTable("q");
    try (IngestClient client = IngestClient.connect(lbLocation(), allocator)) {
      ingest(client, "q", 0, 5);
      // The server's own validation error reaches the client unchanged through the balancer.
      assertThatThrownBy(() -> client.open(CATALOG, List.of(NAMESPACE), "missing", WalOperation.UPSERT,
          schemas.get("q")))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND))
          .hasMessageContaining("missing");
    }
    try (ReconcileRunner runner = new ReconcileRunner(config())) {
      runner.once(CATALOG, NAMESPACE + ".q");
    }
    assertThat(count("SELECT count(*) FROM default.lb.q")).isEqualTo(5L);

    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> catalog = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + lb.port() + "/catalogs/" + CATALOG)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(catalog.statusCode()).isEqualTo(200);
    assertThat(catalog.body()).contains("\"type\":\"sql\"");
    HttpResponse<String> view = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + lb.port() + "/lb/servers")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(view.body()).contains(lb.liveServers().get(0)).contains("\"live\"");
  }

  @Test
  void aRefusedConnectionIsRetriedOnTheNextServerBeforeAnyProbeNotices() throws Exception {
    // This balancer probes once at start, then not for an hour: only the proxy can notice.
    try (LoadBalancer blind = LoadBalancer.start(new InetSocketAddress("127.0.0.1", 0), List.of(), shared,
        Duration.ofHours(1))) {
      List<String> live = blind.liveServers();
      assertThat(live).hasSize(2);
      String name = tableOwnedBy(0, live, "f");
      createTable(name);
      servers[0].close();
      servers[0] = null;
      // HTTP too: each new connection may be owned by the dead server; none may fail.
      for (int i = 0; i < 6; i++) {
        HttpResponse<String> catalog = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + blind.port() + "/catalogs/" + CATALOG)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(catalog.statusCode()).as(catalog.body()).isEqualTo(200);
      }
      long start = System.nanoTime();
      try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", blind.port()), allocator)) {
        assertThat(ingest(client, name, 0, 2)).isEqualTo(1L);
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(writers.get(name)).containsExactly(1);
      assertThat(millis).as("a new stream fails over at once").isLessThan(5_000);
      assertThat(blind.liveServers()).as("the refusing server is marked down").hasSize(1);
    }
  }

  @Test
  void probesDropDeadServersFindRestartedOnesAndNoLiveServerIsAClearError() throws Exception {
    String name = tableOwnedBy(0, lb.liveServers(), "p");
    createTable(name);
    for (int i = 0; i < 2; i++) {
      servers[i].close();
      servers[i] = null;
    }
    await("no live server", () -> lb.liveServers().isEmpty());
    try (IngestClient client = IngestClient.connect(lbLocation(), allocator)) {
      assertThatThrownBy(() -> ingest(client, name, 10, 1))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAVAILABLE))
          .hasMessageContaining("no live server to forward to");
    }
    HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + lb.port() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(503);
    assertThat(health.body()).contains("no live server behind the load balancer");

    // A server coming back (on a new port) is found through its registration and takes traffic.
    startServer(1);
    await("the restarted server is live", () -> lb.liveServers().size() == 1);
    try (IngestClient client = IngestClient.connect(lbLocation(), allocator)) {
      assertThat(ingest(client, name, 20, 1)).isEqualTo(1L);
    }
    assertThat(writers.get(name)).containsExactly(1);
  }

  private String tableOwnedBy(int server, List<String> live, String prefix) {
    for (int n = 0; ; n++) {
      if (serverIndex(owner(prefix + n, live)) == server) {
        return prefix + n;
      }
    }
  }

  private String owner(String table, List<String> live) {
    return Rendezvous.order(RoutingKey.key(CATALOG, List.of(NAMESPACE), table), live).get(0);
  }

  private int serverIndex(String address) {
    for (int i = 0; i < servers.length; i++) {
      if (servers[i] != null && address.endsWith(":" + servers[i].port())) {
        return i;
      }
    }
    throw new IllegalStateException("no server at " + address);
  }

  private Location lbLocation() {
    return Location.forGrpcInsecure("127.0.0.1", lb.port());
  }

  private void createTable(String name) {
    Catalog catalog = servers[1].registry().catalog(CATALOG);
    Table table = Tables.create(catalog, TableIdentifier.of(NAMESPACE, name),
        TableDefinition.builder("id bigint not null, page string").build());
    tableByUuid.put(table.uuid().toString(), name);
    schemas.put(name, IcebergArrowSchemas.toArrow(table.schema()));
  }

  /** One stream with one batch of {@code rows}; returns the acknowledged request id. */
  private long ingest(IngestClient client, String name, long firstId, int rows) throws Exception {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schemas.get(name), allocator);
        IngestStream stream = client.open(CATALOG, List.of(NAMESPACE), name, WalOperation.UPSERT, root.getSchema())) {
      root.allocateNew();
      for (int i = 0; i < rows; i++) {
        ((BigIntVector) root.getVector(0)).setSafe(i, firstId + i);
        ((VarCharVector) root.getVector(1)).setSafe(i, ("/p" + i).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      long ack = stream.send(root).get(30, TimeUnit.SECONDS);
      stream.finish();
      return ack;
    }
  }

  private long count(String sql) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG + "\"}");
    HeaderCallOption tenant = new HeaderCallOption(headers);
    try (FlightClient client = FlightClient.builder(allocator, lbLocation()).build();
        FlightSqlClient flightSql = new FlightSqlClient(client)) {
      FlightInfo info = flightSql.execute(sql, tenant);
      try (FlightStream stream = flightSql.getStream(info.getEndpoints().get(0).getTicket(), tenant)) {
        assertThat(stream.next()).isTrue();
        return ((BigIntVector) stream.getRoot().getVector(0)).get(0);
      }
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      Thread.sleep(50);
    }
  }
}

package io.storageengine.server.lb;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.Json;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.server.BrokerProcess;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.server.WorkerProcess;
import io.storageengine.testing.TestCertificates;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small cluster with TLS on every listener: a broker, a server, a worker and a load balancer,
 * each with the certificate of a CA the test creates and that CA as {@code --tls.ca}. Ingestion
 * and HTTP through the balancer reach the server over TLS; the server schedules and the worker
 * leases through the broker over TLS, so the rows get committed.
 */
class TlsClusterTest {
  private static final String CLUSTER = "cluster-0123456789abcdef0123456789abcdef";
  private static final String ADMIN = "admin-0123456789abcdef0123456789abcdef";

  @TempDir Path dir;

  @Test
  void aClusterWithTlsEverywhereIngestsThroughTheBalancerAndCommits() throws Exception {
    TestCertificates certificates = TestCertificates.create(dir.resolve("tls"));
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.resolve("data").toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(AuthConfig.CLUSTER_TOKEN, CLUSTER)
        .with(AuthConfig.BOOTSTRAP_TOKEN, ADMIN)
        .with(TlsConfig.CERT, certificates.cert().toString())
        .with(TlsConfig.KEY, certificates.key().toString())
        .with(TlsConfig.CA, certificates.ca().toString());
    try (BrokerProcess broker = BrokerProcess.start(config);
        EngineServer server = EngineServer.start(config, Role.SERVER);
        WorkerProcess worker = WorkerProcess.start(config, 1);
        LoadBalancer lb = LoadBalancer.start(config, List.of(), Duration.ofMillis(100));
        BufferAllocator allocator = new RootAllocator()) {
      String registered = "https://127.0.0.1:" + server.port();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!lb.liveServers().contains(registered) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(lb.liveServers()).as("the server registered as a TLS server and its probe succeeded")
          .containsExactly(registered);

      server.registry().create("warehouse", CatalogConfig.embedded());
      HttpClient http = HttpClient.newBuilder().sslContext(ClientTrust.of("--tls.ca", certificates.ca()).sslContext())
          .build();
      HttpResponse<String> catalog = http.send(HttpRequest.newBuilder(
              URI.create("https://127.0.0.1:" + lb.port() + "/catalogs/warehouse"))
          .header("Authorization", "Bearer " + ADMIN).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(catalog.statusCode()).as(catalog.body()).isEqualTo(200);
      assertThat(Json.MAPPER.readTree(catalog.body()).path("name").asText()).isEqualTo("catalogs/warehouse");

      Table table = Tables.create(server.registry().catalog("warehouse"), TableIdentifier.parse("events.clicks"),
          TableDefinition.builder("id bigint not null, page string").build());
      try (IngestClient client = IngestClient.connect(Location.forGrpcTls("127.0.0.1", lb.port()), allocator,
              certificates.ca(), ADMIN);
          VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
          IngestStream stream = client.open("warehouse", List.of("events"), "clicks", WalOperation.UPSERT,
              root.getSchema())) {
        root.allocateNew();
        ((BigIntVector) root.getVector(0)).setSafe(0, 1);
        ((VarCharVector) root.getVector(1)).setSafe(0, "/p".getBytes(StandardCharsets.UTF_8));
        root.setRowCount(1);
        stream.send(root).get();
        stream.finish();
      }
      deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      Snapshot snapshot = null;
      while (snapshot == null && System.nanoTime() < deadline) {
        table.refresh();
        snapshot = table.currentSnapshot();
        Thread.sleep(100);
      }
      assertThat(snapshot).as("the server scheduled and the worker committed, both through the TLS broker")
          .isNotNull();
    }
  }
}

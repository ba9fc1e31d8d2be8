package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.broker.BrokerClient;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
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
import java.util.List;
import java.util.Optional;
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
 * Distributed mode with authentication on: the broker API takes the cluster token only, servers
 * and workers send it, and a broker in tokens mode without one refuses to start.
 */
class ClusterTokenTest {
  private static final String CLUSTER = "cluster-0123456789abcdef0123456789abcdef";
  private static final String ADMIN = "admin-0123456789abcdef0123456789abcdef";

  @TempDir Path dir;

  private ServerConfig config() {
    return ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms");
  }

  @Test
  void aBrokerInTokensModeNeedsAClusterToken() {
    assertThatThrownBy(() -> BrokerProcess.start(config()))
        .isInstanceOfSatisfying(SeException.class, e -> {
          assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("SE_AUTH_CLUSTER_TOKEN");
        });
  }

  @Test
  void serversAndWorkersReachTheBrokerWithTheClusterTokenAndNoOneElseDoes() throws Exception {
    ServerConfig config = config().with(AuthConfig.CLUSTER_TOKEN, CLUSTER).with(AuthConfig.BOOTSTRAP_TOKEN, ADMIN);
    try (BrokerProcess broker = BrokerProcess.start(config);
        EngineServer server = EngineServer.start(config, Role.SERVER);
        WorkerProcess worker = WorkerProcess.start(config, 1);
        BufferAllocator allocator = new RootAllocator()) {
      BrokerClient anonymous = new BrokerClient(server.store(), Duration.ofSeconds(5), 1, Duration.ofMillis(1));
      assertThatThrownBy(anonymous::tasks).isInstanceOfSatisfying(SeException.class,
          e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
      BrokerClient wrong = new BrokerClient(server.store(), Duration.ofSeconds(5), 1, Duration.ofMillis(1),
          Optional.of(ADMIN));
      assertThatThrownBy(wrong::tasks).isInstanceOfSatisfying(SeException.class,
          e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
      assertThat(new BrokerClient(server.store(), Optional.of(CLUSTER)).tasks()).isNotNull();
      HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + broker.port() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);

      server.registry().create("warehouse", CatalogConfig.embedded());
      Table table = Tables.create(server.registry().catalog("warehouse"), TableIdentifier.parse("events.clicks"),
          TableDefinition.builder("id bigint not null, page string").build());
      try (IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", server.port()),
              allocator, ADMIN);
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
      // The server scheduled through the broker, the worker leased from it: both with the token.
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      Snapshot snapshot = null;
      while (snapshot == null && System.nanoTime() < deadline) {
        table.refresh();
        snapshot = table.currentSnapshot();
        Thread.sleep(100);
      }
      assertThat(snapshot).as("the worker committed the WAL").isNotNull();
    }
  }
}

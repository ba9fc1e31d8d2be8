package io.storageengine.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BrokerHttpTest {
  private static final BrokerConfig CONFIG = BrokerConfig.defaults().withCommitDelay(Duration.ofMillis(2));
  private final MemoryObjectStore store = new MemoryObjectStore();
  private final BrokerClient client = new BrokerClient(store, Duration.ofSeconds(5), 4, Duration.ofMillis(20));

  @Test
  void clientRunsTheWholeTaskCycleOverHttp() {
    try (BrokerServer server = new BrokerServer(store, CONFIG, Clock.systemUTC())) {
      assertThat(client.discover()).contains(server.address);
      String key = TaskKeys.reconcileKey("sales", "0b9e2f7c-5d7a-4f44-9a55-3f1c1d2e3a4b");
      Map<String, String> payload = TaskKeys.tablePayload("sales", "0b9e2f7c-5d7a-4f44-9a55-3f1c1d2e3a4b");
      assertThat(client.schedule(key, TaskKeys.RECONCILE, payload)).isEqualTo(ScheduleOutcome.CREATED);
      assertThat(client.schedule(key, TaskKeys.RECONCILE, payload)).isEqualTo(ScheduleOutcome.COALESCED);

      LeaseGrant grant = client.lease("w1", Set.of(TaskKeys.RECONCILE), 2);
      Task task = grant.tasks().get(0);
      assertThat(TaskKeys.catalogOf(task)).isEqualTo("sales");
      assertThat(TaskKeys.tableUuidOf(task)).isEqualTo("0b9e2f7c-5d7a-4f44-9a55-3f1c1d2e3a4b");
      assertThat(client.heartbeat(key, task.leaseId())).isGreaterThan(task.leaseExpiresMs() - 1);
      assertThat(client.ackFailure(key, task.leaseId(), "catalog down", Duration.ZERO))
          .isEqualTo(AckOutcome.RETRY_SCHEDULED);
      Task retry = client.lease("w2", Set.of(), 1).tasks().get(0);
      assertThat(retry.lastError()).isEqualTo("catalog down");
      assertThat(client.ackSuccess(key, retry.leaseId())).isEqualTo(AckOutcome.DONE);
      assertThat(client.tasks().tasks()).isEmpty();

      assertThatThrownBy(() -> client.ackSuccess(key, retry.leaseId()))
          .isInstanceOf(SeException.class)
          .hasMessage("task '" + key + "' does not exist")
          .extracting(e -> ((SeException) e).code()).isEqualTo(ErrorCode.NOT_FOUND);
    }
  }

  @Test
  void badRequestsGetTheErrorBody() throws Exception {
    try (BrokerServer server = new BrokerServer(store, CONFIG, Clock.systemUTC())) {
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(server.address + "/broker/v1/schedule"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"k\",\"kind\":\"reconcile\",\"extra\":1}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(bad.body()).startsWith("{\"error\":{\"code\":\"INVALID_JSON\",\"message\":\"invalid JSON: Unrecognized field \\\"extra\\\"");
      HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create(server.address + "/broker/v1/lease")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(get.statusCode()).isEqualTo(405);
      assertThat(get.body()).contains("GET /broker/v1/lease is not supported; use POST");
      assertThatThrownBy(() -> client.lease("w", Set.of(), 0))
          .hasMessage("max tasks to lease must be >= 1, got 0");
    }
  }

  @Test
  void clientFollowsTheBrokerThatTookOver() {
    try (BrokerServer first = new BrokerServer(store, CONFIG, Clock.systemUTC())) {
      client.schedule("k1", "reconcile", Map.of());
      Task leased = client.lease("w1", Set.of(), 1).tasks().get(0);
      assertThat(client.discover()).contains(first.address);

      try (BrokerServer second = new BrokerServer(store, CONFIG, Clock.systemUTC())) {
        // The client still has the first address cached: that broker answers "not the active
        // broker", the client reads queue.json again and lands on the second.
        assertThat(client.heartbeat("k1", leased.leaseId())).isPositive();
        assertThat(first.broker.isActive()).isFalse();
        assertThat(client.schedule("k2", "reconcile", Map.of())).isEqualTo(ScheduleOutcome.CREATED);
        assertThat(client.ackSuccess("k1", leased.leaseId())).isEqualTo(AckOutcome.DONE);
        QueueDocument doc = client.tasks();
        assertThat(doc.brokerAddress()).isEqualTo(second.address);
        assertThat(doc.epoch()).isEqualTo(2);
        assertThat(doc.tasks()).extracting(Task::key).containsExactly("k2");
      }
    }
  }

  @Test
  void noBrokerIsUnavailable() {
    BrokerClient quick = new BrokerClient(store, Duration.ofSeconds(1), 2, Duration.ofMillis(1));
    assertThatThrownBy(() -> quick.schedule("k", "reconcile", Map.of()))
        .isInstanceOf(SeException.class)
        .hasMessage("no broker: broker/queue.json does not exist in memory");
    try (BrokerServer server = new BrokerServer(store, CONFIG, Clock.systemUTC())) {
      server.server.stop().join();
      assertThatThrownBy(() -> quick.schedule("k", "reconcile", Map.of()))
          .hasMessage("broker at " + server.address + " is unreachable: ConnectException")
          .extracting(e -> ((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE);
    }
  }
}

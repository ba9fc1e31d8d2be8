package io.storageengine.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class BrokerTest {
  private static final BrokerConfig CONFIG = BrokerConfig.defaults()
      .withLeaseDuration(Duration.ofSeconds(10))
      .withCommitDelay(Duration.ofMillis(20))
      .withRetry(new RetryPolicy(3, Duration.ofSeconds(1), Duration.ofSeconds(4)));

  @TempDir static Path dir;
  private final MutableClock clock = new MutableClock(1_000_000);
  private final List<Broker> brokers = new ArrayList<>();

  static Stream<String> stores() {
    return Stream.of("memory", "fs");
  }

  private static ObjectStore store(String type, String name) {
    return type.equals("memory") ? new MemoryObjectStore() : new FsObjectStore(dir.resolve(name));
  }

  private Broker broker(ObjectStore store, String address) {
    Broker b = new Broker(store, CONFIG, clock);
    brokers.add(b);
    b.start(address);
    return b;
  }

  @AfterEach
  void closeBrokers() {
    brokers.forEach(Broker::close);
  }

  @Test
  void startCreatesTheQueueWithEpochAndAddress() {
    MemoryObjectStore store = new MemoryObjectStore();
    Broker b = broker(store, "http://127.0.0.1:9001");
    QueueDocument doc = stored(store);
    assertThat(doc.epoch()).isEqualTo(1);
    assertThat(doc.brokerAddress()).isEqualTo("http://127.0.0.1:9001");
    assertThat(b.isActive()).isTrue();
  }

  @Test
  void everyAnswerFollowsItsCommit() {
    MemoryObjectStore store = new MemoryObjectStore();
    Broker b = broker(store, "a");
    assertThat(b.schedule("reconcile/c/t", "reconcile", Map.of("catalog", "c"))).isEqualTo(ScheduleOutcome.CREATED);
    assertThat(stored(store).tasks()).singleElement().satisfies(t -> {
      assertThat(t.key()).isEqualTo("reconcile/c/t");
      assertThat(t.payload()).containsEntry("catalog", "c");
    });
    LeaseGrant grant = b.lease("w1", Set.of("reconcile"), 4);
    assertThat(grant.leaseMs()).isEqualTo(10_000);
    Task leased = grant.tasks().get(0);
    assertThat(stored(store).tasks().get(0).leaseId()).isEqualTo(leased.leaseId());
    clock.advance(Duration.ofSeconds(5));
    assertThat(b.heartbeat(leased.key(), leased.leaseId())).isEqualTo(clock.millis() + 10_000);
    assertThat(stored(store).tasks().get(0).leaseExpiresMs()).isEqualTo(clock.millis() + 10_000);
    assertThat(b.ack(leased.key(), leased.leaseId(), true, null, null)).isEqualTo(AckOutcome.DONE);
    assertThat(stored(store).tasks()).isEmpty();
  }

  @Test
  void expiredLeaseIsReleasedToAnotherWorker() {
    Broker b = broker(new MemoryObjectStore(), "a");
    b.schedule("k", "reconcile", Map.of());
    Task first = b.lease("w1", Set.of(), 1).tasks().get(0);
    clock.advance(Duration.ofSeconds(9));
    assertThat(b.lease("w2", Set.of(), 1).tasks()).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    Task second = b.lease("w2", Set.of(), 1).tasks().get(0);
    assertThat(second.leaseOwner()).isEqualTo("w2");
    assertThatThrownBy(() -> b.ack("k", first.leaseId(), true, null, null))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("of task 'k' is no longer held");
    assertThat(b.ack("k", second.leaseId(), true, null, null)).isEqualTo(AckOutcome.DONE);
  }

  @Test
  void concurrentSchedulesAreGroupCommitted() throws Exception {
    MemoryObjectStore store = new MemoryObjectStore();
    Broker b = broker(store, "a");
    int n = 40;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Boolean>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String key = "reconcile/c/t" + i;
        Callable<Boolean> schedule = () -> {
          go.await();
          b.schedule(key, "reconcile", Map.of());
          // Answered only after the commit: the stored queue already holds the task.
          return stored(store).tasks().stream().anyMatch(t -> t.key().equals(key));
        };
        answers.add(pool.submit(schedule));
      }
      go.countDown();
      for (Future<Boolean> answer : answers) {
        assertThat(answer.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(stored(store).tasks()).hasSize(n);
    assertThat(b.writes()).isBetween(1L, n / 4L);
  }

  @ParameterizedTest
  @MethodSource("stores")
  void aSecondBrokerFencesTheFirst(String type) {
    ObjectStore store = store(type, "fence");
    Broker old = broker(store, "http://old");
    old.schedule("a", "reconcile", Map.of());
    Task leased = old.lease("w1", Set.of(), 1).tasks().get(0);

    Broker next = broker(store, "http://new");
    assertThat(next.epoch()).isEqualTo(2);
    assertThat(stored(store).brokerAddress()).isEqualTo("http://new");

    // The old broker's next write fails its CAS: it stops serving, and nothing it did lands.
    assertThatThrownBy(() -> old.schedule("b", "reconcile", Map.of()))
        .isInstanceOf(SeException.class)
        .hasMessage("not the active broker: broker at http://new took over with epoch 2 (this broker had epoch 1)")
        .extracting(e -> ((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(old.isActive()).isFalse();
    assertThatThrownBy(() -> old.lease("w1", Set.of(), 1))
        .hasMessageStartingWith("not the active broker: broker at http://new took over");
    assertThat(stored(store).tasks()).extracting(Task::key).containsExactly("a");

    // The new broker carries the lease on: the worker heartbeats and acknowledges there.
    next.heartbeat("a", leased.leaseId());
    assertThat(next.ack("a", leased.leaseId(), true, null, null)).isEqualTo(AckOutcome.DONE);
    assertThat(stored(store).epoch()).isEqualTo(2);
  }

  @Test
  void aFencedBrokerStopsServingEvenWithoutChanges() {
    MemoryObjectStore store = new MemoryObjectStore();
    Broker old = broker(store, "http://old");
    broker(store, "http://new");
    // Nothing to lease and nothing changed: the broker still confirms it is active first.
    assertThatThrownBy(() -> old.lease("w", Set.of(), 1))
        .hasMessageStartingWith("not the active broker: broker at http://new took over with epoch 2");
  }

  @Test
  void aStoppedBrokerAnswersUnavailable() {
    Broker b = broker(new MemoryObjectStore(), "a");
    b.close();
    assertThatThrownBy(() -> b.schedule("k", "reconcile", Map.of()))
        .isInstanceOf(SeException.class)
        .hasMessage("not the active broker: broker is shut down");
    Broker never = new Broker(new MemoryObjectStore(), CONFIG, clock);
    assertThatThrownBy(() -> never.schedule("k", "reconcile", Map.of()))
        .hasMessage("not the active broker: not started");
  }

  @Test
  void aLostWriteResponseIsNotMistakenForFencing() {
    MemoryObjectStore memory = new MemoryObjectStore();
    LosingStore store = new LosingStore(memory);
    Broker b = broker(store, "a");
    store.loseNextResponse = true;
    assertThatThrownBy(() -> b.schedule("k1", "reconcile", Map.of()))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("queue commit failed: response lost");
    // The write had landed; the broker recognises its own epoch and carries on.
    assertThat(b.schedule("k2", "reconcile", Map.of())).isEqualTo(ScheduleOutcome.CREATED);
    assertThat(b.isActive()).isTrue();
    assertThat(stored(memory).tasks()).extracting(Task::key).containsExactly("k1", "k2");
  }

  private static QueueDocument stored(ObjectStore store) {
    return QueueDocument.parse(store.get(QueueDocument.KEY).orElseThrow().data());
  }

  /** Applies a CAS and then, once, throws as if its response was lost. */
  private static final class LosingStore extends DelegatingObjectStore {
    volatile boolean loseNextResponse;

    LosingStore(ObjectStore delegate) {
      super(delegate);
    }

    @Override
    public java.util.Optional<String> putIfMatch(String key, byte[] data, String etag) {
      java.util.Optional<String> result = super.putIfMatch(key, data, etag);
      if (loseNextResponse) {
        loseNextResponse = false;
        throw SeException.unavailable("response lost", null);
      }
      return result;
    }
  }
}

package io.storageengine.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.objectstore.MemoryObjectStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkerTest {
  private static final Worker.Options FAST =
      new Worker.Options(Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofSeconds(5));

  private final MemoryObjectStore store = new MemoryObjectStore();
  private final BrokerClient client = new BrokerClient(store, Duration.ofSeconds(5), 4, Duration.ofMillis(20));
  private BrokerServer server;

  private void startBroker(Duration lease, RetryPolicy retry) {
    server = new BrokerServer(store,
        BrokerConfig.defaults().withLeaseDuration(lease).withCommitDelay(Duration.ofMillis(2)).withRetry(retry),
        Clock.systemUTC());
  }

  private Worker worker(Map<String, TaskHandler> handlers, int concurrency) {
    Worker w = new Worker(client, handlers, concurrency, Clock.systemUTC(), FAST);
    w.start();
    return w;
  }

  @AfterEach
  void stopBroker() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void runsEveryKindWithItsHandlerAndAcknowledges() throws Exception {
    startBroker(Duration.ofSeconds(10), RetryPolicy.defaults());
    Set<String> reconciled = ConcurrentHashMap.newKeySet();
    Set<String> maintained = ConcurrentHashMap.newKeySet();
    for (int i = 0; i < 6; i++) {
      client.schedule("reconcile/c/t" + i, "reconcile", Map.of("table", "t" + i));
    }
    client.schedule("maintain/c/t0", "maintain", Map.of("table", "t0"));
    try (Worker w = worker(Map.of(
        "reconcile", task -> reconciled.add(task.payload().get("table")),
        "maintain", task -> maintained.add(task.payload().get("table"))), 3)) {
      // The queue empties when the broker commits the last ack; the worker counts it just after.
      await(() -> client.tasks().tasks().isEmpty() && w.completedTasks() >= 7);
      assertThat(w.completedTasks()).isEqualTo(7);
    }
    assertThat(reconciled).containsExactlyInAnyOrder("t0", "t1", "t2", "t3", "t4", "t5");
    assertThat(maintained).containsExactly("t0");
  }

  @Test
  void failuresAreRetriedThenFailedWithTheReason() throws Exception {
    startBroker(Duration.ofSeconds(10), new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20)));
    AtomicInteger runs = new AtomicInteger();
    client.schedule("reconcile/c/bad", "reconcile", Map.of());
    try (Worker w = worker(Map.of("reconcile", task -> {
      runs.incrementAndGet();
      throw new IllegalStateException("table t is corrupt");
    }), 1)) {
      await(() -> client.tasks().tasks().get(0).state() == TaskState.FAILED);
    }
    assertThat(runs).hasValue(3);
    assertThat(client.tasks().tasks().get(0).lastError())
        .isEqualTo("gave up after 3 attempts: IllegalStateException: table t is corrupt");
  }

  @Test
  void heartbeatsKeepALongTaskLeased() throws Exception {
    startBroker(Duration.ofMillis(600), RetryPolicy.defaults());
    List<String> runs = new CopyOnWriteArrayList<>();
    client.schedule("reconcile/c/slow", "reconcile", Map.of());
    try (Worker a = worker(Map.of("reconcile", task -> {
          runs.add("a");
          Thread.sleep(1_500);
        }), 1);
        Worker b = worker(Map.of("reconcile", task -> runs.add("b")), 1)) {
      await(() -> client.tasks().tasks().isEmpty() && a.completedTasks() + b.completedTasks() >= 1);
      assertThat(a.completedTasks() + b.completedTasks()).isEqualTo(1);
    }
    // Two and a half lease durations passed, yet nobody else got the task: one run only.
    assertThat(runs).hasSize(1);
  }

  @Test
  void aKilledWorkersTaskRerunsElsewhereOnce() throws Exception {
    startBroker(Duration.ofMillis(400), RetryPolicy.defaults());
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger finishedOnA = new AtomicInteger();
    AtomicInteger ranOnB = new AtomicInteger();
    client.schedule("reconcile/c/t", "reconcile", Map.of());

    Worker a = worker(Map.of("reconcile", task -> {
      started.countDown();
      Thread.sleep(60_000);
      finishedOnA.incrementAndGet();
    }), 1);
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Task leasedByA = client.tasks().tasks().get(0);
    assertThat(leasedByA.leaseOwner()).isEqualTo(a.id());
    a.halt();

    try (Worker b = worker(Map.of("reconcile", task -> ranOnB.incrementAndGet()), 1)) {
      await(() -> client.tasks().tasks().isEmpty() && b.completedTasks() >= 1);
      assertThat(b.completedTasks()).isEqualTo(1);
    }
    assertThat(ranOnB).hasValue(1);
    assertThat(finishedOnA).hasValue(0);
    assertThat(a.completedTasks()).isZero();
  }

  @Test
  void aWorkerWaitsForTheBrokerToAppear() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    try (Worker w = worker(Map.of("reconcile", task -> ran.countDown()), 1)) {
      Thread.sleep(100);
      startBroker(Duration.ofSeconds(10), RetryPolicy.defaults());
      client.schedule("reconcile/c/t", "reconcile", Map.of());
      assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 15 s");
      }
      Thread.sleep(20);
    }
  }
}

package io.storageengine.testing;

import static io.storageengine.testing.FaultInjectingObjectStore.Operation.DELETE;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.GET;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.LIST;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.LIST_CHILDREN;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_ABSENT;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_MATCH;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FaultInjectingObjectStoreTest {
  private final MemoryObjectStore memory = new MemoryObjectStore();
  private final FaultInjectingObjectStore store = new FaultInjectingObjectStore(memory);

  @Test
  void passesThroughWithoutFaultsAndCountsCalls() {
    String etag = store.put("a/b", bytes("1"));
    assertThat(store.putIfAbsent("a/b", bytes("2"))).isEmpty();
    assertThat(store.putIfMatch("a/b", bytes("3"), etag)).isPresent();
    assertThat(store.get("a/b").orElseThrow().data()).isEqualTo(bytes("3"));
    assertThat(store.list("a/")).hasSize(1);
    store.delete("a/b");
    assertThat(store.head("a/b")).isEmpty();

    assertThat(store.calls(PUT)).isEqualTo(1);
    assertThat(store.calls(PUT_IF_ABSENT)).isEqualTo(1);
    assertThat(store.calls(PUT_IF_MATCH)).isEqualTo(1);
    assertThat(store.calls(GET)).isEqualTo(1);
    assertThat(store.totalCalls()).isEqualTo(7);
    assertThat(store.describe()).isEqualTo("faults(memory)");
    store.resetCounters();
    assertThat(store.totalCalls()).isZero();
  }

  @Test
  void failNextFailsExactlyThatManyMatchingCallsWithoutEffect() {
    store.failNext(PUT, 2, key -> key.startsWith("x/"));

    store.put("y/1", bytes("ok"));
    assertUnavailable(() -> store.put("x/1", bytes("v")), "injected failure: PUT 'x/1'");
    assertUnavailable(() -> store.put("x/2", bytes("v")), "injected failure: PUT 'x/2'");
    store.put("x/3", bytes("v"));

    assertThat(memory.list("")).extracting(i -> i.key()).containsExactly("x/3", "y/1");
    assertThat(store.calls(PUT)).isEqualTo(4);
  }

  @Test
  void lostResponsePerformsTheOperationThenFails() {
    store.loseResponseNext(PUT_IF_ABSENT, 1);

    assertUnavailable(() -> store.putIfAbsent("k", bytes("v")),
        "injected lost response: PUT_IF_ABSENT 'k' was performed");
    assertThat(memory.get("k").orElseThrow().data()).isEqualTo(bytes("v"));
    assertThat(store.putIfAbsent("k", bytes("w"))).isEmpty();
  }

  @Test
  void outageFailsEverythingUntilItEnds() {
    store.put("k", bytes("v"));
    store.startOutage();
    assertThat(store.inOutage()).isTrue();
    assertUnavailable(() -> store.get("k"), "injected outage: GET 'k'");
    assertUnavailable(() -> store.list(""), "injected outage: LIST ''");
    assertUnavailable(() -> store.listChildren("a/"), "injected outage: LIST_CHILDREN 'a/'");
    assertUnavailable(() -> store.delete("k"), "injected outage: DELETE 'k'");
    store.endOutage();
    assertThat(store.get("k")).isPresent();
    assertThat(store.calls(LIST)).isEqualTo(1);
    assertThat(store.calls(LIST_CHILDREN)).isEqualTo(1);
    assertThat(store.calls(DELETE)).isEqualTo(1);
  }

  @Test
  void delaySlowsTheOperation() {
    store.delay(GET, Duration.ofMillis(60));
    long start = System.nanoTime();
    store.get("k");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(
        Duration.ofMillis(60));
    store.clearFaults();
    start = System.nanoTime();
    store.get("k");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(60));
  }

  @Test
  void afterHookPausesACallerOnceTheOperationTookEffect() throws Exception {
    CountDownLatch reached = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (var pause = store.after(PUT, key -> key.equals("slow"), (op, key) -> {
      reached.countDown();
      release.await();
    })) {
      CompletableFuture<String> writer = CompletableFuture.supplyAsync(
          () -> store.put("slow", bytes("v")));
      assertThat(reached.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(memory.get("slow")).isPresent();
      assertThat(writer).isNotDone();
      store.put("fast", bytes("v")); // other keys are not held up
      release.countDown();
      assertThat(writer.get(5, TimeUnit.SECONDS)).isNotEmpty();
    }
  }

  @Test
  void beforeHookRunsFirstAndStopsAfterClose() {
    List<String> seen = new ArrayList<>();
    var registration = store.before(GET, key -> true, (op, key) -> {
      seen.add(op + " " + key + " present=" + memory.get(key).isPresent());
    });
    store.get("k");
    registration.close();
    store.get("k");
    assertThat(seen).containsExactly("GET k present=false");
  }

  @Test
  void hookExceptionFailsTheCall() {
    store.before(PUT, key -> true, (op, key) -> {
      throw new SeException(ErrorCode.CONFLICT, "refused by test hook");
    });
    assertThatThrownBy(() -> store.put("k", bytes("v")))
        .isInstanceOf(SeException.class)
        .hasMessage("refused by test hook");
    assertThat(memory.get("k")).isEmpty();
  }

  @Test
  void concurrentCallsConsumeEachFailureExactlyOnce() throws Exception {
    store.failNext(PUT, 50);
    int threads = 4;
    int perThread = 100;
    List<CompletableFuture<Integer>> results = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      results.add(CompletableFuture.supplyAsync(() -> {
        int failed = 0;
        for (int i = 0; i < perThread; i++) {
          try {
            store.put("t" + id + "/" + i, bytes("v"));
          } catch (SeException e) {
            failed++;
          }
        }
        return failed;
      }));
    }
    int failed = 0;
    for (CompletableFuture<Integer> r : results) {
      failed += r.get(30, TimeUnit.SECONDS);
    }
    assertThat(failed).isEqualTo(50);
    assertThat(memory.list("")).hasSize(threads * perThread - 50);
    assertThat(store.calls(PUT)).isEqualTo(threads * perThread);
  }

  private static void assertUnavailable(Runnable call, String messagePrefix) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .hasMessageStartingWith(messagePrefix);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }
}

package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretStore.Secret;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The semantics written on {@link SecretStore}, run against every backend. */
abstract class SecretStoreContractTest {
  protected SecretStore store;

  protected abstract SecretStore newStore();

  @BeforeEach
  void open() {
    store = newStore();
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void absentKeyIsEmpty() {
    assertThat(store.get("catalog/missing")).isEmpty();
  }

  @Test
  void createStoresValueOnce() {
    assertThat(store.create("catalog/a", bytes("one"))).isTrue();
    assertThat(store.create("catalog/a", bytes("two"))).isFalse();
    assertThat(text(store.get("catalog/a").orElseThrow())).isEqualTo("one");
  }

  @Test
  void putCreatesAndReplacesWithNewVersion() {
    store.put("catalog/a", bytes("one"));
    Secret first = store.get("catalog/a").orElseThrow();
    store.put("catalog/a", bytes("two"));
    Secret second = store.get("catalog/a").orElseThrow();
    assertThat(text(first)).isEqualTo("one");
    assertThat(text(second)).isEqualTo("two");
    assertThat(second.version()).isNotEqualTo(first.version());
  }

  @Test
  void rewritingSameBytesStillChangesVersion() {
    store.put("catalog/a", bytes("same"));
    String v1 = store.get("catalog/a").orElseThrow().version();
    store.put("catalog/a", bytes("same"));
    assertThat(store.get("catalog/a").orElseThrow().version()).isNotEqualTo(v1);
  }

  @Test
  void unchangedValueKeepsVersion() {
    store.put("catalog/a", bytes("v"));
    assertThat(store.get("catalog/a").orElseThrow().version())
        .isEqualTo(store.get("catalog/a").orElseThrow().version());
  }

  @Test
  void deleteIsIdempotentAndAllowsRecreate() {
    store.put("catalog/a", bytes("one"));
    store.delete("catalog/a");
    store.delete("catalog/a");
    assertThat(store.get("catalog/a")).isEmpty();
    assertThat(store.create("catalog/a", bytes("again"))).isTrue();
    assertThat(text(store.get("catalog/a").orElseThrow())).isEqualTo("again");
  }

  @Test
  void binaryValuesRoundTripAndAreCopied() {
    byte[] value = {0, 1, (byte) 0xff, '"', '\n'};
    store.put("k", value);
    value[0] = 42;
    byte[] read = store.get("k").orElseThrow().value();
    assertThat(read).containsExactly(0, 1, (byte) 0xff, '"', '\n');
    read[1] = 42;
    assertThat(store.get("k").orElseThrow().value()).containsExactly(0, 1, (byte) 0xff, '"', '\n');
  }

  @Test
  void keysAreIsolated() {
    store.put("catalog/a", bytes("a"));
    store.put("catalog/ab", bytes("ab"));
    store.delete("catalog/a");
    assertThat(text(store.get("catalog/ab").orElseThrow())).isEqualTo("ab");
  }

  @Test
  void invalidKeysAreRefused() {
    for (String bad : new String[] {"", "/a", "a/", "a//b", "../x", "A/b", "a b"}) {
      assertThatThrownBy(() -> store.get(bad))
          .isInstanceOf(SeException.class)
          .hasMessageContaining("invalid secret key '" + bad + "'")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void toStringNeverShowsTheValue() {
    store.put("catalog/a", bytes("hunter2"));
    assertThat(store.get("catalog/a").orElseThrow().toString()).doesNotContain("hunter2");
  }

  @Test
  void concurrentCreatesHaveExactlyOneWinner() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        String value = "writer-" + i;
        results.add(pool.submit(() -> {
          start.await();
          return store.create("catalog/race", bytes(value));
        }));
      }
      start.countDown();
      int winners = 0;
      String winnerValue = null;
      for (int i = 0; i < threads; i++) {
        if (results.get(i).get()) {
          winners++;
          winnerValue = "writer-" + i;
        }
      }
      assertThat(winners).isEqualTo(1);
      assertThat(text(store.get("catalog/race").orElseThrow())).isEqualTo(winnerValue);
    } finally {
      pool.shutdownNow();
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  static String text(Secret s) {
    return new String(s.value(), UTF_8);
  }
}

package io.storageengine.objectstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link ObjectStore} contract, run against every backend: extend it and implement
 * {@link #newStore()} to return an empty store. Other modules can run it against their own
 * wrappers through this module's test-jar.
 */
public abstract class ObjectStoreContractTest {
  private static final List<String> INVALID_KEYS =
      List.of("", "/a", "a/", "a//b", "./a", "a/./b", "a/../b", "..");

  protected ObjectStore store;

  /** A new, empty store; closed after each test. */
  protected abstract ObjectStore newStore();

  @BeforeEach
  void openStore() {
    store = newStore();
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Test
  void missingKeysReadAsEmpty() {
    assertThat(store.get("missing/key")).isEmpty();
    assertThat(store.getRange("missing/key", 0, 10)).isEmpty();
    assertThat(store.head("missing/key")).isEmpty();
    assertThat(store.list("missing/")).isEmpty();
    assertThat(store.listChildren("missing/")).isEqualTo(ObjectStore.Children.EMPTY);
    // An empty store has no children at its root either (backends' own files are not keys).
    assertThat(store.listChildren("")).isEqualTo(ObjectStore.Children.EMPTY);
  }

  @Test
  void putThenReadBack() {
    byte[] data = bytes("hello, object store");
    String etag = store.put("a/b/c.txt", data);

    assertThat(etag).isNotBlank().doesNotContain("\"");
    ObjectStore.Blob blob = store.get("a/b/c.txt").orElseThrow();
    assertThat(blob.data()).isEqualTo(data);
    assertThat(blob.etag()).isEqualTo(etag);
    assertThat(store.head("a/b/c.txt").map(ObjectStore.ObjectInfo::withoutTime))
        .contains(new ObjectStore.ObjectInfo("a/b/c.txt", data.length, etag));
  }

  @Test
  void emptyAndBinaryBlobsRoundTrip() {
    byte[] binary = new byte[256];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) i;
    }
    store.put("empty", new byte[0]);
    store.put("binary", binary);

    assertThat(store.get("empty").orElseThrow().data()).isEmpty();
    assertThat(store.head("empty").orElseThrow().size()).isZero();
    assertThat(store.get("binary").orElseThrow().data()).isEqualTo(binary);
  }

  @Test
  void largeBlobRoundTripsAndReadsInRanges() {
    byte[] large = new byte[3 * 1024 * 1024 + 17];
    new Random(42).nextBytes(large);
    store.put("large.bin", large);

    assertThat(store.get("large.bin").orElseThrow().data()).isEqualTo(large);
    assertThat(store.getRange("large.bin", 1_000_000, 4096).orElseThrow())
        .isEqualTo(java.util.Arrays.copyOfRange(large, 1_000_000, 1_004_096));
  }

  @Test
  void putReplacesContentAndChangesTheEtag() {
    String first = store.put("k", bytes("one"));
    String second = store.put("k", bytes("two"));

    assertThat(second).isNotEqualTo(first);
    assertThat(text(store.get("k"))).isEqualTo("two");
    assertThat(store.head("k").orElseThrow().etag()).isEqualTo(second);
  }

  @Test
  void getRangeReturnsTheRequestedBytesOrFewerAtTheEnd() {
    store.put("r", bytes("0123456789"));

    assertThat(new String(store.getRange("r", 0, 4).orElseThrow(), UTF_8)).isEqualTo("0123");
    assertThat(new String(store.getRange("r", 3, 4).orElseThrow(), UTF_8)).isEqualTo("3456");
    assertThat(new String(store.getRange("r", 7, 100).orElseThrow(), UTF_8)).isEqualTo("789");
    assertThat(store.getRange("r", 9, 1).orElseThrow()).containsExactly('9');
    assertThat(store.getRange("r", 10, 5).orElseThrow()).isEmpty();
    assertThat(store.getRange("r", 50, 5).orElseThrow()).isEmpty();
    assertThat(store.getRange("r", 2, 0).orElseThrow()).isEmpty();
  }

  @Test
  void getRangeRejectsNegativeArguments() {
    store.put("r", bytes("0123456789"));

    assertThatThrownBy(() -> store.getRange("r", -1, 4))
        .isInstanceOf(SeException.class)
        .hasMessage("invalid range of object key 'r': offset -1, length 4 (both must be >= 0)");
    assertThatThrownBy(() -> store.getRange("r", 0, -4))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("offset 0, length -4");
  }

  @Test
  void putIfAbsentCreatesOnlyOnce() {
    Optional<String> created = store.putIfAbsent("once", bytes("first"));
    Optional<String> again = store.putIfAbsent("once", bytes("second"));

    assertThat(created).isPresent();
    assertThat(again).isEmpty();
    ObjectStore.Blob blob = store.get("once").orElseThrow();
    assertThat(new String(blob.data(), UTF_8)).isEqualTo("first");
    assertThat(blob.etag()).isEqualTo(created.get());
  }

  @Test
  void putIfAbsentSucceedsAgainAfterDelete() {
    store.putIfAbsent("k", bytes("one")).orElseThrow();
    store.delete("k");

    assertThat(store.putIfAbsent("k", bytes("two"))).isPresent();
    assertThat(text(store.get("k"))).isEqualTo("two");
  }

  @Test
  void putIfMatchSwapsOnlyTheCurrentVersion() {
    String v1 = store.put("state.json", bytes("v1"));
    Optional<String> v2 = store.putIfMatch("state.json", bytes("v2"), v1);

    assertThat(v2).isPresent().get().isNotEqualTo(v1);
    assertThat(text(store.get("state.json"))).isEqualTo("v2");
    assertThat(store.head("state.json").orElseThrow().etag()).isEqualTo(v2.get());

    // The old etag is stale now: the swap fails and the content stays.
    assertThat(store.putIfMatch("state.json", bytes("v3"), v1)).isEmpty();
    assertThat(store.putIfMatch("state.json", bytes("v3"), "not-an-etag")).isEmpty();
    assertThat(store.putIfMatch("state.json", bytes("v3"), null)).isEmpty();
    assertThat(text(store.get("state.json"))).isEqualTo("v2");
  }

  @Test
  void largeConditionalWritesThatFailReturnEmpty() {
    byte[] large = new byte[2 * 1024 * 1024];
    new Random(7).nextBytes(large);
    String etag = store.put("big", bytes("small"));

    // A server may reject these before reading the body; the client must still see a clean
    // "condition failed", not a broken upload.
    assertThat(store.putIfAbsent("big", large)).isEmpty();
    assertThat(store.putIfMatch("big", large, etag + "0")).isEmpty();
    assertThat(store.putIfMatch("big-missing", large, etag)).isEmpty();
    assertThat(text(store.get("big"))).isEqualTo("small");
  }

  @Test
  void putIfMatchOnAMissingKeyFailsAndCreatesNothing() {
    String etag = store.put("k", bytes("x"));
    store.delete("k");

    assertThat(store.putIfMatch("k", bytes("y"), etag)).isEmpty();
    assertThat(store.putIfMatch("never-there", bytes("y"), etag)).isEmpty();
    assertThat(store.get("k")).isEmpty();
    assertThat(store.get("never-there")).isEmpty();
  }

  @Test
  void etagsFromEveryWriteMatchHeadAndList() {
    String put = store.put("e/1", bytes("a"));
    String absent = store.putIfAbsent("e/2", bytes("b")).orElseThrow();
    String swapped = store.putIfMatch("e/1", bytes("c"), put).orElseThrow();

    assertThat(store.list("e/")).map(ObjectStore.ObjectInfo::withoutTime).containsExactly(
        new ObjectStore.ObjectInfo("e/1", 1, swapped),
        new ObjectStore.ObjectInfo("e/2", 1, absent));
  }

  @Test
  void listReturnsKeysInLexicographicOrderWithinThePrefix() {
    for (String key : List.of("p/x2", "p/y/z", "q", "p/x10", "pa", "p/y-1", "p/x1", "o/p")) {
      store.put(key, bytes(key));
    }

    assertThat(keys("")).containsExactly(
        "o/p", "p/x1", "p/x10", "p/x2", "p/y-1", "p/y/z", "pa", "q");
    assertThat(keys("p")).containsExactly("p/x1", "p/x10", "p/x2", "p/y-1", "p/y/z", "pa");
    assertThat(keys("p/")).containsExactly("p/x1", "p/x10", "p/x2", "p/y-1", "p/y/z");
    assertThat(keys("p/x1")).containsExactly("p/x1", "p/x10");
    // '-' sorts before '/', so a key beside a "directory" comes first.
    assertThat(keys("p/y")).containsExactly("p/y-1", "p/y/z");
    assertThat(keys("p/y/")).containsExactly("p/y/z");
    assertThat(keys("p/y/z")).containsExactly("p/y/z");
    assertThat(keys("p/z")).isEmpty();
    assertThat(keys("zzz/")).isEmpty();
    assertThat(keys("../")).isEmpty();
  }

  @Test
  void listReportsSizesAndEtags() {
    String etag = store.put("s/k", bytes("12345"));

    assertThat(store.list("s/")).map(ObjectStore.ObjectInfo::withoutTime)
        .containsExactly(new ObjectStore.ObjectInfo("s/k", 5, etag));
  }

  @Test
  void headAndListsSayWhenAnObjectWasWritten() {
    // The store's clock, to its precision (S3 keeps whole seconds): within a margin of ours.
    java.time.Instant before = java.time.Instant.now().minusSeconds(2);
    store.put("t/k", bytes("1"));
    java.time.Instant after = java.time.Instant.now().plusSeconds(2);
    ObjectStore.ObjectInfo head = store.head("t/k").orElseThrow();
    assertThat(head.lastModified()).isBetween(before, after);
    assertThat(store.list("t/")).singleElement().extracting(ObjectStore.ObjectInfo::lastModified)
        .isEqualTo(head.lastModified());
    assertThat(store.listChildren("t/").objects()).singleElement().extracting(ObjectStore.ObjectInfo::lastModified)
        .isEqualTo(head.lastModified());
  }

  @Test
  void listChildrenReturnsOneLevelBelowThePrefix() {
    for (String key : List.of("p/x2", "p/y/z", "q", "p/x10", "pa", "p/y-1", "p/x1", "o/p",
        "p/y/w/v", "p/y/w/u")) {
      store.put(key, bytes(key));
    }

    assertChildren("", List.of("pa", "q"), List.of("o/", "p/"));
    assertChildren("p", List.of("pa"), List.of("p/"));
    assertChildren("p/", List.of("p/x1", "p/x10", "p/x2", "p/y-1"), List.of("p/y/"));
    assertChildren("p/x1", List.of("p/x1", "p/x10"), List.of());
    // '-' sorts before '/': a key beside a directory of the same stem is an object of its own.
    assertChildren("p/y", List.of("p/y-1"), List.of("p/y/"));
    assertChildren("p/y/", List.of("p/y/z"), List.of("p/y/w/"));
    assertChildren("p/y/w/", List.of("p/y/w/u", "p/y/w/v"), List.of());
    assertChildren("p/y/z", List.of("p/y/z"), List.of());
    assertChildren("p/z", List.of(), List.of());
    assertChildren("zzz/", List.of(), List.of());
    assertChildren("../", List.of(), List.of());
  }

  @Test
  void listChildrenReportsSizesAndEtagsOfObjects() {
    String etag = store.put("c/k", bytes("12345"));
    store.put("c/d/k", bytes("x"));

    ObjectStore.Children children = store.listChildren("c/");
    assertThat(new ObjectStore.Children(children.objects().stream().map(ObjectStore.ObjectInfo::withoutTime).toList(),
        children.directories())).isEqualTo(new ObjectStore.Children(
        List.of(new ObjectStore.ObjectInfo("c/k", 5, etag)), List.of("c/d/")));
  }

  @Test
  void aDirectoryIsListedOnlyWhileAKeyLiesBelowIt() {
    store.put("t/a/b/c", bytes("1"));
    store.put("t/a/d", bytes("2"));
    store.put("t/e/f", bytes("3"));

    store.delete("t/a/b/c");
    assertChildren("t/", List.of(), List.of("t/a/", "t/e/"));
    assertChildren("t/a/", List.of("t/a/d"), List.of());

    store.delete("t/a/d");
    store.delete("t/e/f");
    assertChildren("t/", List.of(), List.of());
    assertChildren("", List.of(), List.of());

    store.put("t/e/g", bytes("4"));
    assertChildren("t/", List.of(), List.of("t/e/"));
  }

  @Test
  void listChildrenNamesEachDirectoryOnceHoweverManyKeysLieBelowIt() {
    for (int i = 0; i < 30; i++) {
      store.put(String.format("m/dir/%02d/seg", i), bytes("x"));
    }
    store.put("m/other", bytes("y"));

    assertChildren("m/", List.of("m/other"), List.of("m/dir/"));
    assertThat(store.listChildren("m/dir/").directories()).hasSize(30)
        .startsWith("m/dir/00/", "m/dir/01/").endsWith("m/dir/29/");
  }

  @Test
  void deleteRemovesTheKeyAndToleratesMissingKeys() {
    store.put("d/1", bytes("x"));
    store.put("d/2", bytes("y"));

    store.delete("d/1");
    store.delete("d/1");
    store.delete("never/there");

    assertThat(store.get("d/1")).isEmpty();
    assertThat(store.head("d/1")).isEmpty();
    assertThat(keys("d/")).containsExactly("d/2");
  }

  @Test
  void everyOperationRejectsInvalidKeys() {
    for (String key : INVALID_KEYS) {
      String expected = "invalid object key '" + key + "'";
      assertInvalid(() -> store.get(key), expected);
      assertInvalid(() -> store.getRange(key, 0, 1), expected);
      assertInvalid(() -> store.head(key), expected);
      assertInvalid(() -> store.put(key, bytes("x")), expected);
      assertInvalid(() -> store.putIfAbsent(key, bytes("x")), expected);
      assertInvalid(() -> store.putIfMatch(key, bytes("x"), "etag"), expected);
      assertInvalid(() -> store.delete(key), expected);
    }
    assertInvalid(() -> store.get(null), "invalid object key 'null'");
    assertThat(keys("")).isEmpty();
  }

  @Test
  void nullDataAndNullPrefixAreRejected() {
    assertInvalid(() -> store.put("k", null), "data of object key 'k' must not be null");
    assertInvalid(() -> store.putIfAbsent("k", null), "data of object key 'k' must not be null");
    assertInvalid(() -> store.putIfMatch("k", null, "e"), "data of object key 'k' must not be null");
    assertInvalid(() -> store.list(null), "object key prefix must not be null");
    assertInvalid(() -> store.listChildren(null), "object key prefix must not be null");
    assertThat(store.get("k")).isEmpty();
  }

  @Test
  void describeNamesTheBackend() {
    assertThat(store.describe()).isNotBlank();
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void exactlyOneOfManyConcurrentPutIfAbsentWins() throws Exception {
    int threads = 16;
    for (int round = 0; round < 4; round++) {
      String key = "race/create-" + round;
      List<Optional<String>> results = runConcurrently(threads, i ->
          store.putIfAbsent(key, bytes("writer-" + i)));

      List<Integer> winners = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        if (results.get(i).isPresent()) {
          winners.add(i);
        }
      }
      assertThat(winners).as("winners of round %d", round).hasSize(1);
      ObjectStore.Blob stored = store.get(key).orElseThrow();
      assertThat(new String(stored.data(), UTF_8)).isEqualTo("writer-" + winners.get(0));
      assertThat(stored.etag()).isEqualTo(results.get(winners.get(0)).get());
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void concurrentCompareAndSwapLosesNoUpdate() throws Exception {
    int threads = 8;
    int incrementsEach = 25;
    store.put("race/counter", bytes("0"));

    runConcurrently(threads, i -> {
      for (int done = 0; done < incrementsEach; ) {
        ObjectStore.Blob current = store.get("race/counter").orElseThrow();
        int value = Integer.parseInt(new String(current.data(), UTF_8));
        if (store.putIfMatch("race/counter", bytes(Integer.toString(value + 1)), current.etag())
            .isPresent()) {
          done++;
        }
      }
      return null;
    });

    assertThat(text(store.get("race/counter"))).isEqualTo(Integer.toString(threads * incrementsEach));
  }

  /** A step of a concurrent test, run by thread {@code i}. */
  protected interface ThreadStep<T> {
    T run(int i) throws Exception;
  }

  /** Runs {@code step} on {@code threads} threads released together; the results in order. */
  protected static <T> List<T> runConcurrently(int threads, ThreadStep<T> step) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch ready = new CountDownLatch(threads);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        int index = i;
        Callable<T> task = () -> {
          ready.countDown();
          go.await();
          return step.run(index);
        };
        futures.add(pool.submit(task));
      }
      ready.await();
      go.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> future : futures) {
        results.add(future.get(2, TimeUnit.MINUTES));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  protected static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }

  protected static String text(Optional<ObjectStore.Blob> blob) {
    return new String(blob.orElseThrow().data(), UTF_8);
  }

  protected List<String> keys(String prefix) {
    return store.list(prefix).stream().map(ObjectStore.ObjectInfo::key).toList();
  }

  private void assertChildren(String prefix, List<String> objects, List<String> directories) {
    ObjectStore.Children children = store.listChildren(prefix);
    assertThat(children.objects()).extracting(ObjectStore.ObjectInfo::key)
        .as("objects below '%s'", prefix).containsExactlyElementsOf(objects);
    assertThat(children.directories())
        .as("directories below '%s'", prefix).containsExactlyElementsOf(directories);
  }

  private static void assertInvalid(Runnable call, String message) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageStartingWith(message);
  }
}

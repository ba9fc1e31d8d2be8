package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@link KeyIndex} and {@link KeyIndexes} against plain maps. */
class KeyIndexTest {
  private record Row(int ordinal, long position, long version, long rowId) {}

  @Test
  void randomPutsRemovesAndLookupsMatchAMap() {
    Random rnd = new Random(42);
    KeyIndex index = new KeyIndex(Map.of(), true, 16, 1L << 30);
    Map<Long, Row> model = new HashMap<>();
    for (int step = 0; step < 200_000; step++) {
      // A small key space so probe runs collide, wrap around and shift back on removal.
      long key = rnd.nextInt(5_000) - 2_500L;
      if (rnd.nextInt(3) == 0) {
        assertThat(index.remove(key)).isEqualTo(model.remove(key) != null);
      } else {
        Row row = new Row(rnd.nextInt(10), rnd.nextInt(1 << 20), rnd.nextLong(),
            rnd.nextBoolean() ? KeyIndex.NONE : rnd.nextInt(1_000_000));
        index.put(key, row.ordinal(), row.position(), row.version(), row.rowId());
        model.put(key, row);
      }
      if (step % 20_000 == 0) {
        assertSame(index, model);
      }
    }
    assertSame(index, model);
  }

  @Test
  void extremeKeysAndPositions() {
    KeyIndex index = new KeyIndex(Map.of(), false, 0, 1L << 20);
    index.put(Long.MIN_VALUE, 0, 0, KeyIndex.NONE, KeyIndex.NONE);
    index.put(Long.MAX_VALUE, 7, Integer.MAX_VALUE, KeyIndex.NONE, 5);
    index.put(0, 3, 1, KeyIndex.NONE, KeyIndex.NONE);
    KeyIndex.Hits hits = index.lookup(new long[] {Long.MAX_VALUE, 1, Long.MIN_VALUE, 0}, 4);
    assertThat(hits.count).isEqualTo(3);
    assertThat(hits.keys).startsWith(Long.MAX_VALUE, Long.MIN_VALUE, 0);
    assertThat(hits.ordinals).startsWith(7, 0, 3);
    assertThat(hits.positions).startsWith(Integer.MAX_VALUE, 0, 1);
    assertThat(hits.rowIds).startsWith(5, KeyIndex.NONE, KeyIndex.NONE);
    assertThatThrownBy(() -> index.put(9, 0, 1L << 31, 0, 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aSecondLiveRowOfAKeyIsRefused() {
    KeyIndex index = new KeyIndex(Map.of(), true, 4, 1L << 20);
    assertThat(index.add(5, 0, 0, 1, KeyIndex.NONE)).isTrue();
    assertThat(index.add(5, 1, 3, 2, KeyIndex.NONE)).isFalse();
    assertThat(index.lookup(new long[] {5}, 1).ordinals[0]).isZero();
  }

  @Test
  void aPendingChangeAppliesOnlyWhenItsFileSetIsPlanned() {
    Map<String, String> before = Map.of("a.parquet", "");
    Map<String, String> after = Map.of("a.parquet", "dv.puffin@4", "b.parquet", "");
    KeyIndex index = new KeyIndex(before, true, 4, 1L << 20);
    int a = index.ordinal("a.parquet");
    index.put(1, a, 0, 10, KeyIndex.NONE);
    index.put(2, a, 1, 10, KeyIndex.NONE);

    // The pass replaced key 1's row and deleted key 2's: the commit did not land.
    index.pend(after, new long[] {1, 2}, 2, List.of(
        new KeyIndex.WrittenFile("b.parquet", new long[] {1}, new long[] {0}, new long[] {11}, new long[] {100})));
    assertThat(index.matches(before)).isTrue();
    assertThat(index.lookup(new long[] {1, 2}, 2).count).isEqualTo(2);
    assertThat(index.matches(after)).as("the dropped change is gone").isFalse();

    // Again, and this time it landed.
    index.pend(after, new long[] {1, 2}, 2, List.of(
        new KeyIndex.WrittenFile("b.parquet", new long[] {1}, new long[] {0}, new long[] {11}, new long[] {100})));
    assertThat(index.matches(after)).isTrue();
    assertThat(index.files()).isEqualTo(after);
    KeyIndex.Hits hits = index.lookup(new long[] {1, 2}, 2);
    assertThat(hits.count).isEqualTo(1);
    assertThat(index.location(hits.ordinals[0])).isEqualTo("b.parquet");
    assertThat(hits.versions[0]).isEqualTo(11);
    assertThat(hits.rowIds[0]).isEqualTo(100);

    // Another writer changed the files: no match, whatever is pending.
    assertThat(index.matches(Map.of("c.parquet", ""))).isFalse();
  }

  @Test
  void anIndexNeverOutgrowsItsBudget() {
    long budget = KeyIndex.bytesFor(1_000, false);
    assertThatThrownBy(() -> new KeyIndex(Map.of(), false, 100_000, budget)).isInstanceOf(KeyIndex.Unusable.class);
    KeyIndex index = new KeyIndex(Map.of(), false, 1_000, budget);
    assertThatThrownBy(() -> {
      for (long k = 0; k < 100_000; k++) {
        index.put(k, 0, k, KeyIndex.NONE, KeyIndex.NONE);
      }
    }).isInstanceOf(KeyIndex.Unusable.class);
    assertThat(index.bytes()).isLessThanOrEqualTo(budget);
  }

  @Test
  void theCacheLendsEachIndexToOnePassAndKeepsToItsBudget() throws Exception {
    KeyIndex small = new KeyIndex(Map.of(), false, 1_000, 1L << 30);
    KeyIndexes indexes = new KeyIndexes(3 * small.bytes());
    KeyIndexes.Key t1 = new KeyIndexes.Key("tenant1", UUID.randomUUID(), -1);
    KeyIndexes.Key t2 = new KeyIndexes.Key("tenant2", t1.table(), -1);
    indexes.give(t1, small);
    assertThat(indexes.tryTake(t2)).as("another tenant's index of the same table id").isNull();
    assertThat(indexes.take(t1)).isSameAs(small);
    assertThat(indexes.tryTake(t1)).as("lent out").isNull();
    indexes.give(t1, small);

    KeyIndexes.Key s0 = new KeyIndexes.Key("tenant1", UUID.randomUUID(), 0);
    KeyIndexes.Key s1 = new KeyIndexes.Key("tenant1", s0.table(), 1);
    indexes.give(s0, new KeyIndex(Map.of(), false, 1_000, 1L << 30));
    indexes.give(s1, new KeyIndex(Map.of(), false, 1_000, 1L << 30));
    assertThat(indexes.held()).containsExactly(3, 3 * small.bytes());
    assertThat(indexes.reserve(2 * small.bytes())).isTrue();
    assertThat(indexes.held()[0]).as("least recently given back dropped").isEqualTo(1);
    assertThat(indexes.tryTake(t1)).isNull();
    assertThat(indexes.tryTake(s0)).isNull();
    KeyIndex kept = indexes.tryTake(s1);
    assertThat(kept).isNotNull();
    indexes.give(s1, kept);
    assertThat(indexes.reserve(4 * small.bytes())).isFalse();
  }

  /**
   * A pass waits for the index a reader holds (and then gets it), rather than finding none and
   * building another; a pass that ends its loan without an index lets the next one in.
   */
  @Test
  void aPassWaitsForTheIndexAReaderHolds() throws Exception {
    KeyIndexes indexes = new KeyIndexes(1L << 30);
    KeyIndexes.Key key = new KeyIndexes.Key("tenant1", UUID.randomUUID(), -1);
    KeyIndex index = new KeyIndex(Map.of(), false, 16, 1L << 30);
    indexes.give(key, index);
    KeyIndex read = indexes.tryTake(key);
    assertThat(read).isSameAs(index);
    java.util.concurrent.CompletableFuture<KeyIndex> pass = takeAsync(indexes, key);
    Thread.sleep(100);
    assertThat(pass).as("waiting while the reader holds it").isNotDone();
    indexes.give(key, read);
    assertThat(pass.get(10, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(index);

    java.util.concurrent.CompletableFuture<KeyIndex> next = takeAsync(indexes, key);
    Thread.sleep(100);
    assertThat(next).isNotDone();
    indexes.giveUp(key); // the first pass dropped its index
    assertThat(next.get(10, java.util.concurrent.TimeUnit.SECONDS)).as("none left: the next pass builds").isNull();
  }

  /**
   * A reader (a WAL tail fold) waits a bounded time for the index a pass holds and then gets it,
   * gives up when the wait runs out, and never waits for a background sync.
   */
  @Test
  void aReaderWaitsBrieflyForAPassButNotForABackgroundSync() throws Exception {
    KeyIndexes indexes = new KeyIndexes(1L << 30);
    KeyIndexes.Key key = new KeyIndexes.Key("tenant1", UUID.randomUUID(), -1);
    KeyIndex index = new KeyIndex(Map.of(), false, 16, 1L << 30);
    indexes.give(key, index);
    KeyIndex pass = indexes.take(key);
    java.util.concurrent.CompletableFuture<KeyIndex> reader = java.util.concurrent.CompletableFuture.supplyAsync(
        () -> indexes.tryTake(key, java.util.concurrent.TimeUnit.SECONDS.toNanos(10)));
    Thread.sleep(100);
    assertThat(reader).as("waiting while the pass holds it").isNotDone();
    indexes.give(key, pass);
    assertThat(reader.get(10, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(index);

    long started = System.nanoTime();
    assertThat(indexes.tryTake(key, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(150)))
        .as("the reader holds it: the wait runs out").isNull();
    assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(150));
    indexes.give(key, index);

    try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
        io.storageengine.duckdb.DuckRuntime runtime = io.storageengine.duckdb.DuckRuntime.temporary(0)) {
      indexes.syncInBackgroundWith(runtime, allocator, 1, 1);
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      KeyIndex synced = indexes.take(key);
      indexes.syncInBackground(key, synced, session -> {
        try {
          return release.await(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      long before = System.nanoTime();
      assertThat(indexes.tryTake(key, java.util.concurrent.TimeUnit.SECONDS.toNanos(10)))
          .as("a background sync holds it: no wait").isNull();
      assertThat(System.nanoTime() - before).isLessThan(java.util.concurrent.TimeUnit.SECONDS.toNanos(5));
      release.countDown();
      assertThat(indexes.take(key)).as("given back by the sync").isSameAs(index);
      indexes.give(key, index);
    }
  }

  private static java.util.concurrent.CompletableFuture<KeyIndex> takeAsync(KeyIndexes indexes, KeyIndexes.Key key) {
    return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return indexes.take(key);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /**
   * Stale keys (rows in files gone, or at positions a new deletion vector deletes) are removed
   * one by one when they are few and by putting the others into cleared slots when they are most
   * of the index: either way the index then holds exactly the rows left.
   */
  @Test
  void staleKeysAreRemovedWhetherFewOrMost() {
    for (boolean[] gone : new boolean[][] {{true, false, false, false}, {true, true, true, false}}) {
      Random rnd = new Random(7);
      KeyIndex index = new KeyIndex(Map.of(), true, 16, 1L << 30);
      Map<Long, Row> model = new HashMap<>();
      for (long key = -2_500; key < 2_500; key++) {
        Row row = new Row(rnd.nextInt(4), rnd.nextInt(1 << 20), rnd.nextLong(), rnd.nextInt(1_000_000));
        index.put(key, row.ordinal(), row.position(), row.version(), row.rowId());
        model.put(key, row);
      }
      java.util.function.LongPredicate[] deleted = new java.util.function.LongPredicate[4];
      deleted[3] = position -> position % 3 == 0; // ordinal 3's new deletion vector
      long expected = model.values().stream()
          .filter(r -> gone[r.ordinal()] || (r.ordinal() == 3 && r.position() % 3 == 0)).count();
      model.values().removeIf(r -> gone[r.ordinal()] || (r.ordinal() == 3 && r.position() % 3 == 0));
      assertThat(index.removeStale(gone, deleted)).isEqualTo(expected);
      assertSame(index, model);
      // Still a working index: puts and removes after it.
      index.put(2_499, 1, 1, 1, 1);
      model.put(2_499L, new Row(1, 1, 1, 1));
      assertThat(index.remove(-2_500)).isEqualTo(model.remove(-2_500L) != null);
      assertSame(index, model);
    }
  }

  private static void assertSame(KeyIndex index, Map<Long, Row> model) {
    assertThat(index.size()).isEqualTo(model.size());
    long[] keys = new long[5_000];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = i - 2_500L;
    }
    KeyIndex.Hits hits = index.lookup(keys, keys.length);
    Map<Long, Row> found = new HashMap<>();
    for (int i = 0; i < hits.count; i++) {
      found.put(hits.keys[i], new Row(hits.ordinals[i], hits.positions[i], hits.versions[i], hits.rowIds[i]));
    }
    assertThat(found).isEqualTo(model);
  }
}

package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotPlanCacheTest {
  private static SnapshotPlanCache.Key key(long snapshotId) {
    return new SnapshotPlanCache.Key("tenant", "uuid", "file:/w/t", snapshotId, 0, "true");
  }

  private static SnapshotPlanCache.Plan plan(int files, int deletedPerFile) {
    return new SnapshotPlanCache.Plan(java.util.stream.IntStream.range(0, files)
        .mapToObj(i -> new SnapshotPlanCache.ScanFile("file:/w/t/" + i + ".parquet", new long[deletedPerFile])).toList());
  }

  @Test
  void keepsTheLeastRecentlyUsedWithinEntriesAndWeight() {
    SnapshotPlanCache cache = new SnapshotPlanCache(2, 100);
    SnapshotPlanCache.Plan one = cache.put(key(1), plan(1, 0));
    cache.put(key(2), plan(1, 0));
    assertThat(cache.get(key(1))).isSameAs(one);
    cache.put(key(3), plan(1, 0));
    // 2 was used least recently.
    assertThat(cache.get(key(2))).isNull();
    assertThat(cache.get(key(1))).isSameAs(one);
    assertThat(cache.hits()).isEqualTo(2);
    assertThat(cache.misses()).isEqualTo(1);
    cache.put(key(4), plan(2, 48));
    assertThat(cache.size()).isEqualTo(1);
    assertThat(cache.get(key(4))).isNotNull();
  }

  @Test
  void aPlanHeavierThanTheBudgetIsUsedButNotKept() {
    SnapshotPlanCache cache = new SnapshotPlanCache(10, 10);
    SnapshotPlanCache.Plan heavy = plan(1, 50);
    assertThat(cache.put(key(1), heavy)).isSameAs(heavy);
    assertThat(cache.size()).isZero();
    assertThat(heavy.hasDeletes).isTrue();
  }

  @Test
  void theFirstPlanStoredForAKeyWins() {
    SnapshotPlanCache cache = new SnapshotPlanCache();
    SnapshotPlanCache.Plan first = cache.put(key(1), plan(1, 0));
    assertThat(cache.put(key(1), plan(1, 0))).isSameAs(first);
    assertThat(cache.plans()).containsExactly(first);
    assertThat(first.files).extracting(SnapshotPlanCache.ScanFile::location).isEqualTo(List.of("file:/w/t/0.parquet"));
  }
}

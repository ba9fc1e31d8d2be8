package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.iceberg.inmemory.InMemoryFileIO;
import org.apache.iceberg.io.PositionOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataFileCacheTest {
  @TempDir Path dir;

  @Test
  void evictsLeastRecentlyUsedUnleasedFilesBeyondTheBudget() throws Exception {
    InMemoryFileIO io = new InMemoryFileIO();
    for (String name : new String[] {"a", "b", "c"}) {
      try (PositionOutputStream out = io.newOutputFile("mem://w/" + name).create()) {
        out.write(new byte[100]);
      }
    }
    DataFileCache cache = new DataFileCache(dir, 250);
    DataFileCache.Lease a = cache.acquire("tenant", io, "mem://w/a");
    cache.acquire("tenant", io, "mem://w/b").close();
    DataFileCache.Lease again = cache.acquire("tenant", io, "mem://w/b");
    try (DataFileCache.Lease same = cache.acquire("tenant", io, "mem://w/b")) {
      assertThat(same.path()).isEqualTo(again.path());
    }
    again.close();
    cache.acquire("tenant", io, "mem://w/c").close();
    // a is leased and b was used before c: b goes.
    assertThat(cache.size()).isEqualTo(2);
    assertThat(cache.totalBytes()).isEqualTo(200);
    assertThat(Files.exists(a.path())).isTrue();
    a.close();
  }

  @Test
  void eachScopeHasItsOwnDirectory() throws Exception {
    InMemoryFileIO io = new InMemoryFileIO();
    try (PositionOutputStream out = io.newOutputFile("mem://scoped/a").create()) {
      out.write(new byte[10]);
    }
    DataFileCache cache = new DataFileCache(dir, 1000);
    try (DataFileCache.Lease one = cache.acquire("one", io, "mem://scoped/a");
        DataFileCache.Lease two = cache.acquire("two", io, "mem://scoped/a")) {
      assertThat(one.path().getParent()).isEqualTo(cache.directory("one"));
      assertThat(two.path().getParent()).isEqualTo(cache.directory("two"));
      assertThat(cache.directory("one")).isNotEqualTo(cache.directory("two"));
      assertThat(cache.size()).isEqualTo(2);
    }
  }

  @Test
  void aMadeFileIsMadeOnceAndAFailedMakeLeavesNothing() throws Exception {
    DataFileCache cache = new DataFileCache(dir, 1000);
    java.util.concurrent.atomic.AtomicInteger makes = new java.util.concurrent.atomic.AtomicInteger();
    DataFileCache.FileMaker maker = target -> {
      makes.incrementAndGet();
      try {
        Files.write(target, new byte[40]);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
    try (DataFileCache.Lease first = cache.acquire("tenant", "wal-segment:1", maker);
        DataFileCache.Lease second = cache.acquire("tenant", "wal-segment:1", maker)) {
      assertThat(second.path()).isEqualTo(first.path());
      assertThat(first.path().getParent()).isEqualTo(cache.directory("tenant"));
    }
    assertThat(makes.get()).isEqualTo(1);
    assertThat(cache.totalBytes()).isEqualTo(40);

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> cache.acquire("tenant", "wal-segment:2", target -> {
      throw new IllegalStateException("cannot stage");
    })).hasMessage("cannot stage");
    assertThat(cache.size()).isEqualTo(1);
    try (var left = Files.list(cache.directory("tenant"))) {
      assertThat(left.count()).as("no temporary file left").isEqualTo(1);
    }
  }
}

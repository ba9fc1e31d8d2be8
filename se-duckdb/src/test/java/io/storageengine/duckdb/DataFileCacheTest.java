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
}

package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Schema;
import org.apache.iceberg.inmemory.InMemoryFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DuckRuntimeTest {
  @TempDir Path dir;

  @Test
  void closeReleasesEveryDatabaseAndRefusesNewWork() throws Exception {
    DuckRuntime runtime = DuckRuntime.temporary(1 << 20);
    try (Connection c = runtime.connectShared(1)) {
      assertThat(query(c, "SELECT current_setting('threads')")).isEqualTo("1");
    }
    QueryDatabasePool pool = runtime.queryDatabases("128MB", 1);
    Files.createDirectories(dir.resolve("t"));
    pool.acquire("t", Set.of(dir.resolve("t") + "/")).close();
    assertThat(pool.idleCount()).isEqualTo(1);
    Path files = runtime.files().directory("t").getParent();
    assertThat(files).exists();

    runtime.close();

    assertThat(runtime.isClosed()).isTrue();
    assertThat(pool.idleCount()).as("idle query databases closed").isZero();
    assertThatThrownBy(() -> pool.acquire("t", Set.of())).isInstanceOf(SeException.class)
        .hasMessageContaining("shutting down");
    assertThatThrownBy(() -> runtime.connectShared(1)).isInstanceOf(SeException.class)
        .hasMessageContaining("DuckDB is shut down")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    assertThatThrownBy(() -> runtime.queryDatabases("128MB", 1)).hasMessageContaining("DuckDB is shut down");
    assertThat(files).as("a temporary runtime deletes its directory").doesNotExist();
    runtime.close(); // idempotent
  }

  @Test
  void sharedDatabasesAreBoundedByTheConfiguredMemoryLimit() throws Exception {
    try (DuckRuntime bounded = DuckRuntime.temporary(1 << 20, 512L << 20);
        DuckRuntime byDefault = DuckRuntime.temporary(1 << 20)) {
      try (Connection a = bounded.connectShared(1); Connection b = byDefault.connectShared(2)) {
        assertThat(query(a, "SELECT current_setting('memory_limit')")).isEqualTo("512.0 MiB");
        assertThat(query(b, "SELECT current_setting('memory_limit')")).isEqualTo("4.0 GiB");
      }
    }
    assertThatThrownBy(() -> DuckRuntime.temporary(1 << 20, 1 << 20)).isInstanceOf(SeException.class)
        .hasMessageContaining("duckdb.shared-memory-limit 1048576 bytes: must be at least 64MiB")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void twoRuntimesShareNothing() throws Exception {
    try (DuckRuntime one = DuckRuntime.open(dir.resolve("one"), 1 << 20);
        DuckRuntime two = DuckRuntime.open(dir.resolve("two"), 1 << 20)) {
      try (Connection a = one.connectShared(2); Connection b = one.connectShared(2); Connection other = two.connectShared(2)) {
        execute(a, "CREATE TABLE shared_table AS SELECT 42 AS x");
        assertThat(query(b, "SELECT x FROM shared_table")).as("one database per runtime and thread count").isEqualTo("42");
        assertThatThrownBy(() -> query(other, "SELECT x FROM shared_table")).isInstanceOf(SQLException.class)
            .hasMessageContaining("shared_table");
      }
      assertThat(one.queryDatabases("128MB", 1)).isSameAs(one.queryDatabases("128MB", 1))
          .isNotSameAs(two.queryDatabases("128MB", 1));
      assertThat(one.files()).isNotSameAs(two.files());
      assertThat(one.footers()).isNotSameAs(two.footers());
      one.close();
      try (Connection still = two.connectShared(2)) {
        assertThat(query(still, "SELECT 1")).as("closing one runtime leaves the other working").isEqualTo("1");
      }
    }
  }

  /**
   * The background database is a database of its own (nothing shared with the shared one of the
   * same thread count), its DuckDB worker threads run at the nice value asked for, and the
   * caller's name is kept.
   */
  @Test
  void theBackgroundDatabaseIsApartAndItsThreadsRunLowered() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")),
        "thread priorities are Linux only");
    String callerName = Thread.currentThread().getName();
    try (DuckRuntime runtime = DuckRuntime.open(dir.resolve("bg"), 1 << 20)) {
      try (Connection shared = runtime.connectShared(2); Connection background = runtime.connectBackground(2, 15);
          Connection again = runtime.connectBackground(2, 15)) {
        assertThat(Thread.currentThread().getName()).isEqualTo(callerName);
        execute(background, "CREATE TABLE bg_table AS SELECT 7 AS x");
        assertThat(query(again, "SELECT x FROM bg_table")).as("one background database per thread count").isEqualTo("7");
        assertThatThrownBy(() -> query(shared, "SELECT x FROM bg_table")).isInstanceOf(SQLException.class);
        assertThat(query(background, "SELECT current_setting('threads')")).isEqualTo("2");
        java.util.List<Long> threads = io.storageengine.common.ThreadPriority.threadsNamed(
            DuckRuntime.BACKGROUND_THREAD_NAME);
        assertThat(threads).as("DuckDB's worker threads of the background database").isNotEmpty();
        for (long id : threads) {
          assertThat(io.storageengine.common.ThreadPriority.nice(id)).as("thread %d", id).hasValue(15);
        }
        assertThat(query(background, "SELECT count(*) FROM range(1000000)")).isEqualTo("1000000");
      }
      runtime.discardShared(-2);
      try (Connection fresh = runtime.connectBackground(2, 15)) {
        assertThatThrownBy(() -> query(fresh, "SELECT x FROM bg_table")).as("discarded: a new one")
            .isInstanceOf(SQLException.class);
      }
    }
  }

  @Test
  void aDiscardedSharedDatabaseIsReplaced() throws Exception {
    try (DuckRuntime runtime = DuckRuntime.open(dir.resolve("rt"), 1 << 20)) {
      try (Connection c = runtime.connectShared(1)) {
        execute(c, "CREATE TABLE marker AS SELECT 1 AS x");
      }
      runtime.discardShared(1);
      try (Connection c = runtime.connectShared(1)) {
        assertThatThrownBy(() -> query(c, "SELECT x FROM marker")).isInstanceOf(SQLException.class);
      }
    }
  }

  @Test
  void remoteFilesAreDownloadedOnceAndTheCacheStaysWithinItsBudget() throws Exception {
    CountingFileIO io = new CountingFileIO();
    for (String name : new String[] {"a", "b", "c"}) {
      try (PositionOutputStream out = io.newOutputFile("mem://runtime-test/" + name).create()) {
        out.write(new byte[100]);
      }
    }
    try (DuckRuntime runtime = DuckRuntime.open(dir.resolve("rt"), 250)) {
      DataFileCache files = runtime.files();
      Path first;
      try (DataFileCache.Lease lease = files.acquire("tenant", io, "mem://runtime-test/a")) {
        first = lease.path();
      }
      try (DataFileCache.Lease again = files.acquire("tenant", io, "mem://runtime-test/a")) {
        assertThat(again.path()).isEqualTo(first);
      }
      assertThat(io.opened.get()).as("the second read is a hit").isEqualTo(1);
      files.acquire("tenant", io, "mem://runtime-test/b").close();
      files.acquire("tenant", io, "mem://runtime-test/c").close();
      assertThat(files.totalBytes()).as("bounded by the budget").isLessThanOrEqualTo(250);
      assertThat(files.size()).isEqualTo(2);
      assertThat(first).as("least recently used, evicted").doesNotExist();
    }
  }

  @Test
  void footersAreReadOncePerLocation() throws Exception {
    try (DuckRuntime runtime = DuckRuntime.open(dir.resolve("rt"), 1 << 20)) {
      Path file = dir.resolve("with-ids.parquet");
      Path copy = dir.resolve("copy.parquet");
      try (Connection c = runtime.connectShared(1)) {
        execute(c, "COPY (SELECT 1::BIGINT AS id, {'x': 'a'} AS s) TO " + SqlQuoting.literal(file.toString())
            + " (FORMAT parquet, FIELD_IDS {id: 7, s: {__duckdb_field_id: 8, x: 9}})");
        execute(c, "COPY (SELECT 1 AS id) TO " + SqlQuoting.literal(dir.resolve("no-ids.parquet").toString())
            + " (FORMAT parquet)");
      }
      Files.copy(file, copy);
      ParquetFooters footers = runtime.footers();
      Schema schema = footers.schema("s3://bucket/data/with-ids.parquet", copy);
      assertThat(schema.findField(7).name()).isEqualTo("id");
      assertThat(schema.findField(7).type()).isEqualTo(Types.LongType.get());
      assertThat(schema.findField(8).type().asStructType().field(9).name()).isEqualTo("x");
      Files.delete(copy);
      assertThat(footers.schema("s3://bucket/data/with-ids.parquet", copy)).as("kept by location").isSameAs(schema);
      assertThat(footers.size()).isEqualTo(1);
      assertThat(footers.schema("s3://bucket/data/no-ids.parquet", dir.resolve("no-ids.parquet")).columns())
          .as("no ids, nothing to match").isEmpty();
      assertThatThrownBy(() -> footers.schema("s3://bucket/data/gone.parquet", dir.resolve("gone.parquet")))
          .isInstanceOf(SeException.class).hasMessageContaining("cannot read the footer of data file s3://bucket/data/gone.parquet")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
  }

  /** An in-memory FileIO counting the files opened for reading. */
  private static final class CountingFileIO extends InMemoryFileIO {
    final AtomicInteger opened = new AtomicInteger();

    @Override
    public InputFile newInputFile(String location) {
      opened.incrementAndGet();
      return super.newInputFile(location);
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static String query(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}

package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ThreadPriority;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QueryDatabasePoolTest {
  @TempDir Path dir;
  QueryDatabasePool pool;
  String mine;
  String theirs;

  @BeforeEach
  void setUp() throws Exception {
    pool = new QueryDatabasePool("128MB", 1, dir.resolve("local").resolve("spill"));
    Files.createDirectories(dir.resolve("mine"));
    Files.createDirectories(dir.resolve("theirs"));
    mine = dir.resolve("mine") + "/";
    theirs = dir.resolve("theirs") + "/";
    // Test files, written by an unlocked database.
    try (Connection writer = java.sql.DriverManager.getConnection("jdbc:duckdb:")) {
      execute(writer, "COPY (SELECT 1 AS id) TO '" + mine + "a.parquet' (FORMAT parquet)");
      execute(writer, "COPY (SELECT 2 AS id) TO '" + theirs + "b.parquet' (FORMAT parquet)");
    }
  }

  @AfterEach
  void tearDown() {
    pool.close();
  }

  @Test
  void aQueryGetsADatabaseWithTheThreadsItAsksFor() throws Exception {
    try (QueryDatabasePool.Lease one = pool.acquire("t", Set.of(mine), 1)) {
      assertThat(query(one.connection(), "SELECT current_setting('threads')")).isEqualTo("1");
    }
    long before = pool.created();
    try (QueryDatabasePool.Lease two = pool.acquire("t", Set.of(mine), 2)) {
      // The idle database has 1 thread, frozen: another one is made.
      assertThat(query(two.connection(), "SELECT current_setting('threads')")).isEqualTo("2");
      assertThat(pool.created()).isEqualTo(before + 1);
    }
    try (QueryDatabasePool.Lease one = pool.acquire("t", Set.of(mine), 1)) {
      assertThat(query(one.connection(), "SELECT current_setting('threads')")).isEqualTo("1");
      assertThat(pool.created()).as("the idle 1-thread database is reused").isEqualTo(before + 1);
    }
    assertThatThrownBy(() -> pool.acquire("t", Set.of(mine), 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDatabaseWhoseThreadsWereLoweredIsClosedAfterItsQuery() throws Exception {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "thread priorities are Linux only");
    String callerName = Thread.currentThread().getName();
    long before = pool.created();
    List<Long> lowered;
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine), 2)) {
      assertThat(Thread.currentThread().getName()).as("the caller's name is restored").isEqualTo(callerName);
      // DuckDB's threads of this database alone carry its name: the newest database's.
      String name = QueryDatabasePool.THREAD_NAME_PREFIX + Long.toString(QueryDatabasePool.threadNames(), 36);
      lowered = ThreadPriority.threadsNamed(name);
      assertThat(lowered).as("DuckDB's threads of the database").isNotEmpty();
      assertThat(lease.lowerPriority(9)).isTrue();
      for (long id : lowered) {
        assertThat(ThreadPriority.nice(id)).as("thread %d", id).hasValue(9);
      }
      // Its query still runs, now on lowered threads.
      assertThat(query(lease.connection(), "SELECT count(*) FROM range(1000000)")).isEqualTo("1000000");
    }
    assertThat(pool.idleCount()).as("not kept for the next query").isZero();
    try (QueryDatabasePool.Lease next = pool.acquire("t", Set.of(mine), 2)) {
      assertThat(pool.created()).isEqualTo(before + 2);
    }
    for (long id : lowered) {
      assertThat(ThreadPriority.nice(id)).as("thread %d ended with its database", id).isEmpty();
    }
  }

  @Test
  void aDatabaseIsReusedWithNothingLeftOfTheQueryBefore() throws Exception {
    long before = pool.created();
    try (QueryDatabasePool.Lease first = pool.acquire("t", Set.of(mine))) {
      Connection c = first.connection();
      assertThat(query(c, "SELECT current_database() || '.' || (SELECT count(*) FROM duckdb_schemas() "
          + "WHERE database_name = 'default' AND schema_name = '" + QueryDatabasePool.META_SCHEMA + "')")).isEqualTo("default.1");
      execute(c, "CREATE SCHEMA ns");
      execute(c, "CREATE TABLE " + QueryDatabasePool.META_SCHEMA + ".deletes (pos BIGINT)");
      execute(c, "CREATE VIEW ns.v AS SELECT * FROM read_parquet(['" + mine + "a.parquet'])");
      execute(c, "CREATE TEMP TABLE scratch AS SELECT 42 AS x");
      assertThat(query(c, "SELECT id FROM ns.v")).isEqualTo("1");
    }
    try (QueryDatabasePool.Lease second = pool.acquire("t", Set.of(mine))) {
      Connection c = second.connection();
      // A fresh, empty query catalog, set up when the first query ended.
      assertThat(query(c, "SELECT string_agg(database_name, ',' ORDER BY database_name) FROM duckdb_databases()"))
          .isEqualTo("default,memory,system,temp");
      assertThat(query(c, "SELECT current_database()")).isEqualTo("default");
      assertThat(query(c, "SELECT count(*) FROM duckdb_tables() WHERE NOT internal")).isEqualTo("0");
      assertThat(query(c, "SELECT count(*) FROM duckdb_views() WHERE NOT internal")).isEqualTo("0");
      assertThat(query(c, "SELECT string_agg(schema_name, ',' ORDER BY schema_name) FROM duckdb_schemas() "
          + "WHERE database_name = 'default' AND NOT internal")).isEqualTo(QueryDatabasePool.META_SCHEMA);
      assertThatThrownBy(() -> query(c, "SELECT * FROM scratch")).hasMessageContaining("scratch does not exist");
    }
    assertThat(pool.created() - before).isEqualTo(1);
    assertThat(pool.idleCount()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void aQueryLargerThanTheMemoryLimitSpills() throws Exception {
    // A sort of ~300 MB of strings under a 128 MB limit must spill below spill/, which does not
    // exist yet on a fresh data directory (DuckDB creates only the last level itself).
    assertThat(dir.resolve("local")).doesNotExist();
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      assertThat(query(lease.connection(), "SELECT count(DISTINCT h) FROM (SELECT md5(range::VARCHAR) || "
          + "md5((range + 1)::VARCHAR) AS h FROM range(3000000) ORDER BY h)")).isEqualTo("3000000");
    }
  }

  @Test
  void tenantsNeverShareADatabase() throws Exception {
    long before = pool.created();
    try (QueryDatabasePool.Lease a = pool.acquire("a", Set.of(mine))) {
      execute(a.connection(), "SELECT 1");
    }
    try (QueryDatabasePool.Lease b = pool.acquire("b", Set.of(mine))) {
      execute(b.connection(), "SELECT 1");
    }
    try (QueryDatabasePool.Lease a = pool.acquire("a", Set.of(mine))) {
      execute(a.connection(), "SELECT 1");
    }
    assertThat(pool.created() - before).isEqualTo(2);
  }

  @Test
  void filesOutsideTheAllowedDirectoriesAndSettingsAreLocked() throws Exception {
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      Connection c = lease.connection();
      assertThat(query(c, "SELECT id FROM read_parquet(['" + mine + "a.parquet'])")).isEqualTo("1");
      assertThatThrownBy(() -> query(c, "SELECT id FROM read_parquet(['" + theirs + "b.parquet'])"))
          .hasMessageContaining("b.parquet");
      assertThatThrownBy(() -> execute(c, "SET threads = 4")).hasMessageContaining("configuration has been locked");
      assertThatThrownBy(() -> execute(c, "SET enable_external_access = true"))
          .hasMessageContaining("enable_external_access");
    }
  }

  @Test
  void aQueryNeedingAnotherDirectoryGetsADatabaseAllowingBoth() throws Exception {
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      execute(lease.connection(), "SELECT 1");
    }
    long before = pool.created();
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(theirs))) {
      Connection c = lease.connection();
      assertThat(query(c, "SELECT id FROM read_parquet(['" + theirs + "b.parquet'])")).isEqualTo("2");
      assertThat(query(c, "SELECT id FROM read_parquet(['" + mine + "a.parquet'])")).isEqualTo("1");
    }
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      execute(lease.connection(), "SELECT 1");
    }
    assertThat(pool.created() - before).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"CREATE TABLE memory.main.leftover (a INTEGER)", "CREATE VIEW memory.main.leftover AS SELECT 1",
      "CREATE SCHEMA memory.leftover", "CREATE SEQUENCE memory.main.leftover", "ATTACH ':memory:' AS leftover"})
  void aDatabaseWithLeftoversIsClosedInsteadOfReused(String leftover) throws Exception {
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      execute(lease.connection(), leftover);
    }
    assertThat(pool.idleCount()).as("not back in the pool: " + leftover).isZero();
    long before = pool.created();
    try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
      assertThat(query(lease.connection(), "SELECT count(*) FROM duckdb_tables() WHERE NOT internal")).isEqualTo("0");
      assertThat(query(lease.connection(), "SELECT count(*) FROM duckdb_databases() WHERE NOT internal")).isEqualTo("2");
    }
    assertThat(pool.created() - before).isEqualTo(1);
  }

  @Test
  void aQueryWaitsForADatabaseBeingResetInsteadOfOpeningAnother() throws Exception {
    try (QueryDatabasePool.Lease warm = pool.acquire("t", Set.of(mine))) {
      execute(warm.connection(), "SELECT 1");
    }
    long before = pool.created();
    CountDownLatch resetting = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    QueryDatabasePool.Lease first = pool.acquire("t", Set.of(mine));
    pool.beforeReset = () -> {
      resetting.countDown();
      await(finish);
    };
    Thread closer = new Thread(first::close);
    closer.start();
    assertThat(resetting.await(10, TimeUnit.SECONDS)).isTrue();
    pool.beforeReset = () -> { };
    CompletableFuture<QueryDatabasePool.Lease> second = CompletableFuture.supplyAsync(() -> pool.acquire("t", Set.of(mine)));
    Thread.sleep(30);
    assertThat(second).as("waits while the only database is being reset").isNotDone();
    finish.countDown();
    try (QueryDatabasePool.Lease lease = second.get(10, TimeUnit.SECONDS)) {
      assertThat(query(lease.connection(), "SELECT current_database()")).isEqualTo("default");
    }
    closer.join();
    assertThat(pool.created()).as("the reset database was reused").isEqualTo(before);
  }

  @Test
  void afterQueryActionsRunOnceTheQueryConnectionIsClosedAndBeforeTheReset() throws Exception {
    QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine));
    execute(lease.connection(), "CREATE VIEW v AS SELECT 1 AS x");
    List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    lease.afterQuery(() -> {
      try {
        events.add("first: connection closed " + lease.connection().isClosed());
      } catch (SQLException e) {
        events.add("first: " + e);
      }
    });
    lease.afterQuery(() -> {
      events.add("second throws");
      throw new IllegalStateException("an action that fails");
    });
    lease.afterQuery(() -> events.add("third"));
    pool.beforeReset = () -> events.add("reset");
    try {
      lease.close();
      lease.close();
    } finally {
      pool.beforeReset = () -> { };
    }
    assertThat(events).containsExactly("first: connection closed true", "second throws", "third", "reset");
    try (QueryDatabasePool.Lease next = pool.acquire("t", Set.of(mine))) {
      assertThat(query(next.connection(), "SELECT count(*) FROM duckdb_views() WHERE NOT internal"))
          .as("the reset still ran after the failed action").isEqualTo("0");
    }
  }

  @Test
  void aQueryOpensAnotherDatabaseWhenAResetTakesTooLong() throws Exception {
    QueryDatabasePool.Lease first = pool.acquire("t", Set.of(mine));
    long before = pool.created();
    CountDownLatch resetting = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    pool.beforeReset = () -> {
      resetting.countDown();
      await(finish);
    };
    Thread closer = new Thread(first::close);
    closer.start();
    try {
      assertThat(resetting.await(10, TimeUnit.SECONDS)).isTrue();
      pool.beforeReset = () -> { };
      long start = System.nanoTime();
      try (QueryDatabasePool.Lease lease = pool.acquire("t", Set.of(mine))) {
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(QueryDatabasePool.RESET_WAIT_NANOS);
        assertThat(query(lease.connection(), "SELECT 1")).isEqualTo("1");
      }
      assertThat(pool.created()).isEqualTo(before + 1);
    } finally {
      finish.countDown();
      closer.join();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void idleDatabasesAreBounded() throws Exception {
    QueryDatabasePool.Lease[] leases = new QueryDatabasePool.Lease[QueryDatabasePool.MAX_IDLE_PER_TENANT + 2];
    for (int i = 0; i < leases.length; i++) {
      leases[i] = pool.acquire("t", Set.of(mine));
    }
    for (QueryDatabasePool.Lease lease : leases) {
      lease.close();
    }
    assertThat(pool.idleCount()).isEqualTo(QueryDatabasePool.MAX_IDLE_PER_TENANT);
    pool.close();
    assertThat(pool.idleCount()).isZero();
    assertThatThrownBy(() -> pool.acquire("t", Set.of(mine))).hasMessageContaining("shutting down");
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private static String query(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      rows.next();
      return rows.getString(1);
    }
  }
}

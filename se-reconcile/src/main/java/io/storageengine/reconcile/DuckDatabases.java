package io.storageengine.reconcile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.duckdb.DuckDBConnection;

/**
 * The process's in-memory DuckDB databases, one per thread count, from which each
 * {@link DuckSession} takes its own connection. Starting a database (buffer manager, catalog,
 * bundled extensions) cost tens of milliseconds per pass, more under load; a connection costs
 * about one. Connections stay isolated: temporary tables, registered Arrow streams and
 * session settings such as the time zone belong to the connection, and every statement the
 * engine runs creates only temporary objects. Sharing one database also bounds DuckDB's worker
 * threads and memory per process instead of per concurrent pass.
 */
final class DuckDatabases {
  private static final Map<Integer, DuckDBConnection> BY_THREADS = new HashMap<>();

  private DuckDatabases() {}

  /** A new connection to the shared database with {@code threads} worker threads. */
  static synchronized DuckDBConnection connect(int threads) throws SQLException {
    DuckDBConnection base = BY_THREADS.get(threads);
    if (base == null || base.isClosed()) {
      base = open(threads);
      BY_THREADS.put(threads, base);
    }
    return base.duplicate();
  }

  /**
   * Forgets the database behind {@code threads} after DuckDB reported it unusable (a fatal
   * error invalidates a database for every connection), so the next session starts a new one.
   * Sessions still open on the old database keep it alive until they close.
   */
  static synchronized void discard(int threads) {
    DuckDBConnection base = BY_THREADS.remove(threads);
    if (base != null) {
      try {
        base.close();
      } catch (SQLException e) {
        // The database is being dropped because it failed; nothing more to do.
      }
    }
  }

  private static DuckDBConnection open(int threads) throws SQLException {
    DuckDBConnection base = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
    try (Statement st = base.createStatement()) {
      // Global settings: worker threads and where large operators spill.
      st.execute("SET threads = " + threads);
      st.execute("SET temp_directory = " + DuckSql.literal(spillDirectory().toString()));
    } catch (SQLException e) {
      base.close();
      throw e;
    }
    return base;
  }

  private static Path spillDirectory() {
    try {
      Path dir = Files.createTempDirectory("se-reconcile-spill-");
      dir.toFile().deleteOnExit(); // DuckDB removes its spill files; the empty directory goes at exit
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

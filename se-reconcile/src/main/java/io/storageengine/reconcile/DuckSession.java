package io.storageengine.reconcile;

import io.storageengine.common.Cancel;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A private DuckDB connection (to the runtime's shared in-memory database, see
 * {@link DuckRuntime#connectShared}) and a private scratch directory for the duration of a pass.
 * Everything a session creates is temporary, so it disappears with the connection; the local
 * copies of remote data files it reads are leased from the runtime's cache until it closes.
 * DuckDB's JDBC driver closes a statement after an error, so every call uses a fresh one.
 *
 * <p>Internal to se-reconcile; public only for its {@code maintenance} package.
 */
public final class DuckSession implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DuckSession.class);
  private final DuckRuntime runtime;
  private final String scope;
  private final DuckDBConnection connection;
  private final int threads;
  private final List<DataFileCache.Lease> leases = new ArrayList<>();
  private final BufferAllocator allocator;
  private final Path scratch;
  private final AtomicInteger names = new AtomicInteger();
  /** What stops this session's statements (see {@link #stopOn}). */
  private volatile Cancel stop = Cancel.never();
  /** The statement running now, or null. */
  private volatile Statement running;
  /** Whether the connection is someone else's: not closed here, no scratch directory. */
  private final boolean borrowed;

  /**
   * A session on {@code connection}, which stays its owner's: closing the session leaves it open.
   * The session has no scratch directory and changes no setting (the connection's database may
   * have them frozen); what it creates lives as long as the connection's owner keeps it.
   */
  /** The tenant (catalog id) whose data files the session reads. */
  String scope() {
    return scope;
  }

  DuckSession(DuckDBConnection connection, BufferAllocator allocator, String scope) {
    this.runtime = null;
    this.scope = scope;
    this.allocator = allocator;
    this.threads = 0;
    this.connection = connection;
    this.scratch = null;
    this.borrowed = true;
  }

  /**
   * @param threads DuckDB worker threads (sessions with the same count share a database)
   * @param scope the tenant (catalog id) whose data files the session reads
   */
  public DuckSession(DuckRuntime runtime, BufferAllocator allocator, int threads, String scope) {
    this(runtime, allocator, threads, scope, 0);
  }

  /**
   * As above; with {@code backgroundNice} 1..19 on the runtime's background database instead
   * ({@link DuckRuntime#connectBackground}), whose worker threads run at that nice value: for
   * long maintenance work that should take only the cores the foreground leaves. 0: the shared
   * database.
   */
  public DuckSession(DuckRuntime runtime, BufferAllocator allocator, int threads, String scope, int backgroundNice) {
    this.runtime = runtime;
    this.scope = scope;
    this.allocator = allocator;
    this.threads = backgroundNice > 0 ? -threads : threads;
    this.borrowed = false;
    try {
      this.connection = backgroundNice > 0 ? runtime.connectBackground(threads, backgroundNice)
          : runtime.connectShared(threads);
    } catch (SQLException e) {
      throw SeException.internal("cannot start DuckDB: " + e.getMessage(), e);
    }
    try {
      this.scratch = Files.createTempDirectory("se-reconcile-");
      execute("SET TimeZone = 'UTC'"); // a session setting
    } catch (IOException | RuntimeException e) {
      closeQuietly();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
  }

  BufferAllocator allocator() {
    return allocator;
  }

  /** A fresh directory under the scratch directory. */
  public Path newDirectory(String prefix) {
    if (scratch == null) {
      throw new IllegalStateException("a session on a borrowed connection has no scratch directory");
    }
    try {
      return Files.createDirectories(scratch.resolve(prefix + "-" + names.incrementAndGet()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Path scratch() {
    return scratch;
  }

  /**
   * Makes {@code cancel} stop this session's statements: once it is requested, the statement
   * running is interrupted and every statement fails with the request's reason, until the
   * returned registration is closed.
   */
  public Cancel.Registration stopOn(Cancel cancel) {
    stop = cancel;
    Cancel.Registration registered = cancel.onCancel(this::interrupt);
    return () -> {
      registered.close();
      stop = Cancel.never();
    };
  }

  private void interrupt() {
    Statement st = running;
    if (st != null) {
      try {
        st.cancel();
      } catch (SQLException e) {
        // The statement ended meanwhile; the next one sees the request.
      }
    }
  }

  /** A new statement, the one {@link #interrupt} stops; refused once a stop was requested. */
  private Statement statement() throws SQLException {
    stop.check();
    Statement st = connection.createStatement();
    running = st;
    return st;
  }

  public void execute(String sql) {
    long started = System.nanoTime();
    try (Statement st = statement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw failed("DuckDB statement failed: ", e);
    } finally {
      running = null;
      traced(sql, started);
    }
  }

  /** At TRACE, the time a statement took and its start. */
  private static void traced(String sql, long started) {
    if (LOG.isTraceEnabled()) {
      LOG.trace("{} ms: {}", (System.nanoTime() - started) / 1_000_000, sql.length() > 160 ? sql.substring(0, 160)
          : sql);
    }
  }

  public long queryLong(String sql) {
    long started = System.nanoTime();
    try (Statement st = statement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw failed("DuckDB query failed: ", e);
    } finally {
      running = null;
      traced(sql, started);
    }
  }

  /**
   * The error to throw for {@code e}: the stop's reason when one was requested (see
   * {@link #stopOn}); a database DuckDB invalidated is not handed out again.
   */
  private SeException failed(String what, SQLException e) {
    SeException stopped = stop.reason();
    if (stopped != null) {
      return stopped;
    }
    String message = String.valueOf(e.getMessage());
    if (message.contains("invalidated") && runtime != null) {
      runtime.discardShared(threads);
    }
    return SeException.internal(what + message, e);
  }

  /** Runs {@code sql} and hands each result row to {@code consumer}. */
  public void query(String sql, RowConsumer consumer) {
    long started = System.nanoTime();
    try (Statement st = statement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        consumer.accept(rs);
      }
    } catch (SQLException e) {
      throw failed("DuckDB query failed: ", e);
    } finally {
      running = null;
      traced(sql, started);
    }
  }

  /**
   * The row positions {@code from} lists per file: {@code from} is a query (or table) with the
   * columns {@code fileColumn} (VARCHAR, never NULL) and {@code positionColumn} (BIGINT); the
   * result maps each file to its positions in ascending order. Read as one list per file through
   * Arrow, not row by row (a batch's positions are often a hundred thousand).
   */
  Map<String, long[]> positionsByFile(String from, String fileColumn, String positionColumn) {
    Map<String, long[]> out = new LinkedHashMap<>();
    listsByFile(from, fileColumn, positionColumn).forEach((file, lists) -> out.put(file, lists[0]));
    return out;
  }

  /**
   * As {@link #positionsByFile}, with more BIGINT columns {@code also} of {@code from} listed in
   * the same order: per file, the positions (ascending) and then each of {@code also}'s values
   * at those positions.
   */
  Map<String, long[][]> listsByFile(String from, String fileColumn, String positionColumn, String... also) {
    Map<String, long[][]> out = new LinkedHashMap<>();
    StringBuilder lists = new StringBuilder("list(" + positionColumn + " ORDER BY " + positionColumn + ")");
    for (String column : also) {
      lists.append(", list(").append(column).append(" ORDER BY ").append(positionColumn).append(")");
    }
    queryArrow("SELECT " + fileColumn + ", " + lists + " FROM (" + from + ") GROUP BY " + fileColumn + " ORDER BY "
        + fileColumn, 1024, root -> {
          VarCharVector files = (VarCharVector) root.getVector(0);
          for (int row = 0; row < root.getRowCount(); row++) {
            long[][] values = new long[1 + also.length][];
            for (int c = 0; c < values.length; c++) {
              ListVector list = (ListVector) root.getVector(1 + c);
              BigIntVector data = (BigIntVector) list.getDataVector();
              int start = list.getElementStartIndex(row);
              int end = list.getElementEndIndex(row);
              values[c] = new long[end - start];
              for (int i = start; i < end; i++) {
                values[c][i - start] = data.get(i);
              }
            }
            out.put(new String(files.get(row), StandardCharsets.UTF_8), values);
          }
        });
    return out;
  }

  /** Runs {@code sql} and hands its result, as Arrow batches, to {@code consumer}. */
  void queryArrow(String sql, int batchRows, ArrowConsumer consumer) {
    long started = System.nanoTime();
    try (Statement st = statement();
        DuckDBResultSet rs = (DuckDBResultSet) st.executeQuery(sql);
        ArrowReader reader = (ArrowReader) rs.arrowExportStream(allocator, batchRows)) {
      while (reader.loadNextBatch()) {
        consumer.accept(reader.getVectorSchemaRoot());
      }
    } catch (SQLException e) {
      throw failed("DuckDB query failed: ", e);
    } catch (IOException e) {
      SeException stopped = stop.reason();
      throw stopped != null ? stopped : SeException.internal("DuckDB query failed: " + e.getMessage(), e);
    } finally {
      running = null;
      traced(sql, started);
    }
  }

  /**
   * Makes {@code reader} scannable as the view {@code name} for the statements run by
   * {@code use}; the reader and the exported stream are released afterwards.
   */
  void withArrowStream(String name, ArrowReader reader, Runnable use) {
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, reader, stream);
      connection.registerArrowStream(name, stream);
      use.run();
    }
  }

  /**
   * Makes {@code values[0 .. count)} scannable as the view {@code name} with the one BIGINT
   * column {@code column} for the statements run by {@code use}: a vector copied at memory speed,
   * where an appender takes a call per value.
   */
  void withLongs(String name, String column, long[] values, int count, Runnable use) {
    withLongColumns(name, new String[] {column}, new long[][] {values}, null, count, use);
  }

  /**
   * As {@link #withLongs}, with several BIGINT columns: {@code columns[c]} holds
   * {@code values[c][0 .. count)}, and a value equal to {@code nullValue} (if not null) is NULL.
   */
  void withLongColumns(String name, String[] columns, long[][] values, Long nullValue, int count, Runnable use) {
    List<Field> fields = new ArrayList<>();
    for (String column : columns) {
      fields.add(Field.nullable(column, new ArrowType.Int(64, true)));
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields),
        allocator)) {
      for (int c = 0; c < columns.length; c++) {
        BigIntVector vector = (BigIntVector) root.getVector(c);
        vector.allocateNew(count);
        long[] column = values[c];
        for (int i = 0; i < count; i++) {
          if (nullValue != null && column[i] == nullValue) {
            vector.setNull(i);
          } else {
            vector.set(i, column[i]);
          }
        }
        vector.setValueCount(count);
      }
      root.setRowCount(count);
      try (ArrowReader reader = new OneBatch(allocator, root)) {
        withArrowStream(name, reader, use);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** A reader of one batch, {@code source}'s rows (which stay the caller's). */
  private static final class OneBatch extends ArrowReader {
    private final VectorSchemaRoot source;
    private boolean read;

    OneBatch(BufferAllocator allocator, VectorSchemaRoot source) {
      super(allocator);
      this.source = source;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      if (read) {
        return false;
      }
      prepareLoadNextBatch();
      try (ArrowRecordBatch batch = new VectorUnloader(source).getRecordBatch()) {
        loadRecordBatch(batch);
      }
      read = true;
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected org.apache.arrow.vector.types.pojo.Schema readSchema() {
      return source.getSchema();
    }
  }

  public DuckDBConnection connection() {
    return connection;
  }

  /**
   * A local path DuckDB can read for the table's data file at {@code location}, kept until the
   * session closes (see {@link DuckRuntime#localCopy}).
   */
  public String readable(Table table, String location) {
    if (runtime == null) {
      throw new IllegalStateException("a session on a borrowed connection reads no data files");
    }
    DataFileCache.Lease lease;
    try {
      lease = runtime.localCopy(scope, table, location);
    } catch (SeException e) {
      if (e.code() != ErrorCode.UNAVAILABLE) {
        throw e;
      }
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw SeException.unavailable("cannot read data file " + location + ": " + cause.getMessage(), e);
    }
    leases.add(lease);
    return lease.path().toString();
  }

  /** The schema (with field ids) the data file at {@code location} was written with; {@code local} is a copy. */
  public Schema fileSchema(String location, String local) {
    return runtime.footers().schema(location, Path.of(local));
  }

  /**
   * Closes the connection (dropping its temporary tables), releases the cached copies it read
   * and deletes the scratch directory.
   */
  @Override
  public void close() {
    if (!borrowed) {
      closeQuietly();
    }
    leases.forEach(DataFileCache.Lease::close);
    leases.clear();
    if (scratch != null) {
      deleteRecursively(scratch);
    }
  }

  private void closeQuietly() {
    try {
      connection.close();
    } catch (SQLException e) {
      // Only temporary objects live on this connection; nothing can be lost.
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // Best effort: scratch files are private to this pass.
    }
  }

  /** A row of a JDBC result. */
  @FunctionalInterface
  public interface RowConsumer {
    void accept(ResultSet rs) throws SQLException;
  }

  /** A batch of an Arrow result; valid only during the call. */
  @FunctionalInterface
  interface ArrowConsumer {
    void accept(org.apache.arrow.vector.VectorSchemaRoot root);
  }
}

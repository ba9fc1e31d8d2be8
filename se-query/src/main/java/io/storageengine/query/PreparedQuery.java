package io.storageengine.query;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBResultSet;

/**
 * A statement ready to run on its own connection to a locked DuckDB database, with the tenant
 * tables it reads set up as views. Closing it closes the connection, then the resources it holds
 * in order (leases on cached files, the database lease that resets and returns the database).
 *
 * <p>Local data files are read in place, so table maintenance may delete them between planning
 * and execution (or during it, for files DuckDB has not opened yet) when it expires the pinned
 * snapshot. DuckDB then fails with an I/O or permission error naming the path; such failures
 * are reported as {@link SnapshotExpiredException} instead. Cached copies of remote files are
 * leased by the query and never vanish.
 *
 * <p>DuckDB's JDBC driver loses the message of a streamed statement that fails before its first
 * batch ({@value #LOST_ERROR}); such a statement is run once more on a connection of the same
 * database that materializes its result ({@link #rerunWith}), which reports DuckDB's own error.
 *
 * <p>The statement runs, and its batches are read, on the query's own worker thread when it has
 * one ({@link #runOn}), so that the OS priority of a query running long can be lowered
 * ({@link #lowerPriority}) without lowering a thread of the caller's pool.
 */
final class PreparedQuery implements AutoCloseable {
  /** What DuckDB's JDBC driver reports for a streamed statement that failed before its first batch. */
  static final String LOST_ERROR = "Invalid Input Error: Invalid result set";

  /** A connection of the query's database that materializes results, lent for one statement. */
  interface MaterializingConnection {
    /** The connection, in use of the query's catalog. */
    Connection open() throws SQLException;

    /** Gives the connection back. */
    void release();
  }

  private final Connection connection;
  private final String sql;
  private final Map<String, SnapshotPin> pins;
  private final QueryParameters parameters;
  private final List<TableRead> reads;
  private final List<? extends AutoCloseable> resources;
  private final List<ResultColumns.Origin> origins;
  private final List<AutoCloseable> open = new ArrayList<>();
  /** Closed after {@link #resources}: the query's timer and admission (see {@link #closeWith}). */
  private final List<AutoCloseable> closedLast = new ArrayList<>();
  private MaterializingConnection materializing;
  /** Set when the statement is explained rather than run (see {@link Explain}). */
  private Explain explain;
  private boolean closed;

  /**
   * The files one table is read from, to tell a vanished snapshot from other failures.
   *
   * @param table the loaded table, refreshed to check whether the snapshot still exists
   * @param snapshotId the pinned snapshot
   * @param localFiles the paths DuckDB reads
   */
  record TableRead(String displayName, Table table, long snapshotId, List<String> localFiles) {}

  private List<String> parameterTypes;
  /** DuckDB's type name of each result column, once the statement was prepared. */
  private List<String> columnTypes = List.of();
  private ArrowReader started;
  /** Why {@link #start} failed, rethrown by later calls (a start runs the statement once). */
  private RuntimeException startFailure;
  private volatile boolean cancelled;
  /** Why the server stopped the query (its time limit), or null when it was cancelled or runs. */
  private volatile SeException stopReason;
  /** The statement {@link #run} executes, for {@link #cancel} (DuckDB interrupts its connection). */
  private volatile PreparedStatement running;
  /** The thread the statement runs and its batches are read on, or null: the calling thread. */
  private volatile QueryThreads.Worker worker;
  /** Lowers the priority of DuckDB's threads of the query's database (see {@link #lowerPriority}). */
  private volatile IntConsumer lowerDatabase = nice -> { };
  /**
   * Guards {@link #ended}: a lowering and the start of {@link #close} do not overlap (not the
   * query's own lock, which its start holds while DuckDB runs).
   */
  private final Object priority = new Object();
  private boolean ended;

  PreparedQuery(Connection connection, String sql, Map<String, SnapshotPin> pins, QueryParameters parameters,
      List<TableRead> reads, List<? extends AutoCloseable> resources) {
    this(connection, sql, pins, parameters, reads, resources, List.of());
  }

  /** @param origins the table column each result column reads, where known (see {@link ResultColumns}) */
  PreparedQuery(Connection connection, String sql, Map<String, SnapshotPin> pins, QueryParameters parameters,
      List<TableRead> reads, List<? extends AutoCloseable> resources, List<ResultColumns.Origin> origins) {
    this.origins = origins;
    this.connection = connection;
    this.sql = sql;
    this.pins = pins;
    this.parameters = parameters;
    this.reads = reads;
    this.resources = resources;
  }

  /** The table states this query reads, keyed by table key (see {@link StatementAnalyzer.TableName#key()}). */
  Map<String, SnapshotPin> pins() {
    return pins;
  }

  /**
   * The DuckDB types of the statement's parameters, in order, as DuckDB infers them from their
   * context ({@code INVALID} where it cannot).
   */
  synchronized List<String> parameterTypes() {
    if (parameterTypes == null) {
      try (PreparedStatement statement = connection.prepareStatement(sql)) {
        parameterTypes = parameterTypes(statement);
      } catch (SQLException e) {
        throw translate(e);
      }
    }
    return parameterTypes;
  }

  private static List<String> parameterTypes(PreparedStatement statement) throws SQLException {
    ParameterMetaData metadata = statement.getParameterMetaData();
    List<String> types = new ArrayList<>();
    for (int i = 1; i <= metadata.getParameterCount(); i++) {
      types.add(metadata.getParameterTypeName(i));
    }
    return List.copyOf(types);
  }

  /**
   * Checks that the bound values fit the statement's parameters (INVALID_ARGUMENT naming the
   * count or the parameter and its expected type). Required before {@link #execute}.
   */
  void checkParameters() {
    List<String> types = parameterTypes();
    if (!types.isEmpty() && parameters.isEmpty()) {
      throw SeException.invalid("statement has %d parameter%s, but no values were bound: "
          + "prepare the statement and bind its values", types.size(), types.size() == 1 ? "" : "s");
    }
    parameters.check(types);
  }

  /**
   * The Arrow schema {@link #execute} produces, computed without reading data: types from the
   * statement wrapped in {@code LIMIT 0}, names from the prepared statement (a subquery would
   * rename duplicate column names). Parameters are bound to their values, or to NULL while no
   * values are known (a prepared statement being created).
   */
  Schema schema(BufferAllocator allocator) {
    if (explain != null) {
      return Explain.SCHEMA;
    }
    try (PreparedStatement bound = connection.prepareStatement(sql);
        PreparedStatement statement = connection.prepareStatement("SELECT * FROM (" + sql + "\n) AS __se_query LIMIT 0")) {
      bindTo(statement);
      try (ResultSet rows = statement.executeQuery();
          ArrowReader reader = (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, 1)) {
        return ResultColumns.annotate(schema(bound.getMetaData(), reader), origins, columnTypes(bound.getMetaData()));
      }
    } catch (SQLException | IOException e) {
      throw translate(e);
    }
  }

  private void bindTo(PreparedStatement statement) throws SQLException {
    if (parameters.isEmpty()) {
      // A parameter of unknown type is declared as a string (see ParameterTypes): bind one, so
      // that `SELECT ? AS x` describes x as VARCHAR rather than as DuckDB's NULL type.
      List<String> types = parameterTypes();
      for (int i = 0; i < types.size(); i++) {
        if (ParameterTypes.isUnknown(types.get(i))) {
          statement.setString(i + 1, "");
        } else {
          statement.setObject(i + 1, null);
        }
      }
    } else {
      parameters.bind(statement);
    }
  }

  private static Schema schema(ResultSetMetaData metadata, ArrowReader reader) throws SQLException, IOException {
    List<Field> fields = new ArrayList<>();
    List<Field> typed = reader.getVectorSchemaRoot().getSchema().getFields();
    boolean resolved = metadata.getColumnCount() == typed.size();
    for (int i = 1; resolved && i <= metadata.getColumnCount(); i++) {
      // A statement whose parameter types DuckDB cannot infer is described as one column
      // `unknown` until values are bound: the names are then the bound statement's.
      resolved = !ParameterTypes.isUnknown(metadata.getColumnTypeName(i));
    }
    if (!resolved) {
      return reader.getVectorSchemaRoot().getSchema();
    }
    for (int i = 0; i < typed.size(); i++) {
      Field field = typed.get(i);
      String name = i < metadata.getColumnCount() ? metadata.getColumnName(i + 1) : field.getName();
      fields.add(new Field(name, field.getFieldType(), field.getChildren()));
    }
    return new Schema(fields);
  }

  private static List<String> columnTypes(ResultSetMetaData metadata) throws SQLException {
    List<String> types = new ArrayList<>();
    for (int i = 1; metadata != null && i <= metadata.getColumnCount(); i++) {
      types.add(metadata.getColumnTypeName(i));
    }
    return List.copyOf(types);
  }

  /**
   * The schema to send for the result of {@link #start}, whose reader has schema {@code produced}:
   * the same Arrow types, with nullability and Flight SQL column metadata from the table columns
   * the result reads (see {@link ResultColumns#annotate}).
   */
  synchronized Schema resultSchema(Schema produced) {
    if (explain != null) {
      return Explain.SCHEMA;
    }
    return ResultColumns.annotate(produced, origins, columnTypes);
  }

  /**
   * Runs the statement with its bound values (see {@link #checkParameters}); batches are produced
   * as the reader is consumed. Close the reader first.
   */
  synchronized ArrowReader execute(BufferAllocator allocator, int batchRows) {
    return run(allocator, batchRows, false);
  }

  /**
   * Runs the statement's DuckDB work on {@code worker} from now on: its start and the reading of
   * its batches ({@link #loadNextBatch}).
   */
  void runOn(QueryThreads.Worker worker) {
    this.worker = worker;
  }

  /** {@link #lowerPriority} lowers DuckDB's threads of the query's database with {@code lowerDatabase}. */
  void lowerDatabaseWith(IntConsumer lowerDatabase) {
    this.lowerDatabase = lowerDatabase;
  }

  /**
   * Lowers the OS priority of the threads running this query (its worker and DuckDB's threads of
   * its database) to {@code nice}, from any thread: a long query then yields the cores to other
   * work while that runs. Neither is used for another query afterwards.
   */
  void lowerPriority(int nice) {
    synchronized (priority) {
      if (ended) {
        // Its worker and database may serve another query now.
        return;
      }
      QueryThreads.Worker running = worker;
      if (running != null) {
        running.lowerPriority(nice);
      }
      lowerDatabase.accept(nice);
    }
  }

  /**
   * Reads the next batch of the started query ({@link #start}) into its reader's root, on the
   * query's thread; false at the end.
   */
  boolean loadNextBatch() throws IOException {
    ArrowReader reader;
    synchronized (this) {
      reader = started;
    }
    if (reader == null) {
      throw new IllegalStateException("the query was not started");
    }
    return onWorker(reader::loadNextBatch);
  }

  /**
   * Runs DuckDB's work of the query on its worker (see {@link #runOn}). The work must not take this
   * query's lock: its caller may hold it ({@link #start}).
   */
  private <T, E extends Exception> T onWorker(QueryThreads.Work<T, E> work) throws E {
    QueryThreads.Worker on = worker;
    return on == null ? work.run() : on.call(work);
  }

  private ArrowReader run(BufferAllocator allocator, int batchRows, boolean check) {
    if (explain != null) {
      return runExplained(allocator, batchRows, check);
    }
    try {
      PreparedStatement statement = connection.prepareStatement(sql);
      open.add(statement);
      running = statement;
      if (parameterTypes == null) {
        parameterTypes = parameterTypes(statement);
      }
      columnTypes = columnTypes(statement.getMetaData());
      if (check) {
        checkParameters();
      }
      parameters.bind(statement);
      checkNotCancelled();
      ResultSet rows;
      try {
        rows = onWorker(statement::executeQuery);
      } catch (SQLException e) {
        throw lostError(e);
      }
      open.add(rows);
      return (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, batchRows);
    } catch (SQLException e) {
      throw translate(e);
    }
  }

  /**
   * Explains the statement rather than running it (see {@link Explain}): its result is then the
   * engine's rows and DuckDB's plan (for EXPLAIN ANALYZE, after running the statement).
   */
  synchronized void explainWith(Explain explain) {
    this.explain = explain;
  }

  /** {@link #run} for an explained statement: DuckDB's EXPLAIN materialized, then the result rows streamed. */
  private ArrowReader runExplained(BufferAllocator allocator, int batchRows, boolean check) {
    try {
      if (check) {
        checkParameters();
      }
      List<String[]> plan = new ArrayList<>();
      try (PreparedStatement statement = connection.prepareStatement(explain.duckdbStatement(sql))) {
        running = statement;
        parameters.bind(statement);
        checkNotCancelled();
        try (ResultSet rows = onWorker(statement::executeQuery)) {
          while (rows.next()) {
            plan.add(new String[] {rows.getString(1), rows.getString(2)});
          }
        }
      }
      checkNotCancelled();
      PreparedStatement result = connection.prepareStatement(explain.resultStatement(plan));
      open.add(result);
      running = result;
      ResultSet rows = onWorker(result::executeQuery);
      open.add(rows);
      return (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, batchRows);
    } catch (SQLException e) {
      throw translate(e);
    }
  }

  /**
   * Lets the query learn errors the streaming driver loses by running the statement once more on
   * {@code connection} (see the class comment).
   */
  synchronized void rerunWith(MaterializingConnection connection) {
    this.materializing = connection;
  }

  /**
   * DuckDB's error for a statement whose streamed execution failed with {@code e}: {@code e} itself
   * unless it is the driver's {@value #LOST_ERROR}, else the error of running it materialized
   * (still {@code e} if that run succeeds). The run is cancellable like the first.
   */
  private SQLException lostError(SQLException e) {
    if (!LOST_ERROR.equals(e.getMessage()) || materializing == null || cancelled) {
      return e;
    }
    try {
      Connection rerun = materializing.open();
      try (PreparedStatement statement = rerun.prepareStatement(sql)) {
        running = statement;
        parameters.bind(statement);
        if (!cancelled) {
          onWorker(statement::executeQuery).close();
        }
        return e;
      } finally {
        materializing.release();
      }
    } catch (SQLException real) {
      return real;
    }
  }

  /** Closes {@code resource} when the query closes, after its connection and database. */
  synchronized void closeWith(AutoCloseable resource) {
    if (closed) {
      closeQuietly(resource);
    } else {
      closedLast.add(resource);
    }
  }

  /**
   * Stops the query's DuckDB work at once, from any thread (DuckDB checks for the interrupt
   * between vectors, so a running aggregate or join stops within milliseconds): the statement
   * being started or read then fails with {@link #cancelledError()}. The query must still be
   * closed by its owner. Idempotent; a query not yet started will not start.
   */
  void cancel() {
    cancelled = true;
    PreparedStatement statement = running;
    if (statement != null) {
      try {
        statement.cancel();
      } catch (SQLException ignored) {
        // Already closed: nothing runs any more.
      }
    }
  }

  /**
   * Stops the query as {@link #cancel} does, for the server's reason {@code reason}: the query
   * then fails with it rather than as cancelled.
   */
  void stop(SeException reason) {
    if (!cancelled) {
      stopReason = reason;
    }
    cancel();
  }

  boolean isCancelled() {
    return cancelled;
  }

  /** What this stopped query reports: the server's reason (see {@link #stop}) or {@link #cancelledError()}. */
  SeException stoppedError() {
    SeException reason = stopReason;
    return reason != null ? reason : cancelledError();
  }

  private void checkNotCancelled() {
    if (cancelled) {
      throw stoppedError();
    }
  }

  /** What a cancelled query reports (Flight status CANCELLED). */
  static SeException cancelledError() {
    return new SeException(io.storageengine.common.ErrorCode.CANCELLED, "query cancelled");
  }

  /**
   * The error to report for a failure of this query in DuckDB (also while its reader is
   * consumed): {@link SnapshotExpiredException} when a file of a pinned snapshot no longer
   * exists, else {@link DuckDbErrors#translate}. Checked by looking at the files, not by parsing
   * DuckDB's message, which differs by version and by how the file went missing.
   */
  SeException translate(Exception e) {
    if (cancelled) {
      return stoppedError();
    }
    return translate(reads, e);
  }

  /** As {@link #translate(Exception)}, for a failure of a query reading {@code reads}. */
  static SeException translate(List<TableRead> reads, Exception e) {
    if (e instanceof SeException se) {
      return se;
    }
    for (TableRead read : reads) {
      for (String file : read.localFiles()) {
        if (!Files.exists(Path.of(file))) {
          return SnapshotExpiredException.missingFiles(read.displayName(), read.table(), read.snapshotId(), e);
        }
      }
    }
    return DuckDbErrors.translate(e);
  }

  /**
   * Starts the statement once (parameters checked, see {@link #checkParameters}) and returns its
   * reader, owned by this query and closed with it; later calls return the same reader. DuckDB
   * runs the statement as far as its first batch here: an aggregate or sort is computed, a scan
   * has produced its first batches; the reader's schema is the result's. Result memory comes from
   * a child of {@code allocator}, closed with the query. A start that failed (or was cancelled)
   * throws the same error on later calls; a call made while another thread starts the query
   * waits for that start, and {@link #cancel} stops both.
   */
  synchronized ArrowReader start(BufferAllocator allocator, int batchRows) {
    if (closed && started == null) {
      // Closed (by its owner, after a cancel) before a background start got to run.
      throw stoppedError();
    }
    if (startFailure != null) {
      throw startFailure;
    }
    if (started == null) {
      BufferAllocator child = allocator.newChildAllocator("query-" + UUID.randomUUID(), 0, Long.MAX_VALUE);
      open.add(child);
      try {
        started = run(child, batchRows, true);
      } catch (RuntimeException e) {
        startFailure = cancelled ? stoppedError() : e;
        throw startFailure;
      }
      open.add(started);
    }
    return started;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    synchronized (priority) {
      ended = true;
    }
    for (int i = open.size() - 1; i >= 0; i--) {
      closeQuietly(open.get(i));
    }
    closeQuietly(connection);
    resources.forEach(PreparedQuery::closeQuietly);
    closedLast.forEach(PreparedQuery::closeQuietly);
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Closing DuckDB resources after a failed query; the original error is what matters.
    }
  }
}

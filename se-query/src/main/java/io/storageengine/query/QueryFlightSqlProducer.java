package io.storageengine.query;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.WalLog;
import io.opentelemetry.api.trace.Span;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.FlightErrors;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.CloseSessionResult;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.GetSessionOptionsRequest;
import org.apache.arrow.flight.GetSessionOptionsResult;
import org.apache.arrow.flight.NoOpSessionOptionValueVisitor;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.SessionOptionValue;
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.SetSessionOptionsResult;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.BasicFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.Catalog;

/**
 * Read-only Flight SQL over the Iceberg tables of one tenant per call.
 *
 * <p>The tenant is the catalog id of the {@code se-query-metadata} header or of the session
 * option {@code catalog} (see {@link QueryMetadataInterceptor}); in SQL it is named
 * {@code default}. Statements and prepared statements are planned by a {@link QueryEngine};
 * results stream as Arrow batches straight from DuckDB. Mutations and transactions are refused.
 * Hosts may subclass this producer, e.g. to accept ingestion through {@code acceptPut} /
 * {@code acceptPutStatementBulkIngest}, which this class leaves alone.
 *
 * <p>With a WAL, a query reads each table's snapshot plus its acknowledged WAL segments not
 * reconciled yet ({@link ReadMode#LATEST}, the default); {@code "read":"snapshot"} in the
 * header or the session option {@value #READ_OPTION} {@code = snapshot} reads snapshots only.
 *
 * <p>The server keeps no per-statement state: a prepared statement handle is a
 * {@link StatementHandle} (tenant and SQL); binding parameters ({@code DoPut} with
 * {@code CommandPreparedStatementQuery}) answers with a new handle that also carries the values
 * ({@code DoPutPreparedStatementResult}), and tickets carry the handle plus pinned snapshots. So
 * any instance behind a load balancer serves any call, and closing a prepared statement frees
 * nothing.
 */
public class QueryFlightSqlProducer extends BasicFlightSqlProducer {
  /** Session option that selects the tenant. */
  public static final String CATALOG_OPTION = "catalog";
  /** Session option that chooses what queries read: {@code latest} (default) or {@code snapshot}, see {@link ReadMode}. */
  public static final String READ_OPTION = "read";
  /** The principal of every call when the host authenticates nobody (see {@link #callerName}). */
  public static final String ANONYMOUS = "anonymous";
  private static final long READY_POLL_MS = 1;
  private static final String SERVER_NAME = "Storage Engine";
  private static final long BACKPRESSURE_WAIT_MS = 30_000;

  private final BufferAllocator allocator;
  private final TenantCatalogs catalogs;
  private final QueryConfig config;
  private final QueryEngine engine;
  private final QuerySessions sessions;
  private final ServerSqlInfo sqlInfo;
  private final CatalogMetadataStreams metadata;
  private final PlannedQueryHandoff handoff;
  /** Runs the starts of prepared statements' queries after their GetFlightInfo answered. */
  private final ExecutorService starts;
  /** Queries being streamed by a DoGet, by ticket handle (see {@link #cancelFlightInfo}). */
  private final Map<String, PreparedQuery> streaming = new java.util.concurrent.ConcurrentHashMap<>();

  /** A producer whose host does not accept Flight SQL bulk ingest. */
  public QueryFlightSqlProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb,
      QueryConfig config) {
    this(allocator, catalogs, duckdb, config, false);
  }

  /**
   * A producer whose host does not accept Flight SQL bulk ingest, whose queries read each table's
   * acknowledged WAL segments after its snapshot from {@code wal}, applied by {@code tailRows}
   * (see {@link ReadMode}); {@code "t$wal"} shows nothing pending.
   */
  public QueryFlightSqlProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb,
      QueryConfig config, WalLog wal, WalTailRows tailRows) {
    this(allocator, catalogs, duckdb, config, false, Threads.daemon("se-query"), PendingWal.NONE, wal, tailRows);
  }

  /**
   * @param duckdb the process's DuckDB runtime (databases, data file copies, footers); it
   *     outlives the producer and is closed by its owner
   * @param bulkIngestion whether the host accepts Flight SQL bulk ingest (overriding
   *     {@code acceptPutStatementBulkIngest}); {@code GetSqlInfo} says so
   */
  protected QueryFlightSqlProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb,
      QueryConfig config, boolean bulkIngestion) {
    this(allocator, catalogs, duckdb, config, bulkIngestion, Threads.daemon("se-query"));
  }

  /**
   * As above, with {@code threads} making the producer's background threads (a process's
   * composition root passes threads whose uncaught throwables take its fatal-error path).
   */
  protected QueryFlightSqlProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb,
      QueryConfig config, boolean bulkIngestion, ThreadFactory threads) {
    this(allocator, catalogs, duckdb, config, bulkIngestion, threads, PendingWal.NONE, null, null);
  }

  /**
   * As above, {@code pending} telling what the WAL holds for {@code "t$wal"} (see
   * {@link PendingWal}), and {@code wal} the cluster's WAL: queries then read each table's
   * acknowledged WAL segments after its snapshot ({@link ReadMode#LATEST}), applied by
   * {@code tailRows} (entity tables only when it {@linkplain WalTailRows#foldsEntities folds
   * them}, else at their snapshot); with a null {@code wal} or {@code tailRows} they read
   * snapshots only.
   */
  protected QueryFlightSqlProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb,
      QueryConfig config, boolean bulkIngestion, ThreadFactory threads, PendingWal pending, WalLog wal,
      WalTailRows tailRows) {
    this.handoff = new PlannedQueryHandoff(threads);
    this.starts = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), threads);
    this.allocator = allocator;
    this.catalogs = catalogs;
    this.config = config;
    this.engine = new QueryEngine(catalogs, duckdb, config, pending,
        wal == null || tailRows == null ? null : new WalTail(wal, duckdb, tailRows));
    // A planned query waiting for its DoGet gives its admission back to one that would wait for it.
    engine.admission().releaseIdleWith(handoff::releaseOldest);
    this.sessions = new QuerySessions(config.maxSessions());
    String version = Optional.ofNullable(getClass().getPackage().getImplementationVersion()).orElse("0.1.0-SNAPSHOT");
    this.sqlInfo = new ServerSqlInfo(SERVER_NAME, version,
        Optional.ofNullable(Schema.class.getPackage().getImplementationVersion()).orElse("18.3.0"),
        engine.keywords(), bulkIngestion);
    this.metadata = new CatalogMetadataStreams(allocator);
  }

  // ---------------------------------------------------------------- tenant selection

  /**
   * The catalog id of the current call: the {@code se-query-metadata} header wins over the
   * session option. Throws INVALID_ARGUMENT saying how to select one when neither is present.
   */
  protected String selectedCatalogId() {
    String catalogId = callCatalogId().orElseThrow(() -> SeException.invalid(
            "no catalog selected: send the gRPC header %s = {\"catalog_id\":\"<catalog>\"} "
                + "or set the Flight SQL session option %s (JDBC: catalog=<catalog>)",
            QueryMetadataInterceptor.HEADER_NAME, CATALOG_OPTION));
    authorizeRead(catalogId);
    // The Flight call's span (when tracing) names the tenant the call resolved to, also when a
    // session selected it.
    Span.current().setAttribute(SpanFields.CATALOG_ID, catalogId);
    return catalogId;
  }

  /**
   * Returns when the current caller may read catalog {@code catalogId}; throws (FORBIDDEN) otherwise.
   * Called before the catalog is looked up, for every catalog a call selects, a ticket or prepared
   * statement names, or a session option sets. This class allows everything: hosts that
   * authenticate callers override it.
   */
  protected void authorizeRead(String catalogId) {
  }

  /**
   * The name of the principal the current call authenticated as. Sessions, prepared statement
   * handles and tickets belong to the principal of the call that created them and serve no
   * other (FORBIDDEN). This class has no authentication: every caller is {@code anonymous}.
   */
  protected String callerName() {
    return ANONYMOUS;
  }

  /**
   * The catalog id the current call selects by header or session, if any. A session of another
   * principal is FORBIDDEN, also when a header selects the catalog.
   */
  protected Optional<String> callCatalogId() {
    QueryCallContext call = QueryMetadataInterceptor.current();
    Optional<String> fromSession = call.sessionId().flatMap(id -> sessions.catalog(id, callerName()));
    Optional<String> fromHeader = call.headerCatalogId();
    return fromHeader.isPresent() ? fromHeader : fromSession;
  }

  /**
   * What the current call's queries read: {@code read} of the {@code se-query-metadata} header,
   * else the session option {@value #READ_OPTION}, else {@link ReadMode#LATEST}.
   */
  ReadMode callReadMode() {
    QueryCallContext call = QueryMetadataInterceptor.current();
    Optional<ReadMode> fromHeader = call.headerRead();
    return fromHeader.or(() -> call.sessionId().flatMap(id -> sessions.read(id, callerName()))).orElse(ReadMode.LATEST);
  }

  /** The live catalog of the current call's tenant (NOT_FOUND when unknown). */
  protected Catalog selectedCatalog() {
    return catalogs.catalog(selectedCatalogId());
  }

  // ---------------------------------------------------------------- statements

  @Override
  public FlightInfo getFlightInfoStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    try {
      String catalogId = selectedCatalogId();
      return plannedFlightInfo(new StatementHandle(callerName(), catalogId, command.getQuery(), Map.of()), descriptor);
    } catch (RuntimeException e) {
      throw FlightErrors.toException(e);
    }
  }

  @Override
  public SchemaResult getSchemaStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    try (PreparedQuery query = engine.prepare(selectedCatalogId(), command.getQuery(), Map.of())) {
      return new SchemaResult(query.schema(allocator));
    } catch (RuntimeException e) {
      throw FlightErrors.toException(e);
    }
  }

  @Override
  public void getStreamStatement(FlightSql.TicketStatementQuery ticket, CallContext context,
      ServerStreamListener listener) {
    try {
      StatementHandle handle = ownHandle(ticket.getStatementHandle(), "ticket");
      byte[] key = ticket.getStatementHandle().toByteArray();
      PreparedQuery planned = handoff.take(key);
      try (PreparedQuery query = planned != null ? planned
          : engine.prepare(handle.catalogId(), handle.sql(), handle.pins(), handle.parameters(), callReadMode())) {
        String streamKey = java.util.Base64.getEncoder().encodeToString(key);
        streaming.put(streamKey, query);
        try {
          stream(query, listener);
        } finally {
          streaming.remove(streamKey, query);
        }
      }
    } catch (RuntimeException e) {
      listener.error(FlightErrors.toException(e));
    }
  }

  /**
   * Plans the statement of {@code statement} (its tenant, SQL and bound values) on current
   * snapshots and starts it (see {@link PreparedQuery#start}): the FlightInfo's schema is the
   * schema of the very result the DoGet of its ticket streams, and the work done here is not done
   * again. The ticket pins the snapshots; the started query waits for that DoGet in the handoff
   * (a DoGet that misses it plans and runs the pinned statement again).
   */
  private FlightInfo plannedFlightInfo(StatementHandle statement, FlightDescriptor descriptor) {
    PreparedQuery query = engine.prepare(statement.catalogId(), statement.sql(), Map.of(), statement.parameters(),
        callReadMode());
    try (CallCancellation ignored = CallCancellation.watch(query::cancel)) {
      Schema schema = query.resultSchema(query.start(allocator, config.batchRows()).getVectorSchemaRoot().getSchema());
      byte[] encoded = statement.withPins(query.pins()).encode();
      FlightInfo info = new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(ticket(encoded))), -1, -1);
      handoff.offer(encoded, statement.catalogId(), query);
      return info;
    } catch (IOException e) {
      query.close();
      throw query.translate(e);
    } catch (RuntimeException e) {
      query.close();
      throw e;
    }
  }

  /**
   * Plans the statement of {@code statement} as {@link #plannedFlightInfo} does, but answers
   * before running it: the bound values are checked and the schema is DuckDB's description of the
   * result ({@link PreparedQuery#schema}, binding only); the query then starts on a background
   * thread and waits for its DoGet in the handoff. Drivers that cannot cancel a GetFlightInfo in
   * flight (the JDBC driver holds the statement's lock during it, so {@code Statement.cancel()}
   * and its query timeout act only on the DoGet stream) thus get their work into the DoGet, where
   * a cancelled stream stops it. Execution errors are reported by that DoGet.
   */
  private FlightInfo startedFlightInfo(StatementHandle statement, FlightDescriptor descriptor) {
    PreparedQuery query = engine.prepare(statement.catalogId(), statement.sql(), Map.of(), statement.parameters(),
        callReadMode());
    try {
      query.checkParameters();
      Schema schema = query.schema(allocator);
      byte[] encoded = statement.withPins(query.pins()).encode();
      FlightInfo info = new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(ticket(encoded))), -1, -1);
      handoff.offer(encoded, statement.catalogId(), query);
      try {
        starts.execute(() -> {
          try {
            query.start(allocator, config.batchRows());
          } catch (RuntimeException e) {
            // Kept by the query: the DoGet that takes it reports the error.
          }
        });
      } catch (RejectedExecutionException e) {
        // Shutting down: the DoGet, if any comes, starts the query itself.
      }
      return info;
    } catch (RuntimeException e) {
      query.close();
      throw e;
    }
  }

  private static Ticket ticket(byte[] encodedHandle) {
    FlightSql.TicketStatementQuery ticket = FlightSql.TicketStatementQuery.newBuilder()
        .setStatementHandle(ByteString.copyFrom(encodedHandle)).build();
    return new Ticket(Any.pack(ticket).toByteArray());
  }

  /**
   * Streams the query's batches as DuckDB produces them, waiting for a slow client. The first
   * batch is sent at once: a call that has sent nothing can always take it.
   */
  private void stream(PreparedQuery query, ServerStreamListener listener) {
    listener.setOnCancelHandler(query::cancel);
    try (CallCancellation ignored = CallCancellation.watch(query::cancel)) {
      ArrowReader reader = query.start(allocator, config.batchRows());
      VectorSchemaRoot produced = reader.getVectorSchemaRoot();
      // The reader's vectors, sent under the annotated schema (the reader owns them).
      try (ResultColumns.Sender sender = new ResultColumns.Sender(produced, query.resultSchema(produced.getSchema()),
          allocator)) {
        send(query, listener, sender);
      }
    } catch (IOException e) {
      // A batch failed after others may have been sent: the client gets this error, never a
      // short result (an expired snapshot's files deleted mid-read included).
      throw query.translate(e);
    }
  }

  private void send(PreparedQuery query, ServerStreamListener listener, ResultColumns.Sender sender)
      throws IOException {
    VectorSchemaRoot root = sender.root();
    BackpressureStrategy backpressure = new BackpressureStrategy.CallbackBackpressureStrategy();
    backpressure.register(listener);
    listener.start(root);
    ResultLimit limit = new ResultLimit(config.limits());
    boolean first = true;
    while (query.loadNextBatch()) {
      BackpressureStrategy.WaitResult ready = first ? BackpressureStrategy.WaitResult.READY
          : awaitReady(backpressure, query);
      first = false;
      if (query.isCancelled() && !listener.isCancelled()) {
        // Cancelled by CancelFlightInfo: DuckDB may still hand out a batch it had produced.
        listener.error(FlightErrors.toException(query.stoppedError()));
        return;
      }
      if (ready == BackpressureStrategy.WaitResult.CANCELLED || listener.isCancelled()) {
        return;
      }
      if (ready != BackpressureStrategy.WaitResult.READY) {
        listener.error(CallStatus.TIMED_OUT.withDescription("client stopped reading the result").toRuntimeException());
        return;
      }
      sender.load();
      limit.add(root);
      listener.putNext();
    }
    listener.completed();
  }

  /**
   * Cancels the statements of the FlightInfo's tickets: a query planned by GetFlightInfo and not
   * yet fetched is stopped and dropped, one being streamed by a DoGet on this server stops within
   * milliseconds (its DoGet ends CANCELLED). Answers CANCELLED when a query was stopped, else
   * NOT_CANCELLABLE (finished, never started here, or not a statement's FlightInfo).
   */
  @Override
  public void cancelFlightInfo(org.apache.arrow.flight.CancelFlightInfoRequest request, CallContext context,
      StreamListener<org.apache.arrow.flight.CancelStatus> listener) {
    try {
      boolean stopped = false;
      for (FlightEndpoint endpoint : request.getInfo().getEndpoints()) {
        Any any = parseAny(endpoint.getTicket().getBytes(), "CancelFlightInfo ticket");
        if (!any.is(FlightSql.TicketStatementQuery.class)) {
          continue;
        }
        ByteString handleBytes = unpack(any, FlightSql.TicketStatementQuery.class, "CancelFlightInfo ticket")
            .getStatementHandle();
        ownHandle(handleBytes, "ticket");
        byte[] key = handleBytes.toByteArray();
        PreparedQuery planned;
        while ((planned = handoff.take(key)) != null) {
          planned.cancel();
          planned.close();
          stopped = true;
        }
        PreparedQuery running = streaming.get(java.util.Base64.getEncoder().encodeToString(key));
        if (running != null) {
          running.cancel();
          stopped = true;
        }
      }
      listener.onNext(stopped ? org.apache.arrow.flight.CancelStatus.CANCELLED
          : org.apache.arrow.flight.CancelStatus.NOT_CANCELLABLE);
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
    }
  }

  // ---------------------------------------------------------------- request envelopes

  /**
   * Flight SQL requests are command descriptors; a path descriptor is the client's mistake
   * (INVALID_ARGUMENT), as is a command that is not a Flight SQL command.
   */
  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    checkCommand(descriptor, "GetFlightInfo");
    try (CallCancellation.Scope serving = CallCancellation.serving(context::isCancelled)) {
      return super.getFlightInfo(context, descriptor);
    }
  }

  @Override
  public SchemaResult getSchema(CallContext context, FlightDescriptor descriptor) {
    checkCommand(descriptor, "GetSchema");
    try (CallCancellation.Scope serving = CallCancellation.serving(context::isCancelled)) {
      return super.getSchema(context, descriptor);
    }
  }

  /** Actions (prepared statements: their creation plans the statement) stop with their call too. */
  @Override
  public void doAction(CallContext context, org.apache.arrow.flight.Action action,
      StreamListener<org.apache.arrow.flight.Result> listener) {
    try (CallCancellation.Scope serving = CallCancellation.serving(context::isCancelled)) {
      super.doAction(context, action, listener);
    }
  }

  /** A ticket that is not one this server issued is the client's mistake (INVALID_ARGUMENT). */
  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    Any command;
    try {
      command = parseAny(ticket.getBytes(), "DoGet ticket");
      checkKnown(command, "DoGet ticket");
    } catch (RuntimeException e) {
      listener.error(FlightErrors.toException(e));
      return;
    }
    try (CallCancellation.Scope serving = CallCancellation.serving(context::isCancelled)) {
      super.getStream(context, ticket, listener);
    }
  }

  private static void checkCommand(FlightDescriptor descriptor, String call) {
    if (!descriptor.isCommand()) {
      throw FlightErrors.toException(SeException.invalid("%s: the descriptor is a path (%s); Flight SQL takes a "
          + "command descriptor holding a Flight SQL command", call, descriptor.getPath()));
    }
    try {
      checkKnown(parseAny(descriptor.getCommand(), call + " command"), call + " command");
    } catch (RuntimeException e) {
      throw FlightErrors.toException(e);
    }
  }

  private static Any parseAny(byte[] bytes, String what) {
    try {
      Any any = Any.parseFrom(bytes);
      if (any.getTypeUrl().isEmpty()) {
        throw SeException.invalid("%s is not a Flight SQL message (no protobuf Any type)", what);
      }
      return any;
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw SeException.invalid("%s is not a Flight SQL message: %s", what, e.getMessage());
    }
  }

  private static void checkKnown(Any any, String what) {
    String type = any.getTypeUrl().substring(any.getTypeUrl().lastIndexOf('/') + 1);
    if (!type.startsWith("arrow.flight.protocol.sql.")) {
      throw SeException.invalid("%s is not a Flight SQL message: type `%s`", what, any.getTypeUrl());
    }
  }

  private static <T extends Message> T unpack(Any any, Class<T> type, String what) {
    try {
      return any.unpack(type);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw SeException.invalid("%s is not a valid %s: %s", what, type.getSimpleName(), e.getMessage());
    }
  }

  /**
   * Waits until the client can take another batch. Some gRPC hosts (Armeria) do not call the
   * on-ready handler for a call that was never blocked, so the callback wait is re-checked in
   * short slices until the overall timeout.
   */
  private static BackpressureStrategy.WaitResult awaitReady(BackpressureStrategy backpressure, PreparedQuery query) {
    long deadline = System.nanoTime() + BACKPRESSURE_WAIT_MS * 1_000_000L;
    while (true) {
      BackpressureStrategy.WaitResult ready = backpressure.waitForListener(READY_POLL_MS);
      if (ready != BackpressureStrategy.WaitResult.TIMEOUT || System.nanoTime() >= deadline || query.isCancelled()) {
        return ready;
      }
    }
  }

  // ---------------------------------------------------------------- prepared statements

  @Override
  public void createPreparedStatement(FlightSql.ActionCreatePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    try {
      if (request.hasTransactionId()) {
        throw unsupported("transactions are not supported: queries are read-only");
      }
      String catalogId = selectedCatalogId();
      Schema schema;
      List<Field> parameters = new ArrayList<>();
      try (PreparedQuery query = engine.prepare(catalogId, request.getQuery(), Map.of())) {
        schema = query.schema(allocator);
        List<String> types = query.parameterTypes();
        for (int i = 0; i < types.size(); i++) {
          parameters.add(ParameterTypes.arrowField(i + 1, types.get(i)));
        }
      }
      byte[] handle = new StatementHandle(callerName(), catalogId, request.getQuery(), Map.of()).encode();
      FlightSql.ActionCreatePreparedStatementResult result = FlightSql.ActionCreatePreparedStatementResult.newBuilder()
          .setPreparedStatementHandle(ByteString.copyFrom(handle))
          .setDatasetSchema(ByteString.copyFrom(schema.serializeAsMessage()))
          .setParameterSchema(ByteString.copyFrom(new Schema(parameters).serializeAsMessage()))
          .build();
      listener.onNext(new Result(Any.pack(result).toByteArray()));
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
    }
  }

  /** Nothing to free: the handle is the whole prepared statement. */
  @Override
  public void closePreparedStatement(FlightSql.ActionClosePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    listener.onCompleted();
  }

  /**
   * Binds parameter values: the batch must hold exactly one row (one column per parameter).
   * Answers with a new handle carrying the values; the values are checked against the
   * statement's parameters when it is planned ({@code GetFlightInfo}), which follows at once.
   */
  @Override
  public Runnable acceptPutPreparedStatementQuery(FlightSql.CommandPreparedStatementQuery command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return () -> {
      try {
        StatementHandle prepared = ownHandle(command.getPreparedStatementHandle(), "prepared statement");
        QueryParameters values = null;
        int rows = 0;
        while (flightStream.next()) {
          VectorSchemaRoot root = flightStream.getRoot();
          if (root.getRowCount() > 0 && values == null) {
            values = QueryParameters.fromBatch(root, root.getRowCount());
          }
          rows += root.getRowCount();
        }
        if (rows != 1) {
          values = QueryParameters.fromBatch(flightStream.getRoot(), rows);
        }
        byte[] bound = prepared.withParameters(values).encode();
        byte[] answer = FlightSql.DoPutPreparedStatementResult.newBuilder()
            .setPreparedStatementHandle(ByteString.copyFrom(bound)).build().toByteArray();
        // The client reads the new handle from the PutResult's metadata (a plain
        // DoPutPreparedStatementResult, not an Any); onNext copies the buffer.
        try (ArrowBuf metadata = allocator.buffer(answer.length)) {
          metadata.writeBytes(answer);
          ackStream.onNext(PutResult.metadata(metadata));
        }
        ackStream.onCompleted();
      } catch (RuntimeException e) {
        ackStream.onError(FlightErrors.toException(e));
      }
    };
  }

  @Override
  public FlightInfo getFlightInfoPreparedStatement(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightDescriptor descriptor) {
    try {
      return startedFlightInfo(ownHandle(command.getPreparedStatementHandle(), "prepared statement"), descriptor);
    } catch (RuntimeException e) {
      throw FlightErrors.toException(e);
    }
  }

  @Override
  public SchemaResult getSchemaPreparedStatement(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightDescriptor descriptor) {
    try {
      StatementHandle prepared = ownHandle(command.getPreparedStatementHandle(), "prepared statement");
      try (PreparedQuery query = engine.prepare(prepared.catalogId(), prepared.sql(), Map.of(), prepared.parameters(),
          callReadMode())) {
        if (!prepared.parameters().isEmpty()) {
          query.checkParameters();
        }
        return new SchemaResult(query.schema(allocator));
      }
    } catch (RuntimeException e) {
      throw FlightErrors.toException(e);
    }
  }

  @Override
  public void getStreamPreparedStatement(FlightSql.CommandPreparedStatementQuery command, CallContext context,
      ServerStreamListener listener) {
    try {
      StatementHandle prepared = ownHandle(command.getPreparedStatementHandle(), "prepared statement");
      try (PreparedQuery query = engine.prepare(prepared.catalogId(), prepared.sql(), Map.of(), prepared.parameters(),
          callReadMode())) {
        stream(query, listener);
      }
    } catch (RuntimeException e) {
      listener.error(FlightErrors.toException(e));
    }
  }

  /**
   * The statement a ticket or prepared statement handle carries, usable only by calls of the
   * principal that created it (FORBIDDEN) selecting the same tenant ({@code what} names it in the
   * error).
   */
  private StatementHandle ownHandle(ByteString bytes, String what) {
    StatementHandle handle = StatementHandle.decode(bytes.toByteArray());
    String caller = callerName();
    if (!handle.owner().equals(caller)) {
      throw QuerySessions.refusal(caller, "this " + what);
    }
    authorizeRead(handle.catalogId());
    Optional<String> selected = callCatalogId();
    if (selected.isPresent() && !selected.get().equals(handle.catalogId())) {
      throw SeException.invalid("%s belongs to catalog `%s`, but this call selects `%s`", what, handle.catalogId(),
          selected.get());
    }
    Span.current().setAttribute(SpanFields.CATALOG_ID, handle.catalogId());
    return handle;
  }

  @Override
  public Runnable acceptPutStatement(FlightSql.CommandStatementUpdate command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return () -> {
      try {
        engine.prepare(selectedCatalogId(), command.getQuery(), Map.of()).close();
        throw unsupported("updates are not allowed: queries are read-only");
      } catch (RuntimeException e) {
        ackStream.onError(FlightErrors.toException(e));
      }
    };
  }

  @Override
  public Runnable acceptPutPreparedStatementUpdate(FlightSql.CommandPreparedStatementUpdate command,
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return refuse(ackStream, "updates are not allowed: queries are read-only");
  }

  private static Runnable refuse(StreamListener<PutResult> ackStream, String message) {
    return () -> ackStream.onError(FlightErrors.toException(unsupported(message)));
  }

  /** An operation Flight SQL has that this read-only engine does not offer (UNIMPLEMENTED). */
  private static SeException unsupported(String message) {
    return new SeException(ErrorCode.UNSUPPORTED, message);
  }

  @Override
  public void beginTransaction(FlightSql.ActionBeginTransactionRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginTransactionResult> listener) {
    listener.onError(FlightErrors.toException(
        unsupported("transactions are not supported: queries are read-only and see one snapshot each")));
  }

  @Override
  public void beginSavepoint(FlightSql.ActionBeginSavepointRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginSavepointResult> listener) {
    listener.onError(FlightErrors.toException(unsupported("savepoints are not supported: queries are read-only")));
  }

  // ---------------------------------------------------------------- sessions

  /**
   * Sets the {@code catalog} option of the call's session, opening one (a new id, returned as a
   * cookie) when the call presents none. A session belongs to the principal whose call opened
   * it: presenting another principal's session is FORBIDDEN, for this and every other call.
   */
  @Override
  public void setSessionOptions(SetSessionOptionsRequest request, CallContext context,
      StreamListener<SetSessionOptionsResult> listener) {
    QueryCallContext call = QueryMetadataInterceptor.current();
    String caller = callerName();
    String sessionId = call.sessionId().orElseGet(() -> {
      String id = QuerySessions.newSessionId();
      call.issueSession(id);
      return id;
    });
    try {
      sessions.catalog(sessionId, caller);
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
      return;
    }
    Map<String, SetSessionOptionsResult.Error> errors = new HashMap<>();
    request.getSessionOptions().forEach((name, value) -> {
      if (!CATALOG_OPTION.equals(name) && !READ_OPTION.equals(name)) {
        errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_NAME));
        return;
      }
      String text = value.isEmpty() ? null : value.acceptVisitor(new NoOpSessionOptionValueVisitor<String>() {
        @Override
        public String visit(String text) {
          return text;
        }
      });
      if (READ_OPTION.equals(name)) {
        try {
          sessions.setRead(sessionId, caller, value.isEmpty() ? null : ReadMode.parse(text, "session option " + READ_OPTION));
        } catch (RuntimeException e) {
          errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_VALUE));
        }
        return;
      }
      if (value.isEmpty()) {
        sessions.clearCatalog(sessionId, caller);
        return;
      }
      String catalogId = text;
      try {
        if (catalogId == null) {
          throw SeException.invalid("session option catalog must be a string");
        }
        authorizeRead(catalogId);
        catalogs.catalog(catalogId);
        sessions.setCatalog(sessionId, caller, catalogId);
      } catch (RuntimeException e) {
        errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_VALUE));
      }
    });
    listener.onNext(new SetSessionOptionsResult(errors));
    listener.onCompleted();
  }

  @Override
  public void getSessionOptions(GetSessionOptionsRequest request, CallContext context,
      StreamListener<GetSessionOptionsResult> listener) {
    Map<String, SessionOptionValue> options = new HashMap<>();
    try {
      String caller = callerName();
      QueryMetadataInterceptor.current().sessionId().flatMap(id -> sessions.catalog(id, caller))
          .ifPresent(catalogId -> options.put(CATALOG_OPTION, SessionOptionValueFactory.makeSessionOptionValue(catalogId)));
      QueryMetadataInterceptor.current().sessionId().flatMap(id -> sessions.read(id, caller))
          .ifPresent(read -> options.put(READ_OPTION, SessionOptionValueFactory.makeSessionOptionValue(read.optionValue())));
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
      return;
    }
    listener.onNext(new GetSessionOptionsResult(options));
    listener.onCompleted();
  }

  @Override
  public void closeSession(CloseSessionRequest request, CallContext context, StreamListener<CloseSessionResult> listener) {
    try {
      String caller = callerName();
      QueryMetadataInterceptor.current().sessionId().ifPresent(id -> sessions.close(id, caller));
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
      return;
    }
    listener.onNext(new CloseSessionResult(CloseSessionResult.Status.CLOSED));
    listener.onCompleted();
  }

  // ---------------------------------------------------------------- metadata

  @Override
  protected <T extends Message> List<FlightEndpoint> determineEndpoints(T request, FlightDescriptor descriptor, Schema schema) {
    return List.of(new FlightEndpoint(new Ticket(Any.pack(request).toByteArray())));
  }

  @Override
  public FlightInfo getFlightInfoSqlInfo(FlightSql.CommandGetSqlInfo request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_SQL_INFO_SCHEMA);
  }

  @Override
  public void getStreamSqlInfo(FlightSql.CommandGetSqlInfo command, CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> sqlInfo.send(command.getInfoList(), listener, allocator));
  }

  @Override
  public FlightInfo getFlightInfoTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_TYPE_INFO_SCHEMA);
  }

  @Override
  public void getStreamTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      ServerStreamListener listener) {
    metadataStream(listener, () -> metadata.typeInfo(request, listener));
  }

  @Override
  public FlightInfo getFlightInfoExportedKeys(FlightSql.CommandGetExportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_EXPORTED_KEYS_SCHEMA);
  }

  @Override
  public void getStreamExportedKeys(FlightSql.CommandGetExportedKeys command, CallContext context,
      ServerStreamListener listener) {
    streamNoForeignKeys(Schemas.GET_EXPORTED_KEYS_SCHEMA, listener);
  }

  @Override
  public FlightInfo getFlightInfoImportedKeys(FlightSql.CommandGetImportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_IMPORTED_KEYS_SCHEMA);
  }

  @Override
  public void getStreamImportedKeys(FlightSql.CommandGetImportedKeys command, CallContext context,
      ServerStreamListener listener) {
    streamNoForeignKeys(Schemas.GET_IMPORTED_KEYS_SCHEMA, listener);
  }

  @Override
  public FlightInfo getFlightInfoCrossReference(FlightSql.CommandGetCrossReference request, CallContext context,
      FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_CROSS_REFERENCE_SCHEMA);
  }

  @Override
  public void getStreamCrossReference(FlightSql.CommandGetCrossReference command, CallContext context,
      ServerStreamListener listener) {
    streamNoForeignKeys(Schemas.GET_CROSS_REFERENCE_SCHEMA, listener);
  }

  /** The tables have no foreign keys: an empty stream of {@code schema}, once a catalog is selected. */
  private void streamNoForeignKeys(Schema schema, ServerStreamListener listener) {
    metadataStream(listener, () -> {
      selectedCatalog();
      metadata.noForeignKeys(schema, listener);
    });
  }

  @Override
  public FlightInfo getFlightInfoCatalogs(FlightSql.CommandGetCatalogs request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_CATALOGS_SCHEMA);
  }

  @Override
  public void getStreamCatalogs(CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> {
      selectedCatalog();
      metadata.catalogs(listener);
    });
  }

  @Override
  public FlightInfo getFlightInfoSchemas(FlightSql.CommandGetDbSchemas request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_SCHEMAS_SCHEMA);
  }

  @Override
  public void getStreamSchemas(FlightSql.CommandGetDbSchemas command, CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> metadata.schemas(selectedCatalog(),
        command.hasCatalog() ? command.getCatalog() : null,
        command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null, listener));
  }

  @Override
  public FlightInfo getFlightInfoTables(FlightSql.CommandGetTables request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor,
        request.getIncludeSchema() ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA);
  }

  @Override
  public void getStreamTables(FlightSql.CommandGetTables command, CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> metadata.tables(selectedCatalog(), command, listener));
  }

  @Override
  public FlightInfo getFlightInfoTableTypes(FlightSql.CommandGetTableTypes request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_TABLE_TYPES_SCHEMA);
  }

  @Override
  public void getStreamTableTypes(CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> metadata.tableTypes(listener));
  }

  @Override
  public FlightInfo getFlightInfoPrimaryKeys(FlightSql.CommandGetPrimaryKeys request, CallContext context, FlightDescriptor descriptor) {
    return generateFlightInfo(request, descriptor, Schemas.GET_PRIMARY_KEYS_SCHEMA);
  }

  @Override
  public void getStreamPrimaryKeys(FlightSql.CommandGetPrimaryKeys command, CallContext context, ServerStreamListener listener) {
    metadataStream(listener, () -> metadata.primaryKeys(selectedCatalog(), command, listener));
  }

  private static void metadataStream(ServerStreamListener listener, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      listener.error(FlightErrors.toException(e));
    }
  }

  /** The engine planning and running the queries (for tests). */
  QueryEngine engine() {
    return engine;
  }

  /** Statements a DoGet is streaming now (for tests: a client's stream is open on this server). */
  int streamingCount() {
    return streaming.size();
  }

  @Override
  public void close() throws Exception {
    starts.shutdown();
    handoff.close();
    engine.close();
  }

}

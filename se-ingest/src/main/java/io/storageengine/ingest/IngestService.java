package io.storageengine.ingest;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor.Marshaller;
import io.grpc.ServerCall;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.AdmissionPressure;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.catalog.TableSettings;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalWriter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.auth.ServerAuthHandler;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Durable ingestion over Arrow Flight: the native protocol (descriptor recognised by
 * {@link #isNativeIngest}) and Flight SQL's {@code CommandStatementIngest} through the DoPut
 * method {@link #serveDoPut} installs in Flight's service, both read without a thread per
 * stream. Each batch is validated against the target
 * table, converted to the table's types, group-committed into the table's WAL, and acknowledged
 * only once its segment is durable. Nothing acknowledged is lost; nothing rejected is written.
 *
 * <p>Errors end the stream with a Flight status ({@link io.storageengine.common.FlightErrors}): bad header, schema or
 * batch INVALID_ARGUMENT naming the field; unknown catalog or table NOT_FOUND; memory limits
 * RESOURCE_EXHAUSTED; storage failures UNAVAILABLE (retryable; acks already sent stay valid).
 *
 * <p>Thread-safe. {@link #close()} flushes what is pending and stops the flush threads.
 */
public final class IngestService implements AutoCloseable {
  /** gRPC messages as the bytes received, which ingestion decodes itself. */
  private static final Marshaller<byte[]> BYTES = new Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };

  /** Longest {@link #lastSequence} waits for the table's queued frames. */
  private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);

  private final BufferAllocator allocator;
  private final TableResolver resolver;
  private final GroupCommitter committer;
  private final ProducerWindowCache producers;
  private final IngestConfig config;
  private final ByteBudget budget;
  private final AtomicLong streams = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Telemetry telemetry;
  private final AdmissionTracker admissions = new AdmissionTracker();

  public IngestService(BufferAllocator allocator, TenantCatalogs catalogs, WalWriter wal,
      IngestConfig config) {
    this(allocator, catalogs, wal, config, IngestListener.NONE);
  }

  /**
   * @param allocator parent of one child allocator per stream (limited to
   *     {@link IngestConfig#maxStreamBytes()}); must outlive this service
   * @param listener told after each WAL segment is written, e.g. to schedule reconciliation
   */
  public IngestService(BufferAllocator allocator, TenantCatalogs catalogs, WalWriter wal,
      IngestConfig config, IngestListener listener) {
    this(allocator, catalogs, wal, config, listener, Threads.daemon("se-ingest-flush"));
  }

  /**
   * @param allocator parent of one child allocator per stream (limited to
   *     {@link IngestConfig#maxStreamBytes()}); must outlive this service
   * @param listener told after each WAL segment is written, e.g. to schedule reconciliation
   * @param threads makes the WAL flush threads (a process's composition root passes threads
   *     whose uncaught throwables take its fatal-error path)
   */
  public IngestService(BufferAllocator allocator, TenantCatalogs catalogs, WalWriter wal,
      IngestConfig config, IngestListener listener, ThreadFactory threads) {
    this(allocator, catalogs, wal, config, listener, threads, Telemetry.none());
  }

  /**
   * As {@link #IngestService(BufferAllocator, TenantCatalogs, WalWriter, IngestConfig,
   * IngestListener, ThreadFactory)}, reporting {@code ingest.batch} spans and the ingestion
   * metrics to {@code telemetry}.
   */
  public IngestService(BufferAllocator allocator, TenantCatalogs catalogs, WalWriter wal,
      IngestConfig config, IngestListener listener, ThreadFactory threads, Telemetry telemetry) {
    this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.config = Objects.requireNonNull(config, "config");
    this.resolver = new TableResolver(Objects.requireNonNull(catalogs, "catalogs"));
    this.committer = new GroupCommitter(Objects.requireNonNull(wal, "wal"), catalogs, resolver,
        listener == null ? IngestListener.NONE : listener, config, Objects.requireNonNull(threads, "threads"));
    this.producers = new ProducerWindowCache(wal);
    this.budget = new ByteBudget(config.globalBytes());
  }

  /** What this process knows of the tables' idempotent producers. */
  ProducerWindowCache producers() {
    return producers;
  }

  /** Where ingestion reports its spans and metrics. */
  Telemetry telemetry() {
    return telemetry;
  }

  /** True for a CMD descriptor holding an {@code Any} of {@link IngestProtocol#TYPE_URL}. */
  public static boolean isNativeIngest(FlightDescriptor descriptor) {
    return IngestProtocol.isNativeIngest(descriptor);
  }

  /** {@link #serveDoPut(ServerServiceDefinition, UnaryOperator)} admitting every bulk ingest. */
  public ServerServiceDefinition serveDoPut(ServerServiceDefinition flight) {
    return serveDoPut(flight, UnaryOperator.identity());
  }

  /**
   * Flight's service definition (bound with byte-array messages) with its DoPut replaced: native
   * ingest streams (ARCHITECTURE.md 6.1) and Flight SQL bulk ingest (6.2) are read as their
   * messages arrive, without a thread per stream; every other DoPut (Flight SQL updates, a
   * command that is neither) goes to the definition's own DoPut. Install interceptors around the
   * result, {@link #doPutGuard()} innermost.
   *
   * @param bulkAdmission runs on the call's gRPC context when a bulk ingest opens, before
   *     ingestion checks the command: returns the command to ingest (e.g. with the catalog the
   *     call selects), or throws an {@link SeException} that ends the call with its status
   */
  public ServerServiceDefinition serveDoPut(ServerServiceDefinition flight,
      UnaryOperator<CommandStatementIngest> bulkAdmission) {
    Objects.requireNonNull(bulkAdmission, "bulkAdmission");
    ServerServiceDefinition.Builder builder =
        ServerServiceDefinition.builder(flight.getServiceDescriptor());
    boolean replaced = false;
    for (ServerMethodDefinition<?, ?> method : flight.getMethods()) {
      if (method.getMethodDescriptor().getFullMethodName().equals(DoPutGuard.DO_PUT)) {
        builder.addMethod(doPut(method, bulkAdmission));
        replaced = true;
      } else {
        builder.addMethod(method);
      }
    }
    if (!replaced) {
      throw new IllegalArgumentException("not the Flight service: no " + DoPutGuard.DO_PUT);
    }
    return builder.build();
  }

  /**
   * Arrow Flight's service for {@code producer}, bound with byte-array messages, DoPut served as
   * {@link #serveDoPut} describes, every DoPut message checked by {@link #doPutGuard()}: what a
   * gRPC server (benchmarks, tests, embedding) hosts to serve ingestion.
   *
   * @param allocator where Flight decodes what the producer reads itself
   * @param executor runs Flight's handlers of the producer (DoPut: Flight SQL updates)
   */
  public ServerServiceDefinition flightService(BufferAllocator allocator, FlightProducer producer,
      ExecutorService executor) {
    BindableService flight = FlightGrpcUtils.createFlightService(allocator, producer,
        ServerAuthHandler.NO_OP, executor);
    return ServerInterceptors.intercept(
        serveDoPut(ServerInterceptors.useMarshalledMessages(flight.bindService(), BYTES)),
        doPutGuard());
  }

  /** The method must be bound with byte-array messages (see {@link #serveDoPut}). */
  @SuppressWarnings("unchecked")
  private ServerMethodDefinition<byte[], byte[]> doPut(ServerMethodDefinition<?, ?> method,
      UnaryOperator<CommandStatementIngest> bulkAdmission) {
    ServerMethodDefinition<byte[], byte[]> bytes = (ServerMethodDefinition<byte[], byte[]>) method;
    return ServerMethodDefinition.create(bytes.getMethodDescriptor(),
        new DoPutRouter(this, bulkAdmission, bytes.getServerCallHandler()));
  }

  /** A native ingest stream on {@code call}, which the router already read the descriptor of. */
  ServerCall.Listener<byte[]> openNativeStream(ServerCall<byte[], byte[]> call) {
    if (closed.get()) {
      throw new SeException(ErrorCode.UNAVAILABLE, "ingestion is shutting down: retry");
    }
    return new NativeIngestion(this, call, "ingest-stream-" + streams.incrementAndGet());
  }

  /**
   * A Flight SQL bulk ingest (ARCHITECTURE.md 6.2) of {@code command}, already admitted, on
   * {@code call}, which the router already read the descriptor of.
   */
  ServerCall.Listener<byte[]> openBulkStream(ServerCall<byte[], byte[]> call,
      CommandStatementIngest command) {
    if (closed.get()) {
      throw new SeException(ErrorCode.UNAVAILABLE, "ingestion is shutting down: retry");
    }
    return BulkIngestion.open(this, call, command, "bulk-ingest-" + streams.incrementAndGet());
  }

  /**
   * The gRPC interceptor that checks every DoPut message before Arrow Flight parses and loads
   * it ({@link DoPutGuard}); install it on the Flight service, bound with byte-array messages.
   * A batch may make the server allocate at most {@link IngestConfig#maxStreamBytes()} beyond
   * its own bytes.
   */
  public DoPutGuard doPutGuard() {
    return new DoPutGuard(config.maxStreamBytes());
  }

  /**
   * The {@link ProducerState} action: the highest sequence of {@code request}'s producer durable
   * in its table (empty: none). Loads the table through the service's catalogs (so the caller
   * must be allowed to ingest into it; NOT_FOUND for an unknown table), waits until every frame
   * this process queued for the table before the call is durable or failed (a stream of the
   * producer that broke just before cannot add a batch after the answer), then catches the
   * producer windows up with the WAL: what was reconciled and collected ({@code producers.json})
   * and what is only in the WAL both count. Storage failures are UNAVAILABLE.
   */
  public OptionalLong lastSequence(ProducerState.Request request) {
    TableIdentifier identifier = TableIdentifier.of(
        Namespace.of(request.namespace().toArray(String[]::new)), request.tableName());
    Table table = resolver.load(request.catalog(), identifier);
    TableWal wal = new TableWal(request.catalog(), table.uuid());
    committer.existing(wal).ifPresent(c -> {
      try {
        c.settled().get(SETTLE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SeException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the table's group commit", e);
      } catch (ExecutionException | TimeoutException e) {
        throw new SeException(ErrorCode.UNAVAILABLE, "the group commit of table `" + identifier
            + "` did not settle within " + SETTLE_TIMEOUT.toSeconds() + " s; retry", e);
      }
    });
    Duration retention = TableSettings.producerRetention(table);
    producers.open(wal, retention);
    return producers.highestSequence(wal, request.producerId(), retention);
  }

  public IngestConfig config() {
    return config;
  }

  /**
   * Whether a burst of streams is being admitted now ({@link AdmissionTracker}): background work
   * of the process that can wait a little (reconciliation) defers to it.
   */
  public AdmissionPressure admissionPressure() {
    return admissions;
  }

  /** The streams in admission, which every stream enters once when it opens. */
  AdmissionTracker admissions() {
    return admissions;
  }

  /** Bytes accepted but not yet acknowledged, over all streams. */
  public long inFlightBytes() {
    return budget.used();
  }

  /** Writes every pending batch to the WAL, then stops. Streams still open fail UNAVAILABLE. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      committer.close();
    }
  }

  BufferAllocator streamAllocator(String name) {
    return allocator.newChildAllocator(name, 0, config.maxStreamBytes());
  }

  /**
   * Where a native stream decodes its messages: bounded by the ingest allocator's own limit, as
   * Flight's decoding was, so a batch may be as large as a gRPC message while its conversion
   * stays within the stream's limit.
   */
  BufferAllocator inputAllocator(String name) {
    return allocator.newChildAllocator(name + "-input", 0, Long.MAX_VALUE);
  }

  ByteBudget budget() {
    return budget;
  }

  TableResolver resolver() {
    return resolver;
  }

  TableCommitter committer(IngestTarget target) {
    if (closed.get()) {
      throw new SeException(ErrorCode.UNAVAILABLE, "ingestion is shutting down: retry");
    }
    return committer.committer(target);
  }
}

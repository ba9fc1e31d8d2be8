package io.storageengine.ingest;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.wal.WalWriter;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Durable ingestion over Arrow Flight. The server's one Flight producer delegates DoPut calls
 * here: {@link #acceptPut} for the native protocol (descriptor recognised by
 * {@link #isNativeIngest}), {@link #acceptBulkIngest} for Flight SQL's
 * {@code CommandStatementIngest}. Each batch is validated against the target table, converted to
 * the table's types, group-committed into the table's WAL, and acknowledged only once its
 * segment is durable. Nothing acknowledged is lost; nothing rejected is written.
 *
 * <p>Errors end the stream with a Flight status ({@link io.storageengine.common.FlightErrors}): bad header, schema or
 * batch INVALID_ARGUMENT naming the field; unknown catalog or table NOT_FOUND; memory limits
 * RESOURCE_EXHAUSTED; storage failures UNAVAILABLE (retryable; acks already sent stay valid).
 *
 * <p>Thread-safe. {@link #close()} flushes what is pending and stops the flush threads.
 */
public final class IngestService implements AutoCloseable {
  private final BufferAllocator allocator;
  private final BufferAllocator ackAllocator;
  private final TableResolver resolver;
  private final GroupCommitter committer;
  private final IngestConfig config;
  private final ByteBudget budget;
  private final AtomicLong streams = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Telemetry telemetry;

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
    this.committer = new GroupCommitter(Objects.requireNonNull(wal, "wal"), catalogs,
        listener == null ? IngestListener.NONE : listener, config, Objects.requireNonNull(threads, "threads"));
    this.budget = new ByteBudget(config.globalBytes());
    this.ackAllocator = allocator.newChildAllocator("ingest-acks", 0, 16L << 20);
  }

  /** Where ingestion reports its spans and metrics. */
  Telemetry telemetry() {
    return telemetry;
  }

  /** True for a CMD descriptor holding an {@code Any} of {@link IngestProtocol#TYPE_URL}. */
  public static boolean isNativeIngest(FlightDescriptor descriptor) {
    return IngestProtocol.isNativeIngest(descriptor);
  }

  /** Handles one native ingest stream (ARCHITECTURE.md 6.1); run the result on the call's thread. */
  public Runnable acceptPut(CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    String name = "ingest-stream-" + streams.incrementAndGet();
    return new NativeIngestion(this, stream, new AckSender(ackStream, ackAllocator), name);
  }

  /** Handles one Flight SQL bulk ingest (ARCHITECTURE.md 6.2). */
  public Runnable acceptBulkIngest(CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    String name = "bulk-ingest-" + streams.incrementAndGet();
    return new BulkIngestion(this, command, stream, new AckSender(ackStream, ackAllocator), name);
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

  public IngestConfig config() {
    return config;
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
      ackAllocator.close();
    }
  }

  BufferAllocator streamAllocator(String name) {
    return allocator.newChildAllocator(name, 0, config.maxStreamBytes());
  }

  StreamFlow newFlow() {
    return new StreamFlow(config.maxUnacknowledgedBatches(), config.maxStreamBytes(), budget);
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

package io.storageengine.ingest.client;

import io.storageengine.ingest.IngestProtocol;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One open ingestion stream. {@link #send} copies a batch into the stream and returns a future
 * completed with the batch's request id when the server acknowledged it as durable (acks may come
 * out of order). At most {@code maxInFlight} batches are unacknowledged; {@code send} blocks
 * beyond that. Not thread-safe: one thread sends; futures complete on gRPC threads.
 */
public final class IngestStream implements AutoCloseable {
  private static final long FIRST_PARK_NANOS = 20_000;
  private static final long MAX_PARK_NANOS = 5_000_000;

  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final VectorLoader loader;
  private final Acks acks;
  private final Semaphore inFlight;
  private final FlightClient.ClientStreamListener listener;
  private long nextRequestId = 1;
  private boolean finished;

  private IngestStream(BufferAllocator allocator, VectorSchemaRoot root, Acks acks,
      int maxInFlight, FlightClient.ClientStreamListener listener) {
    this.allocator = allocator;
    this.root = root;
    this.loader = new VectorLoader(root);
    this.acks = acks;
    this.inFlight = new Semaphore(maxInFlight);
    this.listener = listener;
  }

  static IngestStream open(FlightClient client, BufferAllocator allocator,
      IngestProtocol.Header header, Schema schema, int maxInFlight, CallOption... options) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    try {
      Acks acks = new Acks();
      CompletableFuture<Long> accepted = acks.expect(0);
      FlightClient.ClientStreamListener listener =
          client.startPut(IngestProtocol.descriptor(), root, acks, options);
      IngestStream stream = new IngestStream(allocator, root, acks, maxInFlight, listener);
      try {
        // putMetadata busy-spins until the call is ready; hundreds of streams opening at once
        // would spin on every core and starve the server they wait for.
        stream.awaitTransportReady();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        listener.error(e);
        throw new IllegalStateException("interrupted while opening an ingest stream", e);
      }
      listener.putMetadata(stream.buffer(IngestProtocol.encodeHeader(header)));
      try {
        accepted.join();
      } catch (RuntimeException e) {
        stream.closeAfterFailure();
        throw unwrap(e);
      }
      return stream;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /**
   * How many batches the server acknowledged as duplicates: already durable from an earlier
   * send of the same (producer id, sequence), so not written again.
   */
  public long duplicates() {
    return acks.duplicates.get();
  }

  /** The stream's schema; every batch sent must have exactly this schema. */
  public Schema schema() {
    return root.getSchema();
  }

  /**
   * Sends the rows of {@code batch} (copied; the caller keeps ownership). The future completes
   * with the request id once the batch is durable, or exceptionally with the stream's failure.
   */
  public CompletableFuture<Long> send(VectorSchemaRoot batch) throws InterruptedException {
    return send(batch, null);
  }

  /**
   * As {@link #send(VectorSchemaRoot)}, numbered with {@code sequence} (a stream opened with a
   * producer id needs one on every batch; null: none). {@link IdempotentIngestStream} numbers
   * and resends batches itself.
   */
  public CompletableFuture<Long> send(VectorSchemaRoot batch, Long sequence)
      throws InterruptedException {
    if (finished) {
      throw new IllegalStateException("stream already finished");
    }
    if (!batch.getSchema().equals(root.getSchema())) {
      throw new IllegalArgumentException("batch schema " + batch.getSchema()
          + " differs from the stream schema " + root.getSchema());
    }
    acks.throwIfFailed();
    inFlight.acquire();
    long requestId = nextRequestId++;
    CompletableFuture<Long> future = acks.expect(requestId);
    future.whenComplete((id, error) -> inFlight.release());
    try (ArrowRecordBatch data = new VectorUnloader(batch).getRecordBatch()) {
      loader.load(data);
    }
    awaitTransportReady();
    listener.putNext(buffer(IngestProtocol.encodeBatch(requestId, sequence)));
    return future;
  }

  /**
   * Flight's own {@code putNext} busy-spins while gRPC is not ready for more data, which starves
   * the server of CPU on small machines; park instead (gRPC allows no ready callback once the
   * call has started). The park doubles from {@link #FIRST_PARK_NANOS} up to
   * {@link #MAX_PARK_NANOS}: a stream that is briefly not ready resumes within microseconds,
   * while hundreds of streams waiting for a slow server (all opening at once) wake up a few
   * hundred times a second each instead of thousands, and leave the CPU to the server.
   */
  private void awaitTransportReady() throws InterruptedException {
    long park = FIRST_PARK_NANOS;
    while (!listener.isReady() && !acks.isCancelled()) {
      LockSupport.parkNanos(park);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      park = Math.min(MAX_PARK_NANOS, park * 2);
    }
  }

  /**
   * Ends the stream and waits until the server acknowledged every batch and completed the
   * call; throws the server's {@code FlightRuntimeException} if the stream failed.
   */
  public void finish() {
    if (finished) {
      return;
    }
    finished = true;
    listener.completed();
    listener.getResult();
    acks.requireAllAcknowledged();
  }

  /** Finishes the stream if needed (without throwing for a failed stream) and frees memory. */
  @Override
  public void close() {
    try {
      if (!finished) {
        finished = true;
        listener.completed();
        listener.getResult();
      }
    } catch (FlightRuntimeException e) {
      // The failure was reported through the futures already.
    } finally {
      root.close();
    }
  }

  private void closeAfterFailure() {
    finished = true;
    try {
      listener.getResult();
    } catch (FlightRuntimeException e) {
      // expected: the server ended the call
    }
  }

  private ArrowBuf buffer(byte[] bytes) {
    ArrowBuf buf = allocator.buffer(bytes.length);
    buf.writeBytes(bytes);
    return buf; // ownership passes to the Flight listener
  }

  private static RuntimeException unwrap(RuntimeException e) {
    Throwable cause = e.getCause();
    return cause instanceof RuntimeException r && e instanceof java.util.concurrent.CompletionException
        ? r : e;
  }

  /** Routes acks to the futures of their request ids. */
  private static final class Acks implements FlightClient.PutListener {
    private final Map<Long, CompletableFuture<Long>> pending = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final AtomicLong duplicates = new AtomicLong();

    CompletableFuture<Long> expect(long requestId) {
      CompletableFuture<Long> future = new CompletableFuture<>();
      pending.put(requestId, future);
      if (done.isDone()) {
        failAll(failureOr("stream already ended"));
      }
      return future;
    }

    @Override
    public void onNext(PutResult result) {
      ArrowBuf metadata = result.getApplicationMetadata();
      if (metadata == null) {
        return;
      }
      byte[] bytes = new byte[(int) metadata.readableBytes()];
      metadata.getBytes(metadata.readerIndex(), bytes);
      CompletableFuture<Long> future = pending.remove(IngestProtocol.parseAck(bytes));
      if (future != null && IngestProtocol.isDuplicateAck(bytes)) {
        duplicates.incrementAndGet();
      }
      if (future != null) {
        future.complete(IngestProtocol.parseAck(bytes));
      }
    }

    @Override
    public void onError(Throwable t) {
      // Fail the pending acks before `done`, so a caller woken by getResult() already sees
      // every unacknowledged batch failed; again after, for a batch registered in between.
      failAll(t);
      done.completeExceptionally(t);
      failAll(t);
    }

    @Override
    public void onCompleted() {
      Throwable unacknowledged = CallStatus.INTERNAL
          .withDescription("the server completed the stream without acknowledging this batch")
          .toRuntimeException();
      failAll(unacknowledged);
      done.complete(null);
      failAll(unacknowledged);
    }

    @Override
    public void getResult() {
      try {
        done.join();
      } catch (java.util.concurrent.CompletionException e) {
        throw e.getCause() instanceof FlightRuntimeException f ? f
            : CallStatus.UNKNOWN.withCause(e.getCause()).toRuntimeException();
      }
    }

    @Override
    public boolean isCancelled() {
      return done.isDone();
    }

    void throwIfFailed() {
      if (done.isCompletedExceptionally()) {
        getResult();
      }
    }

    void requireAllAcknowledged() {
      if (!pending.isEmpty()) {
        throw CallStatus.INTERNAL.withDescription(pending.size()
            + " batches were not acknowledged").toRuntimeException();
      }
    }

    private Throwable failureOr(String message) {
      try {
        getResult();
      } catch (FlightRuntimeException e) {
        return e;
      }
      return CallStatus.INTERNAL.withDescription(message).toRuntimeException();
    }

    private void failAll(Throwable t) {
      for (Long id : pending.keySet()) {
        CompletableFuture<Long> future = pending.remove(id);
        if (future != null) {
          future.completeExceptionally(t);
        }
      }
    }
  }
}

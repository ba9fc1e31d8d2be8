package io.storageengine.ingest.client;

import io.storageengine.common.Threads;
import io.storageengine.ingest.IngestProtocol;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An idempotent ingestion stream (ARCHITECTURE.md 6.1): opened with a producer id, every batch
 * carries a sequence of that producer, and the server stores each (producer id, sequence) once.
 * When the stream breaks (UNAVAILABLE: a server stopped, a connection cut, a storage failure)
 * it reconnects and resends every batch not acknowledged yet with the same sequence, so a
 * batch whose ack was lost is stored once, never twice: the server acknowledges a batch that is
 * already durable again ({@link #duplicates()} counts those) without writing it.
 *
 * <p>{@link #send(VectorSchemaRoot)} numbers batches 0, 1, 2, ... after the highest sequence
 * sent so far; {@link #send(VectorSchemaRoot, long)} takes the caller's (for example a source
 * offset: the producer id and the sequence must then be stable across the producer's restarts
 * as well). The pair is the identity: a sequence reused for other rows is taken for a resend.
 * A copy of every unacknowledged batch is kept (Arrow IPC bytes on the heap) until its ack.
 *
 * <p>Not thread-safe: one thread sends and finishes; futures complete on gRPC threads. Other
 * failures (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, ...) and running out of
 * reconnect attempts fail every unacknowledged batch and end the stream.
 */
public final class IdempotentIngestStream implements AutoCloseable {
  /** Reconnect attempts after a break before the stream gives up. */
  public static final int DEFAULT_ATTEMPTS = 10;
  /** Pause before the first reconnect; it doubles up to {@link #MAX_BACKOFF}. */
  public static final Duration DEFAULT_BACKOFF = Duration.ofMillis(100);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

  private final IngestClient client;
  private final BufferAllocator allocator;
  private final IngestProtocol.Header header;
  private final Schema schema;
  private final int maxInFlight;
  private final CallOption[] options;
  private final int attempts;
  private final Duration backoff;

  /** Unacknowledged batches by sequence. */
  private final ConcurrentSkipListMap<Long, Pending> pending = new ConcurrentSkipListMap<>();
  private final AtomicInteger brokenGeneration = new AtomicInteger(-1);
  private final AtomicLong duplicates = new AtomicLong();
  private volatile RuntimeException failure;
  /** Heals breaks (reconnects and resends) when no caller is in {@code send} or {@code finish}. */
  private final ExecutorService healer =
      Executors.newSingleThreadExecutor(Threads.daemon("se-ingest-resend"));
  private IngestStream stream;
  private int generation;
  private long nextSequence;
  private long reconnects;
  private boolean finished;

  /** A batch until its ack: its sequence, its rows, the stream generation it was last sent on. */
  private static final class Pending {
    final long sequence;
    final byte[] ipc;
    final CompletableFuture<Long> done = new CompletableFuture<>();
    int sentOn = -1;

    Pending(long sequence, byte[] ipc) {
      this.sequence = sequence;
      this.ipc = ipc;
    }
  }

  IdempotentIngestStream(IngestClient client, BufferAllocator allocator,
      IngestProtocol.Header header, Schema schema, int maxInFlight, int attempts,
      Duration backoff, CallOption... options) {
    if (header.producerId() == null) {
      throw new IllegalArgumentException("an idempotent stream needs a header with a producer id");
    }
    this.client = client;
    this.allocator = allocator;
    this.header = header;
    this.schema = schema;
    this.maxInFlight = maxInFlight;
    this.attempts = attempts;
    this.backoff = backoff;
    this.options = options;
    try {
      ensureStream(); // fails here for an unknown table or an incompatible schema
    } catch (RuntimeException e) {
      healer.shutdownNow();
      throw e;
    }
  }

  /** The next sequence {@link #send(VectorSchemaRoot)} uses. */
  public long nextSequence() {
    return nextSequence;
  }

  /** Batches the server acknowledged as already durable (resends of stored batches). */
  public long duplicates() {
    return duplicates.get() + (stream == null ? 0 : stream.duplicates());
  }

  /** How often the stream reconnected after a break. */
  public long reconnects() {
    return reconnects;
  }

  /** Sends {@code batch} with the next sequence; the future completes with it once durable. */
  public synchronized CompletableFuture<Long> send(VectorSchemaRoot batch)
      throws InterruptedException {
    return send(batch, nextSequence);
  }

  /**
   * Sends {@code batch} (copied) with {@code sequence} (&ge; 0, not pending already). The
   * future completes with the sequence once the batch is durable, also when that took a
   * reconnect and a resend, or exceptionally when the stream gave up.
   */
  public synchronized CompletableFuture<Long> send(VectorSchemaRoot batch, long sequence)
      throws InterruptedException {
    if (finished) {
      throw new IllegalStateException("stream already finished");
    }
    if (sequence < 0) {
      throw new IllegalArgumentException("sequence must be >= 0, got " + sequence);
    }
    if (pending.containsKey(sequence)) {
      throw new IllegalArgumentException("sequence " + sequence + " is already pending");
    }
    if (!batch.getSchema().equals(schema)) {
      throw new IllegalArgumentException("batch schema " + batch.getSchema()
          + " differs from the stream schema " + schema);
    }
    throwIfFailed();
    Pending p = new Pending(sequence, serialize(batch));
    pending.put(sequence, p);
    nextSequence = Math.max(nextSequence, sequence + 1);
    while (p.sentOn < 0 || p.sentOn != generation || broken()) {
      ensureStream();
      if (p.sentOn == generation || p.done.isDone()) {
        break;
      }
      transmit(p);
    }
    return p.done;
  }

  /**
   * Waits until every batch is acknowledged, reconnecting and resending after breaks, and ends
   * the stream. Throws the failure that made the stream give up.
   */
  public synchronized void finish() {
    if (finished) {
      return;
    }
    for (int attempt = 1; ; attempt++) {
      ensureStream();
      try {
        stream.finish();
      } catch (FlightRuntimeException e) {
        if (!retryable(e) || attempt > attempts) {
          giveUp(e);
          throw e;
        }
        brokenGeneration.accumulateAndGet(generation, Math::max);
        continue;
      }
      if (pending.isEmpty()) {
        finished = true;
        closeStream();
        healer.shutdownNow();
        return;
      }
      // Every ack of this stream arrived, but batches of a broken one are still unacknowledged.
      brokenGeneration.accumulateAndGet(generation, Math::max);
    }
  }

  /** Ends the stream without waiting for unacknowledged batches (they fail). */
  @Override
  public void close() {
    healer.shutdownNow();
    synchronized (this) {
      finished = true;
      closeStream();
    }
    RuntimeException closed = new IllegalStateException("the idempotent stream was closed");
    for (Pending p : pending.values()) {
      p.done.completeExceptionally(closed);
    }
    pending.clear();
  }

  private boolean broken() {
    return brokenGeneration.get() >= generation;
  }

  /** Opens a stream when there is none or it broke, and resends every unacknowledged batch. */
  private void ensureStream() {
    int attempt = 0;
    RuntimeException last = null;
    while (stream == null || broken()) {
      throwIfFailed();
      attempt++;
      if (attempt > attempts) {
        RuntimeException e = CallStatus.UNAVAILABLE.withCause(last).withDescription(
            "ingest stream of producer " + header.producerId() + " still broken after " + attempts
                + " reconnects").toRuntimeException();
        giveUp(e);
        throw e;
      }
      if (stream != null || generation > 0) {
        closeStream();
        reconnects++;
        pause(attempt);
      }
      try {
        stream = client.open(header, schema, maxInFlight, options);
        generation++;
        for (Pending p : pending.values()) {
          if (!p.done.isDone() && !broken()) {
            transmit(p);
          }
        }
      } catch (FlightRuntimeException e) {
        if (!retryable(e)) {
          giveUp(e);
          throw e;
        }
        last = e;
        closeStream();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while resending", e);
      }
    }
  }

  /** Sends {@code p} on the current stream; a failure marks the stream broken. */
  private void transmit(Pending p) throws InterruptedException {
    int sentOn = generation;
    p.sentOn = sentOn;
    CompletableFuture<Long> ack;
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(p.ipc), allocator)) {
      reader.loadNextBatch();
      ack = stream.send(reader.getVectorSchemaRoot(), p.sequence);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (FlightRuntimeException e) {
      onBreak(sentOn, e);
      return;
    }
    ack.whenComplete((id, error) -> {
      if (error == null) {
        pending.remove(p.sequence, p);
        p.done.complete(p.sequence);
      } else {
        onBreak(sentOn, error);
      }
    });
  }

  private void onBreak(int sentOn, Throwable error) {
    Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
        ? error.getCause() : error;
    if (cause instanceof FlightRuntimeException f && retryable(f)) {
      brokenGeneration.accumulateAndGet(sentOn, Math::max);
      try {
        healer.execute(this::heal);
      } catch (RejectedExecutionException e) {
        // Finished or closed: nothing to heal.
      }
    } else {
      giveUp(cause instanceof RuntimeException r ? r : new IllegalStateException(cause));
    }
  }

  /** Reconnects and resends after a break, unless a caller did already. */
  private synchronized void heal() {
    if (finished || failure != null || !broken()) {
      return;
    }
    try {
      ensureStream();
    } catch (RuntimeException e) {
      // Recorded by giveUp: the batches' futures and the next call report it.
    }
  }

  private void giveUp(RuntimeException e) {
    if (failure == null) {
      failure = e;
    }
    for (Pending p : pending.values()) {
      p.done.completeExceptionally(e);
    }
  }

  private void throwIfFailed() {
    if (failure != null) {
      throw failure;
    }
  }

  private void closeStream() {
    if (stream != null) {
      duplicates.addAndGet(stream.duplicates());
      try {
        stream.close();
      } catch (RuntimeException e) {
        // A broken stream's close may fail; its batches are resent.
      }
      stream = null;
    }
  }

  private void pause(int attempt) {
    long millis = Math.min(MAX_BACKOFF.toMillis(), backoff.toMillis() << Math.min(attempt - 1, 20));
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reconnecting", e);
    }
  }

  /**
   * A break that a resend may heal: every status but the caller's own errors (a server stopping
   * resets its streams, which arrives as INTERNAL or CANCELLED as often as UNAVAILABLE). A resend
   * of an idempotent batch is harmless, so a doubtful status is retried, a bounded number of
   * times.
   */
  static boolean retryable(FlightRuntimeException e) {
    return switch (e.status().code()) {
      case INVALID_ARGUMENT, NOT_FOUND, UNAUTHENTICATED, UNAUTHORIZED, UNIMPLEMENTED,
          ALREADY_EXISTS, RESOURCE_EXHAUSTED -> false;
      default -> true;
    };
  }

  private byte[] serialize(VectorSchemaRoot batch) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer = new ArrowStreamWriter(batch, null, Channels.newChannel(out))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}

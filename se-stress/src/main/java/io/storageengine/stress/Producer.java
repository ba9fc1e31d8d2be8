package io.storageengine.stress;

import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IdempotentIngestStream;
import io.storageengine.wal.WalOperation;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One producer: writes batches of one {@link Workload} through the native DoPut protocol until
 * told to stop, idempotently and keeping the workload's model exact. Each operation's stream has
 * a producer id stable for the run ({@code stress/<run>/<table>/<producer>/<operation>}) and
 * numbers its batches with their planned batch numbers. The client's {@link
 * IdempotentIngestStream} reconnects and resends unacknowledged batches after a break; when it
 * gives up (the server stayed down too long), the producer opens a new stream of the same
 * producer id and resends every unacknowledged batch with its sequence, with backoff, until it is
 * acknowledged. After {@code stop} the producer sends nothing new but keeps resending until every
 * batch is acknowledged or {@link #DRAIN_TIMEOUT} passed; only then does a batch become
 * "unknown".
 *
 * <p>At most {@code window} batches are unacknowledged at once (a batch keeps its permit through
 * its resends), fewer than the stream's own limit and than the server's window of remembered
 * sequences, so {@code send} never blocks on the limit, a resent sequence is never below the
 * window, and the measured ack latency starts when the batch is first handed to the client.
 */
final class Producer implements Runnable {
  private static final long MAX_BACKOFF_MILLIS = 1000;
  /** How long after {@code stop} unacknowledged batches are still resent. */
  static final long DRAIN_TIMEOUT_NANOS = TimeUnit.MINUTES.toNanos(2);

  private final int index;
  private final String producerPrefix;
  private final Workload workload;
  private final Supplier<IngestClient> connector;
  private final BufferAllocator allocator;
  private final String catalogId;
  private final int batchRows;
  private final RateLimiter rate;
  private final Metrics metrics;
  private final FreshnessTracker freshness;
  private final AtomicBoolean stop;
  private final Random random;
  private final Semaphore window;
  private final int windowSize;
  private final Map<WalOperation, OpenStream> streams = new EnumMap<>(WalOperation.class);
  private final Map<WalOperation, Long> nextSequence = new EnumMap<>(WalOperation.class);
  /** Batches whose stream gave up on them: resent, with their sequence, on a new stream. */
  private final Queue<Outstanding> retry = new ConcurrentLinkedQueue<>();
  /** Set once the producer stops resending: a failed batch is then "unknown". */
  private volatile boolean finalizing;
  private long drainDeadline;
  private IngestClient client;

  /** A stream and whether one of its batches failed (then it is replaced before the next send). */
  private static final class OpenStream {
    final IdempotentIngestStream stream;
    final VectorSchemaRoot root;
    final AtomicBoolean failed = new AtomicBoolean();

    OpenStream(IdempotentIngestStream stream, VectorSchemaRoot root) {
      this.stream = stream;
      this.root = root;
    }
  }

  /** A sent batch until its ack: its sequence and when it was first sent. */
  private record Outstanding(PlannedBatch batch, long sequence, long firstSent) {}

  /**
   * @param run identifies the run in the producer ids, so a later run against the same tables
   *     (whose batch numbers start at 0 again) is not taken for resends of this one
   * @param connector opens a connection of this producer's own. After a failed open the
   *     connection is replaced: a gRPC channel that saw the server die may wait in its reconnect
   *     backoff long after the server is back.
   */
  Producer(long run, int index, Workload workload, Supplier<IngestClient> connector,
      BufferAllocator allocator, String catalogId, int batchRows, int window, RateLimiter rate,
      Metrics metrics, FreshnessTracker freshness, AtomicBoolean stop, long seed) {
    this.index = index;
    this.producerPrefix = "stress/" + run + "/" + workload.table() + "/" + index + "/";
    this.workload = workload;
    this.connector = connector;
    this.allocator = allocator;
    this.catalogId = catalogId;
    this.batchRows = batchRows;
    this.rate = rate;
    this.metrics = metrics;
    this.freshness = freshness;
    this.stop = stop;
    this.random = new Random(seed);
    this.window = new Semaphore(window);
    this.windowSize = window;
  }

  /** The producer id of this producer's stream of {@code operation}. */
  String producerId(WalOperation operation) {
    return producerPrefix + operation.name().toLowerCase(java.util.Locale.ROOT);
  }

  @Override
  public void run() {
    try {
      while (!stop.get()) {
        if (!resendFailed()) {
          break;
        }
        for (PlannedBatch batch : workload.plan(index, batchRows, random)) {
          rate.acquire(batch.rows());
          if (!acquirePermit()) {
            break;
          }
          OpenStream open = stream(batch.operation());
          if (open == null) {
            window.release();
            break; // stopped while the server was unreachable; the batch was never sent
          }
          long sequence = nextSequence.merge(batch.operation(), 1L, Long::sum) - 1;
          workload.sent(batch);
          metrics.rowsSent.add(batch.rows());
          transmit(open, new Outstanding(batch, sequence, System.nanoTime()));
        }
      }
      drain();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      finishAll();
    }
  }

  /** A window permit for a new batch, resending failed batches while waiting; false when stopped. */
  private boolean acquirePermit() throws InterruptedException {
    while (!window.tryAcquire(20, TimeUnit.MILLISECONDS)) {
      if (!resendFailed()) {
        return false;
      }
    }
    return true;
  }

  /** After {@code stop}: resends until every batch is acknowledged or the drain timeout passed. */
  private void drain() throws InterruptedException {
    while (keepTrying()) {
      if (window.tryAcquire(windowSize, 20, TimeUnit.MILLISECONDS)) {
        window.release(windowSize); // every batch is acknowledged
        return;
      }
      if (!resendFailed()) {
        return;
      }
    }
  }

  /** Resends the batches whose stream gave up; false when it could not (stopped for good). */
  private boolean resendFailed() throws InterruptedException {
    Outstanding o;
    while ((o = retry.poll()) != null) {
      OpenStream open = stream(o.batch().operation());
      if (open == null) {
        retry.add(o);
        return false;
      }
      metrics.batchesResent.increment();
      transmit(open, o);
    }
    return true;
  }

  /** Hands {@code o} to the stream; a failure puts it back in {@link #retry} (or makes it unknown). */
  private void transmit(OpenStream open, Outstanding o) throws InterruptedException {
    PlannedBatch batch = o.batch();
    workload.fill(batch, open.root);
    CompletableFuture<Long> ack;
    try {
      ack = open.stream.send(open.root, o.sequence());
    } catch (RuntimeException e) {
      open.failed.set(true);
      failed(o, e);
      return;
    }
    ack.whenComplete((id, error) -> {
      long now = System.nanoTime();
      if (error == null) {
        workload.acked(batch);
        metrics.rowsAcked.add(batch.rows());
        metrics.batchesAcked.increment();
        metrics.bytesAcked.add(batch.payloadBytes());
        metrics.ackLatency.record(now - o.firstSent());
        metrics.ackedAt(workload.table().toString(), now);
        freshness.acked(batch, now);
        window.release();
      } else {
        open.failed.set(true);
        failed(o, error);
      }
    });
  }

  /** The stream gave up on {@code o}: resend it, unless the producer stopped resending. */
  private void failed(Outstanding o, Throwable error) {
    metrics.error("ack", error);
    if (finalizing) {
      unknown(o.batch());
    } else {
      retry.add(o);
    }
  }

  private void unknown(PlannedBatch batch) {
    workload.unknown(batch);
    metrics.rowsUnknown.add(batch.rows());
    metrics.batchesUnknown.increment();
    window.release();
  }

  /** While not stopped, or stopped and within the drain timeout. Producer thread only. */
  private boolean keepTrying() {
    if (!stop.get()) {
      return true;
    }
    if (drainDeadline == 0) {
      drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
    }
    return System.nanoTime() - drainDeadline < 0;
  }

  /** The open stream for {@code operation}, reopened after a failure; null once out of tries. */
  private OpenStream stream(WalOperation operation) throws InterruptedException {
    OpenStream open = streams.get(operation);
    if (open != null && !open.failed.get()) {
      return open;
    }
    long backoff = 50;
    if (open != null) {
      // Its unacknowledged batches fail with it and are queued for a resend.
      close(open);
      streams.remove(operation);
      Thread.sleep(backoff);
    }
    while (keepTrying()) {
      VectorSchemaRoot root = VectorSchemaRoot.create(workload.arrowSchema(operation), allocator);
      try {
        if (client == null) {
          client = connector.get();
        }
        IdempotentIngestStream stream = client.openIdempotent(catalogId,
            Arrays.asList(workload.table().namespace().levels()), workload.table().name(),
            operation, root.getSchema(), producerId(operation));
        OpenStream opened = new OpenStream(stream, root);
        streams.put(operation, opened);
        return opened;
      } catch (RuntimeException e) {
        root.close();
        metrics.error("open", e);
        disconnect();
        Thread.sleep(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
    return null;
  }

  private void finishAll() {
    finalizing = true;
    for (OpenStream open : List.copyOf(streams.values())) {
      close(open);
    }
    streams.clear();
    // Every callback has run once all permits are back: the model is final for this producer.
    // A batch queued for a resend that will not happen any more is unknown.
    while (!window.tryAcquire(windowSize)) {
      Outstanding o;
      while ((o = retry.poll()) != null) {
        unknown(o.batch());
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    window.release(windowSize);
    disconnect();
  }
  private void disconnect() {
    if (client == null) {
      return;
    }
    try {
      client.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      metrics.error("disconnect", e);
    }
    client = null;
  }

  /**
   * Ends the stream, waiting for its acks (it resends after a break) or its failure, then frees
   * its memory; batches it did not get acknowledged fail (and are resent on a new stream).
   */
  private void close(OpenStream open) {
    try {
      if (!open.failed.get()) {
        open.stream.finish();
      }
    } catch (RuntimeException e) {
      metrics.error("close", e); // the stream gave up; its batches failed with it
    } finally {
      open.stream.close();
      metrics.duplicateAcks.add(open.stream.duplicates());
      metrics.reconnects.add(open.stream.reconnects());
      open.root.close();
    }
  }
}

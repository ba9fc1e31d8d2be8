package io.storageengine.stress;

import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One producer: writes batches of one {@link Workload} through the native DoPut protocol until
 * told to stop, keeping the workload's model exact. A stream that fails (the server rejected a
 * batch, restarted, or was killed) is closed; its unacknowledged batches become "unknown" and
 * the producer opens a new stream, retrying with backoff while the server is unreachable.
 *
 * <p>At most {@code window} batches are unacknowledged at once, fewer than the stream's own
 * limit, so {@code IngestStream.send} never blocks and the measured ack latency starts when the
 * batch is handed to gRPC.
 */
final class Producer implements Runnable {
  private static final long MAX_BACKOFF_MILLIS = 1000;

  private final int index;
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
  private IngestClient client;

  /** A stream and whether one of its batches failed (then it is replaced before the next send). */
  private static final class OpenStream {
    final IngestStream stream;
    final VectorSchemaRoot root;
    final AtomicBoolean failed = new AtomicBoolean();

    OpenStream(IngestStream stream, VectorSchemaRoot root) {
      this.stream = stream;
      this.root = root;
    }
  }

  /**
   * @param connector opens a connection of this producer's own. After a failed open the
   *     connection is replaced: a gRPC channel that saw the server die may wait in its reconnect
   *     backoff long after the server is back.
   */
  Producer(int index, Workload workload, Supplier<IngestClient> connector, BufferAllocator allocator,
      String catalogId, int batchRows, int window, RateLimiter rate, Metrics metrics,
      FreshnessTracker freshness, AtomicBoolean stop, long seed) {
    this.index = index;
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

  @Override
  public void run() {
    try {
      while (!stop.get()) {
        for (PlannedBatch batch : workload.plan(index, batchRows, random)) {
          rate.acquire(batch.rows());
          OpenStream open = stream(batch.operation());
          if (open == null) {
            return; // stopped while the server was unreachable; the batch was never sent
          }
          send(open, batch);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      finishAll();
    }
  }

  private void send(OpenStream open, PlannedBatch batch) throws InterruptedException {
    window.acquire();
    workload.fill(batch, open.root);
    workload.sent(batch);
    metrics.rowsSent.add(batch.rows());
    long start = System.nanoTime();
    CompletableFuture<Long> ack;
    try {
      ack = open.stream.send(open.root);
    } catch (RuntimeException e) {
      window.release();
      unknown(batch, e);
      open.failed.set(true);
      return;
    }
    ack.whenComplete((id, error) -> {
      long now = System.nanoTime();
      if (error == null) {
        workload.acked(batch);
        metrics.rowsAcked.add(batch.rows());
        metrics.batchesAcked.increment();
        metrics.bytesAcked.add(batch.payloadBytes());
        metrics.ackLatency.record(now - start);
        metrics.ackedAt(workload.table().toString(), now);
        freshness.acked(batch.freshnessMark(), now);
      } else {
        open.failed.set(true);
        unknown(batch, error);
      }
      window.release();
    });
  }

  private void unknown(PlannedBatch batch, Throwable error) {
    workload.unknown(batch);
    metrics.rowsUnknown.add(batch.rows());
    metrics.batchesUnknown.increment();
    metrics.error("ack", error);
  }

  /** The open stream for {@code operation}, reopened after a failure; null once stopped. */
  private OpenStream stream(WalOperation operation) throws InterruptedException {
    OpenStream open = streams.get(operation);
    if (open != null && !open.failed.get()) {
      return open;
    }
    if (open != null) {
      // Its pending batches fail with the stream; wait for them so the model is settled.
      close(open);
      streams.remove(operation);
    }
    long backoff = 50;
    while (!stop.get()) {
      VectorSchemaRoot root = VectorSchemaRoot.create(workload.arrowSchema(operation), allocator);
      try {
        if (client == null) {
          client = connector.get();
        }
        IngestStream stream = client.open(catalogId,
            Arrays.asList(workload.table().namespace().levels()), workload.table().name(),
            operation, root.getSchema());
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
    for (OpenStream open : List.copyOf(streams.values())) {
      close(open);
    }
    streams.clear();
    // Every callback has run once all permits are back: the model is final for this producer.
    window.acquireUninterruptibly(windowSize);
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

  /** Ends the stream, waiting for its acks (or its failure), then frees its memory. */
  private void close(OpenStream open) {
    try {
      open.stream.close();
    } catch (RuntimeException e) {
      metrics.error("close", e); // the call was already broken; its batches failed with it
    } finally {
      open.root.close();
    }
  }
}

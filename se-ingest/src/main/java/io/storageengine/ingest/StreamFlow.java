package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import org.apache.arrow.flight.FlightStream;

/**
 * Backpressure and failure state of one incoming stream read by a thread of its own (Flight
 * SQL bulk ingest; the native protocol has its own, see {@link NativeIngestion}). The reading
 * thread stops calling {@code stream.next()} while too many batches or bytes of this stream
 * wait for their ack, and takes each batch's bytes from the global {@link ByteBudget}.
 *
 * <p>The first failure wins. A failure reported from a flush thread (storage) interrupts the
 * reading thread if it is blocked waiting for the client, so the stream ends promptly even when
 * the client waits for acks before sending more.
 */
final class StreamFlow {
  private final int maxBatches;
  private final long maxBytes;
  private final ByteBudget global;

  private int batches;
  private long bytes;
  private Throwable failure;
  private Thread blockedReader;

  StreamFlow(int maxBatches, long maxBytes, ByteBudget global) {
    this.maxBatches = maxBatches;
    this.maxBytes = maxBytes;
    this.global = global;
  }

  /** Waits until this stream may read another batch, or has failed. */
  synchronized void awaitRoom() throws InterruptedException {
    while (failure == null && (batches >= maxBatches || bytes >= maxBytes)) {
      wait();
    }
  }

  /** {@code stream.next()}, interruptible by {@link #fail}. */
  boolean next(FlightStream stream) throws InterruptedException {
    enterBlocking();
    try {
      return stream.next();
    } finally {
      leaveBlocking();
    }
  }

  /** Accounts a batch of {@code size} bytes about to be submitted. */
  void reserve(long size) throws InterruptedException {
    if (size > maxBytes) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "batch of %d bytes exceeds the per-stream limit of %d bytes: send smaller batches",
          size, maxBytes));
    }
    enterBlocking();
    try {
      global.acquire(size);
    } finally {
      leaveBlocking();
    }
    synchronized (this) {
      batches++;
      bytes += size;
    }
  }

  /** A submitted batch is settled (acknowledged or failed). */
  void settled(long size) {
    global.release(size);
    synchronized (this) {
      batches--;
      bytes -= size;
      notifyAll();
    }
  }

  /** Records the first failure and wakes the reader. */
  synchronized void fail(Throwable error) {
    if (failure == null) {
      failure = error;
      if (blockedReader != null) {
        blockedReader.interrupt();
      }
    }
    notifyAll();
  }

  synchronized Throwable failure() {
    return failure;
  }

  /** Waits, ignoring interrupts, until every submitted batch is settled. */
  synchronized void awaitSettled() {
    boolean interrupted = false;
    while (batches > 0) {
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void enterBlocking() throws InterruptedException {
    synchronized (this) {
      if (failure != null) {
        throw new InterruptedException("stream failed");
      }
      blockedReader = Thread.currentThread();
    }
  }

  private void leaveBlocking() {
    synchronized (this) {
      blockedReader = null;
      if (failure != null) {
        // Our own interrupt may be pending: it must not leak into the server's thread pool.
        Thread.interrupted();
      }
    }
  }
}

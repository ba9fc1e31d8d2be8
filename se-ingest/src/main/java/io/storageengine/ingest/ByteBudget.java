package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;

/** The global budget of unacknowledged bytes shared by every stream. */
final class ByteBudget {
  private final long capacity;
  private long used;

  ByteBudget(long capacity) {
    this.capacity = capacity;
  }

  /** Blocks until {@code bytes} fit; RESOURCE_EXHAUSTED if they never can. */
  synchronized void acquire(long bytes) throws InterruptedException {
    if (bytes > capacity) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "batch of %d bytes exceeds the server's in-flight budget of %d bytes: send smaller "
              + "batches", bytes, capacity));
    }
    while (used + bytes > capacity) {
      wait();
    }
    used += bytes;
  }

  synchronized void release(long bytes) {
    used -= bytes;
    notifyAll();
  }

  synchronized long used() {
    return used;
  }
}

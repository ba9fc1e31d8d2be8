package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The global budget of unacknowledged bytes shared by every stream. A stream (read without a
 * thread of its own) takes room or queues for it ({@link #acquireOrQueue}) and is granted room,
 * in arrival order, by whoever releases enough.
 */
final class ByteBudget {
  private final long capacity;
  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
  private long used;

  private record Waiter(long bytes, Runnable granted) {}

  ByteBudget(long capacity) {
    this.capacity = capacity;
  }

  /**
   * Takes {@code bytes} now and returns true, or queues and returns false: {@code granted} then
   * runs, on the thread of a later {@link #release}, once the bytes were taken for it (unless
   * {@link #cancel}led first). RESOURCE_EXHAUSTED if they never fit.
   */
  boolean acquireOrQueue(long bytes, Runnable granted) {
    checkFits(bytes);
    synchronized (this) {
      if (waiters.isEmpty() && used + bytes <= capacity) {
        used += bytes;
        return true;
      }
      waiters.add(new Waiter(bytes, granted));
      return false;
    }
  }

  /** Removes a queued {@code granted}; false if it was granted already (or never queued). */
  synchronized boolean cancel(Runnable granted) {
    for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
      if (it.next().granted() == granted) {
        it.remove();
        return true;
      }
    }
    return false;
  }

  /** Returns {@code bytes}; runs the queued streams that fit now, outside the lock. */
  void release(long bytes) {
    List<Runnable> granted = new ArrayList<>();
    synchronized (this) {
      used -= bytes;
      while (!waiters.isEmpty() && used + waiters.peek().bytes() <= capacity) {
        Waiter next = waiters.poll();
        used += next.bytes();
        granted.add(next.granted());
      }
    }
    granted.forEach(Runnable::run);
  }

  synchronized long used() {
    return used;
  }

  /** Streams queued for room. */
  synchronized int queued() {
    return waiters.size();
  }

  private void checkFits(long bytes) {
    if (bytes > capacity) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "batch of %d bytes exceeds the server's in-flight budget of %d bytes: send smaller "
              + "batches", bytes, capacity));
    }
  }
}

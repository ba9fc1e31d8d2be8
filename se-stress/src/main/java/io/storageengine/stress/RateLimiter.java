package io.storageengine.stress;

/** Paces rows to a total rate shared by every producer; a rate of 0 means no limit. */
final class RateLimiter {
  private final double nanosPerRow;
  private long next = System.nanoTime();

  RateLimiter(long rowsPerSecond) {
    this.nanosPerRow = rowsPerSecond <= 0 ? 0 : 1e9 / rowsPerSecond;
  }

  /** Waits until {@code rows} more rows may be sent. */
  void acquire(int rows) throws InterruptedException {
    if (nanosPerRow == 0) {
      return;
    }
    long slot;
    synchronized (this) {
      long now = System.nanoTime();
      // Never bank more than a second of unused rate: a pause is not made up with a burst.
      slot = Math.max(next, now - 1_000_000_000L);
      next = slot + (long) (rows * nanosPerRow);
    }
    long wait = slot - System.nanoTime();
    if (wait > 0) {
      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
    }
  }
}

package io.storageengine.query;

import io.storageengine.wal.WalSegment;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.LongFunction;

/**
 * The WAL segments {@code first .. last} of a tail, each produced by {@code read} when the
 * iteration reaches it, so that whoever stages them holds one at a time, not the whole range.
 * Iterable once: {@code read} may carry state that must see each segment once, in order (a
 * producer dedup pass); a second iteration fails.
 */
final class SegmentRange implements Iterable<WalSegment> {
  private final long first;
  private final long last;
  private final LongFunction<WalSegment> read;
  private long next;
  private boolean started;

  SegmentRange(long first, long last, LongFunction<WalSegment> read) {
    this.first = first;
    this.last = last;
    this.read = read;
    this.next = first;
  }

  /** Whether every segment of the range was read. */
  boolean consumed() {
    return next > last;
  }

  @Override
  public Iterator<WalSegment> iterator() {
    if (started) {
      throw new IllegalStateException("segments " + first + ".." + last + " are read once");
    }
    started = true;
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return next <= last;
      }

      @Override
      public WalSegment next() {
        if (next > last) {
          throw new NoSuchElementException();
        }
        WalSegment segment = read.apply(next);
        next++;
        return segment;
      }
    };
  }
}

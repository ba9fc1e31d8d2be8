package io.storageengine.query;

import io.storageengine.wal.WalSegment;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.LongFunction;

/**
 * The WAL segments {@code first .. last} of a tail, each produced by {@code read} when the
 * iteration reaches it, so that whoever stages them holds one at a time, not the whole range.
 * With a byte budget the iteration ends early, after the segment whose frames bring what was read
 * to the budget (at least one segment is read): {@link #through} tells where it ended. Iterable
 * once: {@code read} may carry state that must see each segment once, in order (a producer dedup
 * pass); a second iteration fails.
 */
final class SegmentRange implements Iterable<WalSegment> {
  private final long first;
  private final long last;
  private final long maxBytes;
  private final LongFunction<WalSegment> read;
  private long next;
  private long bytes;
  private boolean started;

  SegmentRange(long first, long last, LongFunction<WalSegment> read) {
    this(first, last, Long.MAX_VALUE, read);
  }

  /** Segments {@code first ..} at most {@code last}, ending after {@code maxBytes} of frames are read. */
  SegmentRange(long first, long last, long maxBytes, LongFunction<WalSegment> read) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("a byte budget must be positive: " + maxBytes);
    }
    this.first = first;
    this.last = last;
    this.maxBytes = maxBytes;
    this.read = read;
    this.next = first;
  }

  /** The last segment read ({@code first - 1}: none). */
  long through() {
    return next - 1;
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
        return next <= last && bytes < maxBytes;
      }

      @Override
      public WalSegment next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        WalSegment segment = read.apply(next);
        next++;
        bytes += segment.frameBytes();
        return segment;
      }
    };
  }
}

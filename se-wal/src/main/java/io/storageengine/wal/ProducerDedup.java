package io.storageengine.wal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * The read side of idempotent ingestion: drops from WAL segments every frame whose (producer,
 * sequence) an earlier frame of the WAL carries ({@link ProducerWindows}), so a batch that two
 * writers made durable (a resend that raced its first attempt, two streams of one producer on
 * two servers) lands in the table, and in a query of the WAL tail, once. Reconciliation and the
 * query path both read segments through it, so they agree frame by frame: reconciliation a
 * pass's segments at once ({@link #withoutDuplicates}), the query path segment by segment in one
 * {@link Pass} over the tail.
 */
public final class ProducerDedup {
  private ProducerDedup() {}

  /**
   * {@code segments} (ascending, contiguous) with the duplicate frames removed; a segment may
   * be left with no frame. Costs nothing when no frame carries a producer; else one read of
   * {@code producers.json} and of the segments between it and the first of {@code segments}.
   */
  public static List<WalSegment> withoutDuplicates(WalLog wal, TableWal table,
      List<WalSegment> segments, Duration retention) {
    if (!hasProducers(segments)) {
      return segments;
    }
    ProducerWindows windows = wal.producerWindows(table, segments.get(0).seq(), retention);
    List<WalSegment> kept = new ArrayList<>(segments.size());
    for (WalSegment segment : segments) {
      List<WalFrame> frames = new ArrayList<>(segment.frames().size());
      for (int i = 0; i < segment.frames().size(); i++) {
        WalFrame frame = segment.frames().get(i);
        if (frame.producer() == null
            || windows.admit(frame.producer(), segment.seq(), i, retention)) {
          frames.add(frame);
        }
      }
      kept.add(frames.size() == segment.frames().size() ? segment : new WalSegment(segment.seq(),
          segment.writerId(), segment.writerNonce(), segment.tableUuid(), List.copyOf(frames)));
    }
    return kept;
  }

  /**
   * Where a {@link Pass} stands, to resume it later (a query's tail kept between queries): the
   * windows through {@code next - 1} (null: not read, no segment of the run from {@code
   * runStart} to {@code next - 1} carries a producer), and the next seq. Immutable: the windows
   * are a copy no pass changes.
   */
  public record State(ProducerWindows windows, long runStart, long next) {
    /** A pass that has seen nothing. */
    public static final State START = new State(null, 0, 0);
  }

  /**
   * One de-duplication pass over ascending segments of one table, giving each segment what
   * {@link #withoutDuplicates} gives it in the list of all segments from the pass's first, at a
   * cost linear in the segments: {@code producers.json} and the segments between it and the
   * pass are read once, when the first segment with a producer frame comes (never when none
   * has one), and a segment the caller skips is read through {@code segments} only when the
   * windows are being kept (a producer frame came before it). Not thread-safe.
   */
  public static final class Pass {
    private final WalLog wal;
    private final TableWal table;
    private final Duration retention;
    private final LongFunction<WalSegment> segments;
    /** Through {@code next - 1}; null while no segment of the pass had a producer frame. */
    private ProducerWindows windows;
    /** While {@code windows} is null: segments {@code runStart .. next - 1} carry no producer. */
    private long runStart;
    private long next;

    /**
     * A pass resuming from {@code from} ({@link State#START}: a new one); {@code segments}
     * reads a segment the caller skips (present: a skipped segment of the tail exists).
     */
    public Pass(WalLog wal, TableWal table, Duration retention, State from, LongFunction<WalSegment> segments) {
      this.wal = wal;
      this.table = table;
      this.retention = retention;
      this.segments = segments;
      this.windows = from.windows() == null ? null : from.windows().copy();
      this.runStart = from.runStart();
      this.next = from.next();
    }

    /**
     * {@code segment} (after every segment given before) with the frames removed whose (producer,
     * sequence) an earlier frame of the WAL carries; the segment itself when none is removed.
     */
    public WalSegment withoutDuplicates(WalSegment segment) {
      long seq = segment.seq();
      if (next != 0 && seq < next) {
        throw new IllegalArgumentException("segment " + seq + " comes after " + (next - 1) + " in a dedup pass");
      }
      if (windows == null) {
        if (seq != next) {
          // Skipped segments may carry producers: the run without them starts here.
          runStart = seq;
        }
        next = seq + 1;
        if (!hasProducers(List.of(segment))) {
          return segment;
        }
        // Segments runStart .. seq - 1 carry no producer: nothing of theirs to fold.
        windows = wal.producerWindows(table, runStart, retention);
      } else {
        for (long skipped = next; skipped < seq; skipped++) {
          windows.fold(segments.apply(skipped), retention);
        }
        next = seq + 1;
      }
      List<WalFrame> frames = new ArrayList<>(segment.frames().size());
      for (int i = 0; i < segment.frames().size(); i++) {
        WalFrame frame = segment.frames().get(i);
        if (frame.producer() == null || windows.admit(frame.producer(), seq, i, retention)) {
          frames.add(frame);
        }
      }
      return frames.size() == segment.frames().size() ? segment : new WalSegment(seq, segment.writerId(),
          segment.writerNonce(), segment.tableUuid(), List.copyOf(frames));
    }

    /** Where the pass stands now, to resume it with {@link Pass#Pass}. */
    public State state() {
      return new State(windows == null ? null : windows.copy(), runStart, next);
    }
  }

  /** True when a frame of {@code segments} carries a producer. */
  public static boolean hasProducers(List<WalSegment> segments) {
    return segments.stream().anyMatch(s -> s.frames().stream().anyMatch(f -> f.producer() != null));
  }
}

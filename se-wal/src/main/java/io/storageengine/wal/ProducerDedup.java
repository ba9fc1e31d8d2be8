package io.storageengine.wal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The read side of idempotent ingestion: drops from WAL segments every frame whose (producer,
 * sequence) an earlier frame of the WAL carries ({@link ProducerWindows}), so a batch that two
 * writers made durable (a resend that raced its first attempt, two streams of one producer on
 * two servers) lands in the table, and in a query of the WAL tail, once. Reconciliation and the
 * query path both read segments through it, so they agree frame by frame.
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

  /** True when a frame of {@code segments} carries a producer. */
  public static boolean hasProducers(List<WalSegment> segments) {
    return segments.stream().anyMatch(s -> s.frames().stream().anyMatch(f -> f.producer() != null));
  }
}

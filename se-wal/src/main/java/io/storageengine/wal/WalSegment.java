package io.storageengine.wal;

import java.util.List;
import java.util.UUID;

/**
 * An immutable WAL segment: its sequence number, the header written by its writer, and its
 * frames in arrival order. Arrival order across the log is (seq, frame index, row index).
 */
public record WalSegment(
    long seq, String writerId, String writerNonce, UUID tableUuid, List<WalFrame> frames) {

  public long rowCount() {
    return frames.stream().mapToLong(WalFrame::rowCount).sum();
  }

  /** Bytes of the frames' Arrow IPC streams: what a reader holds in memory for the segment's rows. */
  public long frameBytes() {
    long bytes = 0;
    for (WalFrame frame : frames) {
      bytes += frame.arrowIpc().length;
    }
    return bytes;
  }
}

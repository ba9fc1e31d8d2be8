package io.storageengine.stress.bench;

import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link WalWriter} that forwards to another and records how long each append (one group
 * commit: encode, create the segment durably, read {@code state.json}) took and how many Arrow
 * IPC bytes it held. For the benchmark's report only.
 */
final class TimedWalWriter implements WalWriter {
  private final WalWriter delegate;
  private final List<long[]> appends = new ArrayList<>();

  TimedWalWriter(WalWriter delegate) {
    this.delegate = delegate;
  }

  @Override
  public long append(TableWal table, List<WalFrame> frames) {
    long bytes = 0;
    for (WalFrame frame : frames) {
      bytes += frame.arrowIpc().length;
    }
    long start = System.nanoTime();
    long seq = delegate.append(table, frames);
    long elapsed = System.nanoTime() - start;
    synchronized (appends) {
      appends.add(new long[] {elapsed, bytes});
    }
    return seq;
  }

  @Override
  public void registerTableName(TableWal table, TableName name) {
    delegate.registerTableName(table, name);
  }

  /** Nanoseconds of every append so far, sorted. */
  long[] sortedNanos() {
    synchronized (appends) {
      return appends.stream().mapToLong(a -> a[0]).sorted().toArray();
    }
  }

  /** Mean Arrow IPC bytes per segment. */
  long meanBytes() {
    synchronized (appends) {
      return appends.isEmpty() ? 0
          : appends.stream().mapToLong(a -> a[1]).sum() / appends.size();
    }
  }
}

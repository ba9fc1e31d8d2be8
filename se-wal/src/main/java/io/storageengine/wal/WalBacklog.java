package io.storageengine.wal;

import io.storageengine.common.telemetry.Metrics;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * This process's view of each table's unpublished WAL, for the {@code se.wal.backlog.*} gauges:
 * refreshed whenever the process appends a segment (it reads {@code published_seq} then anyway)
 * or publishes one. Segment count is the distance from {@code published_seq} to the newest
 * segment seen; bytes are those of this process's own unpublished segments (the sizes of other
 * writers' segments are not known without listing).
 *
 * <p>Also feeds the freshness histogram: when this process publishes a range that holds its own
 * segments, each one's time from append (its batches' acknowledgement) to publication (right
 * after the Iceberg commit) is recorded. Segments published by another process are not timed.
 */
final class WalBacklog {
  private final ConcurrentMap<TableWal, Table> tables = new ConcurrentHashMap<>();
  private final Metrics metrics;

  /** Reports to {@code metrics}. */
  WalBacklog(Metrics metrics) {
    this.metrics = metrics;
  }

  private static final class Table {
    volatile String label;
    volatile long newestSeq;
    /** This process's unpublished segments: seq to (bytes, append time). */
    final ConcurrentSkipListMap<Long, long[]> ownSegments = new ConcurrentSkipListMap<>();

    Table(String label) {
      this.label = label;
    }
  }

  /** Uses {@code name} as the table's metric label from now on (its UUID until then). */
  void named(TableWal wal, TableName name) {
    table(wal).label = Metrics.tableLabel(name.namespace(), name.name());
  }

  void appended(TableWal wal, long seq, long bytes, long publishedSeq) {
    Table table = table(wal);
    table.ownSegments.put(seq, new long[] {bytes, System.nanoTime()});
    synchronized (table) {
      table.newestSeq = Math.max(table.newestSeq, seq);
    }
    table.ownSegments.headMap(publishedSeq, true).clear();
    report(wal, table, publishedSeq);
  }

  void published(TableWal wal, long publishedSeq) {
    Table table = tables.get(wal);
    if (table == null) {
      return;
    }
    long now = System.nanoTime();
    var done = table.ownSegments.headMap(publishedSeq, true);
    for (long[] segment : done.values()) {
      metrics.freshness(Duration.ofNanos(now - segment[1]));
    }
    done.clear();
    report(wal, table, publishedSeq);
  }

  /** The table's WAL was deleted (table dropped): its backlog is reported as empty and forgotten. */
  void deleted(TableWal wal) {
    Table table = tables.remove(wal);
    if (table != null) {
      metrics.walBacklog(wal.catalogId(), table.label, 0, 0);
    }
  }

  private Table table(TableWal wal) {
    return tables.computeIfAbsent(wal, w -> new Table(w.tableUuid().toString()));
  }

  private void report(TableWal wal, Table table, long publishedSeq) {
    long bytes = 0;
    for (long[] segment : table.ownSegments.values()) {
      bytes += segment[0];
    }
    metrics.walBacklog(wal.catalogId(), table.label,
        Math.max(0, table.newestSeq - publishedSeq), bytes);
  }
}

package io.storageengine.wal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Read side and bookkeeping of the WAL, used by reconciliation and maintenance. */
public interface WalLog {
  /** The table's state; {@link WalState#EMPTY} when it has never been written. */
  WalState state(TableWal table);

  /** Sequence numbers of the segments present with seq {@code > afterSeq}, ascending. */
  List<Long> segmentsAfter(TableWal table, long afterSeq);

  /**
   * A segment present in a table's log: its sequence number and when the object store wrote it
   * (the store's clock, to its precision; null when the store does not say).
   */
  record Listed(long seq, Instant writtenAt) {}

  /** The segments present with seq {@code > afterSeq}, ascending, with their write times. */
  default List<Listed> listAfter(TableWal table, long afterSeq) {
    return segmentsAfter(table, afterSeq).stream().map(seq -> new Listed(seq, null)).toList();
  }

  /** Reads and checks one segment (CRC, header); empty if it does not exist. */
  Optional<WalSegment> read(TableWal table, long seq);

  /**
   * Whether segment {@code seq} exists, without reading it (a reader that only needs to know
   * whether something arrived); by default it is read.
   */
  default boolean exists(TableWal table, long seq) {
    return read(table, seq).isPresent();
  }

  /** Raises {@code published_seq} to {@code seq} by CAS; never lowers it. */
  void advancePublished(TableWal table, long seq);

  /**
   * Raises {@code gc_seq} to {@code min(seq, published_seq)} by CAS first, then deletes the
   * segments at or below it. Returns the number of segments deleted.
   */
  default int collectGarbage(TableWal table, long seq) {
    return collectGarbage(table, seq, ProducerWindows.DEFAULT_RETENTION);
  }

  /**
   * As {@link #collectGarbage(TableWal, long)}, and before {@code gc_seq} is raised the
   * table's {@code producers.json} (if it has one) is advanced over every segment about to be
   * deleted, forgetting producers idle for longer than {@code producerRetention}: a resend of
   * a sequence whose segment is gone is still recognised.
   */
  int collectGarbage(TableWal table, long seq, Duration producerRetention);

  /**
   * The table's producer windows as of every segment before {@code beforeSeq}: the stored
   * {@code producers.json} (empty when the table never had a producer) with the segments between
   * its {@code through_seq} and {@code beforeSeq} folded in. The result may also hold segments
   * at or after {@code beforeSeq}; {@link ProducerWindows#admit} answers right for them.
   */
  ProducerWindows producerWindows(TableWal table, long beforeSeq, Duration retention);

  /**
   * Advances {@code producers.json} by CAS over the segments up to {@code throughSeq} (those in
   * {@code known} are not read again), expiring producers idle for longer than
   * {@code retention} as of {@code nowMillis}. No-op when the table never had a producer or the
   * file is that far already. Called after a reconcile pass published segments with producers.
   */
  void advanceProducerWindows(TableWal table, long throughSeq, Duration retention,
      long nowMillis, List<WalSegment> known);

  /**
   * Deletes everything the table has on cluster storage (segments, state, name, tombstones and
   * any other file under its directory, and its pending marker), {@code state.json} last so that an interrupted deletion
   * is still listed by {@link #tables} and finished by a later call. Only for a table that no
   * longer exists in its catalog: its segments are never published. Returns the keys deleted.
   */
  int deleteTable(TableWal table);

  /** The last name recorded by {@link WalWriter#registerTableName}, if any. */
  Optional<TableName> tableName(TableWal table);

  /**
   * Every table of {@code catalogId} (or of all catalogs when null) that has a WAL. Costs a
   * listing per table: a periodic full sweep, not every tick (see {@link #pendingTables}).
   */
  List<TableWal> tables(String catalogId);

  /**
   * The tables of {@code catalogId} (or of all catalogs when null) that have a pending marker
   * ({@link TableWal#pendingKey}), found with one listing per tenant, never per table.
   *
   * <p>Every table with a segment after its {@code published_seq} whose writer finished the
   * append has a marker: {@link WalWriter#append} puts it after the segment and before it
   * returns. The exceptions are an append whose process crashed (or whose marker put failed)
   * between the segment and the marker, and a failed re-put in {@link #clearPending}; a periodic
   * full sweep over {@link #tables} finds those and puts the marker with {@link #markPending}.
   * A marker may also be stale (nothing pending): a caller finding so calls {@link
   * #clearPending}.
   */
  List<TableWal> pendingTables(String catalogId);

  /** Puts the table's pending marker (a tiny object; idempotent). */
  void markPending(TableWal table);

  /**
   * Deletes the table's pending marker, then lists the segments after its {@code published_seq}
   * and, if there are any, puts the marker again. Returns true when the marker was put again.
   * Call after a pass over the table (committed, or found nothing to do).
   *
   * <p>Never loses a marker a writer needs: a writer puts its segment, then its marker. If its
   * marker put precedes the delete, its segment precedes the listing, which sees it (unless it
   * is published, and then nothing is pending); if its marker put follows the delete, the marker
   * stays. A failure after the delete (storage unavailable) may leave a table with pending
   * segments and no marker, which the full sweep heals.
   */
  boolean clearPending(TableWal table);
}

package io.storageengine.wal;

import java.util.List;
import java.util.Optional;

/** Read side and bookkeeping of the WAL, used by reconciliation and maintenance. */
public interface WalLog {
  /** The table's state; {@link WalState#EMPTY} when it has never been written. */
  WalState state(TableWal table);

  /** Sequence numbers of the segments present with seq {@code > afterSeq}, ascending. */
  List<Long> segmentsAfter(TableWal table, long afterSeq);

  /** Reads and checks one segment (CRC, header); empty if it does not exist. */
  Optional<WalSegment> read(TableWal table, long seq);

  /** Raises {@code published_seq} to {@code seq} by CAS; never lowers it. */
  void advancePublished(TableWal table, long seq);

  /**
   * Raises {@code gc_seq} to {@code min(seq, published_seq)} by CAS first, then deletes the
   * segments at or below it. Returns the number of segments deleted.
   */
  int collectGarbage(TableWal table, long seq);

  /**
   * Deletes everything the table has on cluster storage (segments, state, name, tombstones and
   * any other file under its directory), {@code state.json} last so that an interrupted deletion
   * is still listed by {@link #tables} and finished by a later call. Only for a table that no
   * longer exists in its catalog: its segments are never published. Returns the keys deleted.
   */
  int deleteTable(TableWal table);

  /** The last name recorded by {@link WalWriter#registerTableName}, if any. */
  Optional<TableName> tableName(TableWal table);

  /** Every table of {@code catalogId} (or of all catalogs when null) that has a WAL. */
  List<TableWal> tables(String catalogId);
}

package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;

/**
 * What one pass over one table did.
 *
 * @param table the WAL reconciled
 * @param tableName the table's current catalog name ({@code ns.table}), or null when unknown
 * @param outcome what happened
 * @param fromSeq first WAL seq of the committed range (0 when nothing was committed)
 * @param toSeq last WAL seq of the committed range, or the table's high-water mark
 * @param walRows rows read from the WAL range
 * @param rowsWritten rows in the new data files
 * @param rowsRemoved row positions newly marked deleted by deletion vectors
 * @param dataFiles data files added
 * @param deleteVectors deletion vectors added (one per touched data file)
 * @param attempts passes started (more than one after commit conflicts)
 * @param message human-readable detail (dropped table, failure reason)
 */
public record ReconcileResult(
    TableWal table,
    String tableName,
    Outcome outcome,
    long fromSeq,
    long toSeq,
    long walRows,
    long rowsWritten,
    long rowsRemoved,
    int dataFiles,
    int deleteVectors,
    int attempts,
    String message) {

  /** How a pass ended. */
  public enum Outcome {
    /** A snapshot covering {@code fromSeq..toSeq} was committed (by this pass). */
    COMMITTED,
    /** Nothing after the table's high-water mark: nothing to do (published_seq advanced). */
    UP_TO_DATE,
    /** The table no longer exists in its catalog; its WAL was skipped. */
    TABLE_DROPPED,
    /** The pass failed; nothing was published, the WAL keeps the data. */
    FAILED
  }
}

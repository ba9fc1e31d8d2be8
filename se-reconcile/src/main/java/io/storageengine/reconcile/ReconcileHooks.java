package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;

/**
 * Points in a pass where tests inject failures (the reconciler's equivalent of a fault store).
 * Each hook may throw to simulate a crash at that point. The default does nothing.
 */
public interface ReconcileHooks {
  ReconcileHooks NONE = new ReconcileHooks() {};

  /** Data files, deletion vectors and tombstones are written; the commit has not started. */
  default void beforeCommit(TableWal table, long fromSeq, long toSeq) {}

  /** The snapshot is committed; {@code published_seq} has not been advanced yet. */
  default void afterCommit(TableWal table, long fromSeq, long toSeq) {}
}

package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;
import java.util.function.Supplier;

/**
 * Keeps the reconcile passes of one table out of a piece of work. Table maintenance runs its
 * compaction through it: an entity table under steady updates gets new deletion vectors on most
 * of its files with every pass, so a compaction racing those commits conflicts every time and
 * files pile up; run while no pass of the table commits, it cannot conflict.
 */
public interface TableGate {
  /** No gate: the work runs at once (another process may still commit meanwhile). */
  TableGate NONE = new TableGate() {
    @Override
    public <T> T exclusive(TableWal table, Supplier<T> work) {
      return work.get();
    }
  };

  /**
   * Runs {@code work} on the calling thread while no pass over {@code table} runs here: waits for
   * a running pass to end and holds new ones back until {@code work} returns (a pass requested
   * meanwhile runs right after).
   */
  <T> T exclusive(TableWal table, Supplier<T> work);

  /**
   * Whether the passes here would take in the rows of files a compaction of {@code table} writes,
   * {@code rows} in all ({@link #rewritten}): they keep a key index of it, with room for them. A
   * compaction reads its new files' rows for them only then.
   */
  default boolean wantsRewrittenRows(TableWal table, long rows) {
    return false;
  }

  /**
   * A compaction of {@code table} committed files whose rows are {@code rows}: the key index of
   * the passes here takes them from memory when it is brought to those files, instead of reading
   * them back. Called within {@link #exclusive}, right after the commit.
   */
  default void rewritten(TableWal table, RewrittenRows rows) {
  }
}
